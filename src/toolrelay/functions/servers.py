"""A run's ``tools=`` as in-process MCP servers beside its configured ones, and the hook
that tells them the model's call_id of each call (``_meta``: ``context.CALL_ID_KEY``).

The functions of ``tools=[f, g]`` are the server ``py``; each ``tools_server`` group is a
server of its own name. Their calls go through the MCP core like any server's, with MCP
ids, so the transcript records them and ``verify`` judges them as every other call.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..client.config import ServerConfig
from ..errors import UsageError
from ..inprocess_servers import in_process_server
from ..relay.stages.context import CallContext, CallHook
from ..relay.stages.parse import FunctionCall
from .context import CALL_ID_KEY
from .service import FunctionService
from .tool import ToolSource, ToolsServer, grouped

__all__ = ["CallIds", "check_importable", "function_servers"]


def function_servers(sources: Sequence[ToolSource], taken: Sequence[str] = ()) -> list[ServerConfig]:
    """The in-process servers of ``sources``; a name among ``taken`` (the configured
    servers') is a usage error."""
    try:
        groups = grouped(sources)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"tools=: {exc}") from None
    for group in groups:
        if group.name in taken:
            raise UsageError(f"tools=: the function server {group.name!r} has the name of a configured "
                             "server (use toolrelay.tools_server('another', [...]))")
    return [_config(group) for group in groups]


def _config(group: ToolsServer) -> ServerConfig:
    """Its server config: no roots offered (a function has no use for them, and the session
    would ask for them before the first call)."""
    service = FunctionService(group.name, group.tools, instructions=group.instructions, keep_tracebacks=True)
    try:
        config = in_process_server(service, name=group.name, **{"offer_roots": False, **group.options})
    except TypeError as exc:
        raise UsageError(f"tools_server({group.name!r}): {exc}") from None
    return config


@dataclass(frozen=True)
class CallIds(CallHook):
    """Puts the model's call_id in the ``_meta`` of each call to ``servers``."""

    servers: frozenset[str]

    async def before_call(self, call: FunctionCall, context: CallContext) -> str | None:
        if context.server in self.servers and call.call_id:
            context.meta[CALL_ID_KEY] = call.call_id
        return None


def check_importable(sources: Sequence[ToolSource]) -> None:
    """On Ray each worker imports the functions by module path: a function defined in
    ``__main__``, inside another function, or a lambda cannot be, and is a usage error."""
    try:
        groups = grouped(sources)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"tools=: {exc}") from None
    for group in groups:
        for declared in group.tools:
            where = _import_problem(declared.fn)
            if where is not None:
                raise UsageError(f"tools=: function {declared.name} {where}; on --engine ray every worker "
                                 "imports the functions by module path: define it at the top level of an "
                                 "importable module (or run the batch with the local engine)")


def _import_problem(fn: Any) -> str | None:
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or module == "__main__":
        return "is defined in __main__"
    if "<locals>" in qualname or "<lambda>" in qualname:
        return "is defined inside a function (or is a lambda)"
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return f"is not importable as {module}.{qualname}"
    return None
