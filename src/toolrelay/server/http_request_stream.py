"""One 2026-07-28 POST's answer: JSON, or an SSE stream when the request has news first.

A request whose work reports on it (progress, log messages: ``request_stream.py``) is
answered with ``text/event-stream``: each notification an event as it comes, the
JSON-RPC response the last event, then the response ends. One with nothing to stream is
answered with one JSON body, with the HTTP status the revision gives its error code.
The choice is made when the first notification comes, so a call that reports nothing
costs no stream (as the official SDK's modern path commits to SSE only when a
notification is emitted). Once the stream has begun its status is 200, and an error is
its last event. A client that closes the connection cancels the request: the work stops.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import dataclass

from ..errors import RpcError
from ..httpserver import HttpResponder
from ..protocol import jsonrpc, request_envelope
from ..protocol.jsonrpc import INTERNAL_ERROR, JSONObject, RequestId
from ..protocol.peer import Tracer
from .http_sse import SSE_HEADERS, while_connected

__all__ = ["answer_streamed", "sse_event"]

log = logging.getLogger("toolrelay.server.http")

_JSON = ("content-type", "application/json")


def sse_event(message: JSONObject) -> bytes:
    """One JSON-RPC message as an SSE event (no id: 2026-07-28 streams are not resumed)."""
    return b"event: message\ndata: " + jsonrpc.encode(message) + b"\n\n"


@dataclass(slots=True)
class _Stream:
    responder: HttpResponder
    tracer: Tracer | None
    tag: object = None
    """What the tracer is told each message is sent for (the endpoint's exchange number)."""
    started: bool = False

    async def write(self, message: JSONObject) -> None:
        if not self.started:
            await self.responder.start(200, SSE_HEADERS)
            self.started = True
        if self.tracer is not None:
            self.tracer.sent(message, self.tag)
        await self.responder.write(sse_event(message))


async def answer_streamed(
    outcome: JSONObject | Awaitable[JSONObject], notes: asyncio.Queue[JSONObject], responder: HttpResponder,
    request_id: RequestId, tracer: Tracer | None = None, *, silent: bool = False, tag: object = None,
) -> None:
    """Answer the request ``request_id`` with ``outcome``, after the notifications put on
    ``notes`` while it runs (as SSE events: then the answer is one too); ``silent``: the
    request asked for none, so none is waited for (the common call costs no more); ``tag``:
    what ``tracer`` is told each message is sent for."""
    stream = _Stream(responder, tracer, tag)
    there, answered = await while_connected(responder, _run(outcome, notes, stream, request_id, silent))
    if not there or answered is None:
        log.debug("the client closed its request %r; stopped", request_id)
        return
    answer, status = answered
    if stream.started:
        await stream.write(answer)
        await responder.end()
        return
    if tracer is not None:
        tracer.sent(answer, tag)
    await responder.send(status, [_JSON], jsonrpc.encode(answer))


async def _run(outcome: JSONObject | Awaitable[JSONObject], notes: asyncio.Queue[JSONObject], stream: _Stream,
               request_id: RequestId, silent: bool) -> tuple[JSONObject, int]:
    """The answer and its status, once ``outcome`` is done and every note before it written."""
    work = None if isinstance(outcome, dict) else asyncio.ensure_future(_awaited(outcome))
    try:
        if silent and work is not None:
            await asyncio.wait((work,))
        while work is not None and not work.done():
            note = asyncio.ensure_future(notes.get())
            try:
                await asyncio.wait((work, note), return_when=asyncio.FIRST_COMPLETED)
            finally:
                if not note.done():
                    note.cancel()
            if note.done() and not note.cancelled():
                await stream.write(note.result())
        while not notes.empty():  # what was reported before the answer comes before it
            await stream.write(notes.get_nowait())
        if work is None:
            assert isinstance(outcome, dict)
            return jsonrpc.response(request_id, outcome), 200
        return _answer(work, request_id)
    finally:
        if work is not None and not work.done():
            work.cancel()


async def _awaited(outcome: Awaitable[JSONObject]) -> JSONObject:
    return await outcome


def _answer(done: asyncio.Future[JSONObject], request_id: RequestId) -> tuple[JSONObject, int]:
    failed = done.exception()
    if failed is None:
        return jsonrpc.response(request_id, done.result()), 200
    if not isinstance(failed, RpcError):  # a handler bug is the request's failure, not the server's
        log.error("handler failed", exc_info=failed)
        failed = RpcError(INTERNAL_ERROR, f"Internal error: {type(failed).__name__}: {failed}")
    said = jsonrpc.error_response(request_id, failed.code, failed.rpc_message, failed.data)
    return said, request_envelope.http_status(failed.code)
