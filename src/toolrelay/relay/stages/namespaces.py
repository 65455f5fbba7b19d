"""Stage 1, declare (``--declare namespaces``): one Responses ``namespace`` tool per server.

A namespace is ``{"type": "namespace", "name", "description", "tools": [function tools]}``
(openai ``NamespaceToolParam``); the model's call names both (``function_call`` with
``namespace`` and ``name``). The namespace is the server's name and each tool keeps its
bare MCP name, both made API-safe by the alias rules (``alias.name_choices``), so the
pair is read back exactly. Inside toolrelay such a tool's alias is
``<namespace>.<name>`` (``alias.namespaced_alias``): routes, transcripts and ``verify``
use it as they use a flat alias.

``namespace_tool`` builds one server's namespace from the function tools offered of it,
so anything that declares a server's tools (a run, tool search later) builds the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from .alias import namespaced_alias

__all__ = [
    "DECLARE_MODES",
    "MAX_NAMESPACE_DESCRIPTION",
    "DeclareMode",
    "Namespace",
    "function_tools_by_alias",
    "namespace_description",
    "namespace_tool",
]

DeclareMode = Literal["flat", "namespaces"]
DECLARE_MODES: Final[tuple[DeclareMode, ...]] = ("flat", "namespaces")
MAX_NAMESPACE_DESCRIPTION: Final = 1024
"""Characters of a namespace's description (its server's title and instructions) at most."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Namespace:
    """One server as the model sees it under ``--declare namespaces``."""

    name: str
    """The namespace name the model calls with (the server's name made API-safe)."""
    server: str
    description: str


def namespace_description(server: str, server_info: Mapping[str, Any], instructions: str | None) -> str:
    """What the model reads about a namespace: the server's title (else its name), then its
    ``instructions``, cut to ``MAX_NAMESPACE_DESCRIPTION`` characters."""
    title = server_info.get("title")
    head = title if isinstance(title, str) and title.strip() else f"Tools of the MCP server {server!r}"
    said = instructions.strip() if instructions else ""
    text = f"{head.strip()}: {said}" if said else head.strip()
    if len(text) <= MAX_NAMESPACE_DESCRIPTION:
        return text
    return text[: MAX_NAMESPACE_DESCRIPTION - 1] + "…"


def namespace_tool(namespace: Namespace, function_tools: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``namespace`` entry of the ``tools`` array holding ``function_tools`` (each a
    function tool whose name is its name inside the namespace)."""
    return {
        "type": "namespace",
        "name": namespace.name,
        "description": namespace.description,
        "tools": [dict(tool) for tool in function_tools],
    }


def function_tools_by_alias(tools: Any) -> dict[str, dict[str, Any]]:
    """alias → function tool of a ``tools`` array: a flat one by its name, one inside a
    namespace as ``<namespace>.<name>`` (what a call naming both routes by)."""
    found: dict[str, dict[str, Any]] = {}
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace" and isinstance(tool.get("name"), str):
            inner = tool.get("tools")
            for entry in inner if isinstance(inner, list) else []:
                if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                    found.setdefault(namespaced_alias(tool["name"], entry["name"]), entry)
        elif isinstance(tool.get("name"), str):
            found.setdefault(tool["name"], tool)
    return found
