"""What ``tools=`` takes (``ToolSource``), light enough for ``RunOptions`` to name: the
declarations themselves are built in ``tool.py``, only when function tools are used."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

__all__ = ["ToolSource", "ToolsServer"]


@dataclass(frozen=True)
class ToolsServer:
    """A named group of function tools: one in-process MCP server (``tools_server``)."""

    name: str
    tools: tuple[Any, ...]
    """Its ``tool.FunctionTool`` declarations (typed loosely: this module imports none of them)."""
    instructions: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    """Other ``ServerConfig`` fields (``call_timeout``, ``deny``, ``pins``...)."""


ToolSource: TypeAlias = Callable[..., Any] | ToolsServer
"""What ``tools=`` takes: functions (a plain one is declared as ``tool(fn)`` would) and
``tools_server`` groups."""
