"""A tiny ToolService for the server tests: echo, a slow tool, and a roots reporter.

Served in-process by ``testkit.mcp_http`` (raw HTTP tests) and by the subprocess scripts
beside it (``echo_http_server.py``, ``echo_stdio_server.py``) that the SDK-driven tests
start. In-process, ``calls`` tells a test when a tool started, finished or was cancelled,
so it waits on that event instead of sleeping.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from toolrelay.protocol.mcp import text_result
from toolrelay.server.app import CallContext, UnknownTool

_TEXT_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}


class CallLog:
    """What happened to the service's calls, for tests on another thread to wait on.

    Each ``wait_for`` takes the next entry it matches, so a service shared by several
    tests (or calls) waits for each call's own event, never for an earlier one's."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._unclaimed: list[tuple[str, str]] = []
        self.seen: list[tuple[str, str]] = []
        """Every (what, tool) in order: "started", "finished" or "cancelled"."""

    def note(self, what: str, tool: str) -> None:
        with self._changed:
            self.seen.append((what, tool))
            self._unclaimed.append((what, tool))
            self._changed.notify_all()

    def wait_for(self, what: str, tool: str, timeout: float = 10.0) -> None:
        """Until ``tool`` was ``what`` (an entry no earlier wait took); else AssertionError."""
        with self._changed:
            if not self._changed.wait_for(lambda: (what, tool) in self._unclaimed, timeout):
                raise AssertionError(f"{tool} was not {what} within {timeout} s (seen: {self.seen})")
            self._unclaimed.remove((what, tool))


class EchoService:
    """echo(text) → text; slow(seconds) sleeps; roots() reports the client's roots."""

    name = "echo-test"
    version = "1.2.3"
    instructions: str | None = "A test service."
    uses_client_roots = True
    """Its ``roots`` tool reports them: the session asks a client that offers roots for them."""

    def __init__(self) -> None:
        self.calls = CallLog()

    def tools(self) -> list[dict[str, Any]]:
        return [
            {"name": "echo", "description": "Return the text unchanged.", "inputSchema": _TEXT_SCHEMA},
            {
                "name": "slow",
                "description": "Sleep for some seconds, then say so.",
                "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
            },
            {
                "name": "roots",
                "description": "Report the client's roots as JSON.",
                "inputSchema": {"type": "object", "properties": {}},
            },
        ]

    def call(self, name: str, arguments: dict[str, Any], context: CallContext) -> Any:
        self.calls.note("started", name)
        if name == "slow":
            return self._slow(float(arguments.get("seconds", 5)))
        result = self._answer(name, arguments, context)
        self.calls.note("finished", name)
        return result

    def _answer(self, name: str, arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
        if name == "echo":
            text = arguments.get("text")
            if not isinstance(text, str):
                return text_result('echo needs "text" (a string)', is_error=True)
            return text_result(text)
        if name == "roots":
            report = {"roots": context.client_roots, "error": context.roots_error}
            return text_result(json.dumps(report), structured=report)
        raise UnknownTool(name)

    async def _slow(self, seconds: float) -> dict[str, Any]:
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            self.calls.note("cancelled", "slow")
            raise
        self.calls.note("finished", "slow")
        return text_result(f"slept {seconds:g} s")
