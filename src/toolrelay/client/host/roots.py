"""Roots: the directories a server is told it may work in (``roots/list``).

A server's roots come from its config entry (``"toolrelay": {"roots": [...]}``), else the
current directory. Each is sent as the ``file://`` URI of the absolute, normalised path
(``..`` resolved, symlinks followed), so what a server sees is what the user named.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...protocol.jsonrpc import JSONObject

__all__ = ["Root", "list_roots_result", "roots_from_paths"]


@dataclass(frozen=True, slots=True)
class Root:
    """One root as the server receives it."""

    uri: str
    """A ``file://`` URI."""
    name: str

    def to_json(self) -> JSONObject:
        return {"uri": self.uri, "name": self.name}


def roots_from_paths(paths: Iterable[str | os.PathLike[str]]) -> tuple[Root, ...]:
    """Roots for local paths (``~`` expanded; relative ones against the current directory)."""
    roots: list[Root] = []
    for raw in paths:
        path = Path(os.path.realpath(Path(raw).expanduser()))
        root = Root(uri=path.as_uri(), name=path.name or str(path))
        if root not in roots:
            roots.append(root)
    return tuple(roots)


def list_roots_result(roots: Iterable[Root]) -> JSONObject:
    """The answer to ``roots/list``."""
    return {"roots": [root.to_json() for root in roots]}
