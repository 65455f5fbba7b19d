"""How hosts name what upstream servers offer besides tools, and how a name reads back.

- A prompt is offered as ``server__prompt``, the alias a tool of that name would have
  (``relay/stages/alias.py``: unsafe characters become ``_``, a clash gets a hash);
  two prompts that would share one are a collision, refused at start (``offered.collisions``).
- A resource URI, a template's ``uriTemplate`` and the URI a host reads are the upstream
  text behind a prefix that names the server: ``toolrelay://<server>/`` (the server's name
  percent-encoded, so it holds no ``/``), e.g. ``toolrelay://everything/demo://resource/1``.
  The upstream URI is kept whole after the prefix, so a template's ``{variables}`` stay
  where they were, a URI expanded from the offered template is the prefix plus the URI
  the upstream template expands to, and the prefix is taken off again exactly: no two
  servers' prefixes begin alike, and no URI maps to two pairs.
- With ``keep_names`` (``toolrelay proxy --keep-names``, one server only) every name is
  the upstream's own: the proxy is then a transparent front for that one server.

Pure: no I/O. The offer recorded at start (``proxy_offer``) holds each server's prefix and
each prompt alias, so ``verify`` reads names back by the same rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import quote

from ..relay.stages.alias import assign_aliases

__all__ = ["URI_SCHEME", "HostNames", "uri_prefix"]

URI_SCHEME: Final = "toolrelay://"


def uri_prefix(server: str) -> str:
    """What a host sees before each URI of ``server``."""
    return f"{URI_SCHEME}{quote(server, safe='')}/"


@dataclass(slots=True)
class HostNames:
    """The names of one offer: prompt aliases and URI prefixes, both ways."""

    servers: list[str]
    keep_names: bool = False
    prompts: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Host prompt name → (server, the upstream's prompt name)."""

    def prefix(self, server: str) -> str:
        return "" if self.keep_names else uri_prefix(server)

    def host_uri(self, server: str, uri: str) -> str:
        return self.prefix(server) + uri

    def upstream_uri(self, host_uri: str) -> tuple[str, str] | None:
        """The server and upstream URI a host's URI names (None: none of ours)."""
        if self.keep_names:
            return (self.servers[0], host_uri) if self.servers else None
        for server in self.servers:
            prefix = uri_prefix(server)
            if host_uri.startswith(prefix):
                return server, host_uri[len(prefix):]
        return None

    def set_prompts(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Name every (server, prompt) pair listed (all servers' at once)."""
        listed = sorted(set(pairs))
        if self.keep_names:
            self.prompts = {prompt: (server, prompt) for server, prompt in listed}
        else:
            self.prompts = {alias: pair for pair, alias in assign_aliases(listed).items()}

    def prompt_alias(self, server: str, prompt: str) -> str:
        found = next((alias for alias, pair in self.prompts.items() if pair == (server, prompt)), None)
        if found is not None:
            return found
        return prompt if self.keep_names else assign_aliases([(server, prompt)])[(server, prompt)]

    def to_record(self) -> dict[str, object]:
        """What ``proxy_offer`` records of these names (``verify`` maps by it)."""
        return {"uri_prefixes": {server: self.prefix(server) for server in self.servers},
                "prompts": {alias: list(pair) for alias, pair in sorted(self.prompts.items())}}
