"""Stage 4, route: the model's tool name (an alias) → which server, which original tool.

The alias table built from the catalog is the only router: a name the model sends is
looked up here and nowhere else. A route also carries the tool's rule (its original
``inputSchema``) and annotations, because validation and consent are decided per route.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Route", "Router"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Route:
    """Where one alias leads."""

    alias: str
    server: str
    tool: str
    """The original MCP tool name, sent unchanged in ``tools/call``."""
    rule: dict[str, Any]
    """The tool's original ``inputSchema``; arguments are validated against this."""
    description: str = ""
    annotations: dict[str, Any] = field(default_factory=dict)
    output_schema: Any = None
    """The tool's ``outputSchema`` (None: it declares none); a result must keep it."""
    strict: bool = False
    """Whether the model was offered the strict conversion (nulls are then stripped)."""
    reads_resources: bool = False
    """The ``--expose-resources`` reader: a call sends ``resources/read``, not ``tools/call``."""
    structured: bool = False
    """Declared with ``output_schema``: a valid ``structuredContent`` is what the model reads."""
    namespace: str | None = None
    """The namespace the model names it in (``--declare namespaces``); None: flat."""
    digest: str | None = None
    """The digest of the tool's definition as offered (``protocol/tool_digest.py``; None: a reader)."""

    @property
    def read_only(self) -> bool:
        """The server says the tool only reads (a hint; consent relies on it only when true)."""
        return self.annotations.get("readOnlyHint") is True


class Router:
    """alias → Route; nothing else decides where a call goes."""

    def __init__(self, routes: Iterable[Route] = ()) -> None:
        self._routes: dict[str, Route] = {}
        for route in routes:
            if route.alias in self._routes:
                raise ValueError(f"alias {route.alias!r} assigned twice")
            self._routes[route.alias] = route

    def resolve(self, alias: str) -> Route | None:
        return self._routes.get(alias)

    @property
    def aliases(self) -> list[str]:
        return list(self._routes)

    def __iter__(self) -> Iterator[Route]:
        return iter(self._routes.values())

    def __len__(self) -> int:
        return len(self._routes)

    def table(self) -> dict[str, list[str]]:
        """alias → [server, tool], as recorded in transcripts."""
        return {alias: [r.server, r.tool] for alias, r in self._routes.items()}

    def digests(self) -> dict[str, str]:
        """alias → the digest of its tool's definition as offered, as recorded in transcripts."""
        return {alias: r.digest for alias, r in self._routes.items() if r.digest is not None}
