"""Credentials never reach a record or a message: one redaction rule for all of toolrelay.

Config env and header values, ``${env:…}`` / ``${input:…}`` answers, API keys and tokens
are secrets. Where text that could carry one is shown or recorded (command lines, URLs,
server stderr, notices), every secret value is replaced by ``[redacted]``. Values shorter
than eight characters ("info", "3000", "true") are rarely secrets and would blank out
ordinary text, so they are left alone.

A URL (the model's endpoint, an MCP server's) is shown by ``redact_url``: without user
info and without query parameters named like secrets (``api_key``, ``token``, ``sig``...),
whatever their length; ``url_secrets`` gives those values, so text quoting them is
redacted too.

Secrets learned while running (OAuth access and refresh tokens, a registered client's
secret) are not in any config: ``remember_secret`` adds them to the process's own list,
which every ``redact`` call uses besides the secrets it is given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "is_secret_name", "redact", "redact_url", "redact_wire_bytes",
           "remember_secret", "remembered_secrets", "url_secrets", "worth_redacting"]

REDACTED: Final = "[redacted]"
MIN_SECRET_LENGTH: Final = 8
_SECRET_NAMES: Final = frozenset({"key", "code", "sig", "pass", "pwd"})
"""Parameter names that are secrets when they are the whole name (``code`` is OAuth's)."""
_SECRET_WORDS: Final = re.compile(r"key|token|secret|passw|auth|credential|signature|session")
"""Parts of a name that make it a secret's (``apiKey``, ``access_token``, ``client_secret``)."""


_QUOTED_BYTES: Final = r"b'(?:[^'\\]|\\.)*'" + r'|b"(?:[^"\\]|\\.)*"'
_WIRE_BYTES: Final = re.compile(rf"\bbytearray\((?:{_QUOTED_BYTES})\)|\b(?:{_QUOTED_BYTES})")
"""A bytes (or bytearray) literal as ``repr`` writes it: how h11 quotes a header value or a
line of the wire."""


_REMEMBERED: set[str] = set()
"""Secrets learned while running (``remember_secret``)."""


def worth_redacting(value: str) -> bool:
    return len(value) >= MIN_SECRET_LENGTH


def remember_secret(value: str) -> None:
    """From now on, every ``redact`` in this process replaces ``value`` too (a token just
    received, a client secret just registered)."""
    if worth_redacting(value):
        _REMEMBERED.add(value)


def remembered_secrets() -> frozenset[str]:
    """The secrets ``remember_secret`` was given so far."""
    return frozenset(_REMEMBERED)


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value replaced by ``[redacted]`` (longest first, so a
    secret that contains another is replaced whole): the ones given, and the remembered ones."""
    for secret in sorted({*secrets, *_REMEMBERED}, key=len, reverse=True):
        if worth_redacting(secret) and secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_wire_bytes(text: str) -> str:
    """An HTTP library's error text with every quoted byte string redacted: h11 quotes the
    header value (``Illegal header value b'Bearer …'``) or the line it refuses, and an
    escaped value (``\\r\\n``) is no longer the secret ``redact`` looks for."""
    return _WIRE_BYTES.sub(REDACTED, text)


def is_secret_name(name: str) -> bool:
    """Whether a query parameter (or header) named ``name`` is taken to carry a secret."""
    bare = name.lower().replace("-", "").replace("_", "")
    return bare in _SECRET_NAMES or _SECRET_WORDS.search(bare) is not None


def redact_url(url: str) -> str:
    """``url`` without user info, secret-named query parameters or fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address is written in brackets
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = [(k, v) for k, v in pairs if not is_secret_name(k)]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), ""))


def url_secrets(url: str) -> frozenset[str]:
    """The secret values ``url`` carries (user info, secret-named parameters), as written in
    it and decoded, so that messages quoting them are redacted too."""
    parts = urlsplit(url)
    found = [value for name, value in parse_qsl(parts.query, keep_blank_values=True) if is_secret_name(name)]
    userinfo, at, _ = parts.netloc.rpartition("@")
    if at:
        found.extend(userinfo.split(":", 1))
    return frozenset(text for value in found for text in (value, unquote(value)) if text)
