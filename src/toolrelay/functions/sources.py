"""What ``tools=`` takes (``ToolSource``), light enough for ``RunOptions`` to name: the
declarations themselves are built in ``tool.py``, only when function tools are used."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

__all__ = ["ToolSource", "ToolsServer"]


class ToolsServer:
    """A named group of function tools: one in-process MCP server (``tools_server``). A
    plain class, not a dataclass: ``RunOptions`` imports this module at every start."""

    __slots__ = ("instructions", "name", "options", "tools")

    def __init__(self, name: str, tools: tuple[Any, ...], instructions: str | None = None,
                 options: dict[str, Any] | None = None) -> None:
        self.name = name
        self.tools = tools
        """Its ``tool.FunctionTool`` declarations (typed loosely: this module imports none of them)."""
        self.instructions = instructions
        self.options: dict[str, Any] = dict(options or {})
        """Other ``ServerConfig`` fields (``call_timeout``, ``deny``, ``pins``...)."""

    def __repr__(self) -> str:
        return f"<toolrelay tools server {self.name}: {', '.join(t.name for t in self.tools)}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (ToolsServer, (self.name, self.tools, self.instructions, self.options))


ToolSource: TypeAlias = Callable[..., Any] | ToolsServer
"""What ``tools=`` takes: functions (a plain one is declared as ``tool(fn)`` would) and
``tools_server`` groups."""
