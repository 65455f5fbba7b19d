"""Where the model lives: base URL, credentials, and the URL shown in records.

OpenAI and every local server (Ollama, vLLM, LM Studio, llama-server) take
``POST {base_url}/responses`` with ``Authorization: Bearer KEY`` (or no key at all).
Azure OpenAI takes the ``api-key`` header instead, at either
``https://RESOURCE.openai.azure.com/openai/v1/responses`` (the v1 API, no version) or
``https://RESOURCE.openai.azure.com/openai/responses?api-version=VERSION`` (dated
versions). The URL that toolrelay records and prints never carries a secret: user info
and query parameters named like secrets (``key``, ``api-key``, ``token``...) are removed
(``redaction.redact_url``, the rule for MCP server URLs too).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .._version import __version__
from ..errors import UsageError
from ..loopback import is_loopback
from ..redaction import redact_url

__all__ = ["DEFAULT_BASE_URL", "ModelEndpoint", "redact_url"]

DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
_OPENAI_HOST: Final = "api.openai.com"
_AZURE_HOSTS: Final = (".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com")

def _env(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


@dataclass(frozen=True, kw_only=True)
class ModelEndpoint:
    """A Responses endpoint: ``POST {base_url}/responses``.

    The derived URLs and flags are computed once (``cached_property``: the fields are frozen),
    not on every request."""

    base_url: str
    """e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1."""
    api_key: str | None = None
    azure_api_version: str | None = None
    """Azure OpenAI dated API version: sent as ``?api-version=``."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra request headers (never recorded)."""

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            shown = redact_url(self.base_url)
            raise UsageError(f"model URL must be an http:// or https:// URL, got {shown!r}")

    @classmethod
    def from_environment(cls, base_url: str | None, env: Mapping[str, str]) -> ModelEndpoint:
        """The endpoint from a ``--base-url`` (or None) and the environment.

        ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` as the openai SDK reads them; Azure when
        ``AZURE_OPENAI_ENDPOINT`` is set (or the URL is an Azure host): ``AZURE_OPENAI_API_KEY``
        (else ``OPENAI_API_KEY``) and ``OPENAI_API_VERSION``.
        """
        azure_endpoint = _env(env, "AZURE_OPENAI_ENDPOINT")
        version = _env(env, "OPENAI_API_VERSION")
        base = base_url or _env(env, "OPENAI_BASE_URL")
        if base is None and azure_endpoint is not None:
            base = azure_endpoint.rstrip("/") + ("/openai" if version else "/openai/v1")
        base = base or DEFAULT_BASE_URL
        if not _is_azure_host(base) and not (azure_endpoint and base.startswith(azure_endpoint.rstrip("/"))):
            return cls(base_url=base, api_key=_env(env, "OPENAI_API_KEY"))
        key = _env(env, "AZURE_OPENAI_API_KEY") or _env(env, "OPENAI_API_KEY")
        return cls(base_url=base, api_key=key, azure_api_version=version)

    @cached_property
    def is_azure(self) -> bool:
        return self.azure_api_version is not None or _is_azure_host(self.base_url)

    @cached_property
    def responses_url(self) -> str:
        """The exact URL posted to (it may carry query parameters of ``base_url``)."""
        parts = urlsplit(self.base_url)
        query = parse_qsl(parts.query, keep_blank_values=True)
        if self.azure_api_version is not None:
            query = [(k, v) for k, v in query if k != "api-version"]
            query.append(("api-version", self.azure_api_version))
        path = parts.path.rstrip("/") + "/responses"
        return urlunsplit((parts.scheme, parts.netloc, path, urlencode(query), ""))

    @cached_property
    def needs_key(self) -> bool:
        """A hosted endpoint (OpenAI, Azure) that answers every keyless request with 401."""
        host = (urlsplit(self.base_url).hostname or "").lower()
        return host == _OPENAI_HOST or self.is_azure

    def check_key(self) -> None:
        """Fail before any request when a hosted endpoint has no key (UsageError, exit 2)."""
        if self.needs_key and not self.api_key:
            variable = "AZURE_OPENAI_API_KEY (or OPENAI_API_KEY)" if self.is_azure else "OPENAI_API_KEY"
            raise UsageError(
                f"no API key for {self.shown_url}: set {variable}, or use --model offline "
                "(the built-in stand-in), or --base-url for a local server that needs no key"
            )

    @cached_property
    def shown_url(self) -> str:
        """The URL as recorded and printed: no secrets."""
        return redact_url(self.responses_url)

    @cached_property
    def sends_key_in_clear(self) -> bool:
        """An API key would travel over plain http to a host that is not this machine."""
        parts = urlsplit(self.base_url)
        return bool(self.api_key) and parts.scheme == "http" and not is_loopback(parts.hostname or "")

    def request_headers(self) -> dict[str, str]:
        """Headers of every request, credentials included (never recorded)."""
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": f"toolrelay/{__version__}"}
        if self.api_key:
            if self.is_azure:
                headers["api-key"] = self.api_key
            else:
                headers["Authorization"] = f"Bearer {self.api_key}"
        headers.update(self.headers)
        return headers


def _is_azure_host(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host.endswith(_AZURE_HOSTS)
