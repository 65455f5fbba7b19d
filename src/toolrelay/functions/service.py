"""``FunctionService``: function tools as a ``server.app.ToolService``.

The same service runs in process beside a run's other servers (``servers.py``) and
behind stdio or Streamable HTTP (``toolrelay serve``). A call's arguments are checked
against the tool's ``inputSchema`` first (a mismatch is a tool error naming it, and the
function does not run), then made the hinted Python values; a sync function runs on the
event loop, as a call of the Agents SDK's does (make a slow one async, or hand it to a
thread inside), an async one is awaited.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..protocol.jsonrpc import JSONObject
from ..server.app import CallContext, UnknownTool
from .context import Channel, RequestChannel, ToolContext
from .convert import from_json
from .results import error_result, exception_result, value_result
from .tool import FunctionTool

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["FunctionService"]


class FunctionService:
    """Serves ``tools`` as the MCP server ``name``; ``keep_tracebacks``: a failed call's
    traceback is kept in its result's ``_meta`` (for the run's transcript, in process)."""

    version = __version__

    def __init__(self, name: str, tools: Sequence[FunctionTool], *, instructions: str | None = None,
                 keep_tracebacks: bool = False) -> None:
        self.name = name
        self.instructions = instructions
        self.keep_tracebacks = keep_tracebacks
        self._tools = {t.name: t for t in tools}
        self._declarations = [t.declaration() for t in tools]
        self._validators: dict[str, Validator] = {}

    def tools(self) -> list[JSONObject]:
        return self._declarations

    def call(self, name: str, arguments: JSONObject, context: CallContext
             ) -> JSONObject | Awaitable[JSONObject]:
        tool = self._tools.get(name)
        if tool is None:
            raise UnknownTool(name)
        problem = self._check(tool, arguments)
        if problem is not None:
            return error_result(f"invalid arguments for {name}: {problem}")
        try:
            kwargs = {p.name: from_json(p.hint, arguments[p.name]) for p in tool.parameters
                      if p.name in arguments}
            if tool.context_param is not None:
                kwargs[tool.context_param] = self._context(tool, context)
            if tool.is_async:
                return self._settle(tool, tool.fn(**kwargs))
            value = tool.fn(**kwargs)
        except Exception as exc:
            return exception_result(name, exc, keep_traceback=self.keep_tracebacks)
        if asyncio.iscoroutine(value):  # a sync callable that returned a coroutine
            return self._settle(tool, value)
        return value_result(value, wrapped=tool.wraps_result)

    async def _settle(self, tool: FunctionTool, pending: Awaitable[Any]) -> JSONObject:
        try:
            value = await pending
        except Exception as exc:
            return exception_result(tool.name, exc, keep_traceback=self.keep_tracebacks)
        return value_result(value, wrapped=tool.wraps_result)

    def _check(self, tool: FunctionTool, arguments: JSONObject) -> str | None:
        validator = self._validators.get(tool.name)
        if validator is None:
            from jsonschema import Draft202012Validator  # only once a function is called

            validator = self._validators[tool.name] = Draft202012Validator(tool.input_schema)
        error = next(iter(validator.iter_errors(arguments)), None)
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path)
        return f"{where}: {error.message}" if where else error.message

    def _context(self, tool: FunctionTool, context: CallContext) -> ToolContext:
        request = context.request
        params = request.params if request is not None and isinstance(request.params, dict) else {}
        meta = params.get("_meta")
        mcp_id = request.id if request is not None else None
        return ToolContext(tool=tool.name, server=self.name, mcp_id=mcp_id,
                           meta=meta if isinstance(meta, dict) else {}, channel=_channel(context),
                           protocol_version=context.protocol_version)


def _channel(context: CallContext) -> Channel | None:
    """What a call's context speaks through: its session, or its 2026-07-28 request's stream."""
    if context.peer is not None:
        return context.peer
    return RequestChannel(context.stream) if context.stream is not None else None
