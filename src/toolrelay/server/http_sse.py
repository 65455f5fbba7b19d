"""Carrying a session's SSE streams on HTTP connections (Streamable HTTP, SEP-1699).

A connection carries one stream: a POST the stream of its request, a GET the standalone
stream or, with ``Last-Event-ID``, the stream that id belongs to. It writes the stream's
events after the position it starts from, in the order of their numbers, then each
event as the session stores it, until the stream ends; in sessions at 2025-11-25 or
later a priming event (an id, empty data and ``retry:``) is stored when the connection
opens, after what it replays (a POST's stream stores its own before the request runs,
so that it comes first). Writing in number order matters: a client that reconnects
resumes after the last id it saw, so it must have seen everything numbered below it.

A connection ends before its stream when another connection takes the stream over (the
client reconnected), or when the ``hold`` of a request's stream passes: then it sends
``retry:`` and ends, and the stream goes on for the client to resume.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Final, TypeVar

from ..httpserver import HttpResponder
from .http_session import HttpSession
from .http_streams import SseStream, StoredEvent

__all__ = ["SSE_HEADERS", "carry"]

T = TypeVar("T")

SSE_HEADERS: Final = (("content-type", "text/event-stream"), ("cache-control", "no-cache"))


async def carry(
    session: HttpSession, stream: SseStream, responder: HttpResponder, *, after: int, prime: bool
) -> None:
    """Answer with ``stream`` as SSE: its events after event number ``after``, and what
    comes, for as long as this connection carries it; ``prime``: store a priming event
    first (when the session's clients expect one and more is to come)."""
    holder = object()
    stream.holder = holder
    stream.wake()  # the connection that carried it until now lets go
    try:
        await responder.start(200, SSE_HEADERS)
        deadline = _hold_deadline(session, stream)
        if prime and session.primes and not stream.done:
            session.prime(stream)
        if not await _pump_while_there(session, stream, holder, after, deadline, responder):
            session.dropped(stream)
            return
        await responder.end()
    finally:
        if stream.holder is holder:
            stream.holder = None


async def while_connected(responder: HttpResponder, work: Coroutine[Any, Any, T]) -> tuple[bool, T | None]:
    """(True, what ``work`` returned), or (False, None) when the client closed the
    connection first, or a write of ``work``'s failed for it: a long answer is written
    only when there is something to write, so its leaving is watched for meanwhile."""
    working = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(responder.client_left())
    try:
        await asyncio.wait((working, gone), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (gone, working):
            task.cancel()
        await asyncio.wait((gone, working))  # the reader is free again before anyone reads it
    if working.cancelled():
        return False, None
    failed = working.exception()
    if isinstance(failed, OSError):  # includes the responder's: the client left
        return False, None
    if failed is not None:
        raise failed
    return True, working.result()


async def _pump_while_there(
    session: HttpSession, stream: SseStream, holder: object, position: int, deadline: float | None,
    responder: HttpResponder,
) -> bool:
    """``_pump``, unless the client closes the connection first (False)."""
    there, _ = await while_connected(responder, _pump(session, stream, holder, position, deadline, responder))
    return there


def _hold_deadline(session: HttpSession, stream: SseStream) -> float | None:
    """When this connection lets a request's stream go unanswered (None: never)."""
    hold = session.options.hold
    if hold is None or stream.request_id is None or not session.primes:
        return None
    return asyncio.get_running_loop().time() + hold


async def _pump(
    session: HttpSession, stream: SseStream, holder: object, position: int, deadline: float | None,
    responder: HttpResponder,
) -> None:
    loop = asyncio.get_running_loop()
    while stream.holder is holder:
        stream.settle()  # from here on, a new event wakes the wait below
        events = session.events.after(stream.number, position, loop.time())
        if events is None:
            return  # what this connection missed is no longer kept; resuming will be refused
        for event in events:
            await responder.write(_frame(event, session.options.retry_ms))
            position = event.number
        stream.sent = max(stream.sent, position)
        if stream.done and position >= stream.last_number:
            return
        wait = None if deadline is None else deadline - loop.time()
        if (wait is not None and wait <= 0) or not await stream.changed(wait):
            await responder.write(f"retry: {session.options.retry_ms}\n\n".encode())
            return  # held long enough: the client resumes the stream with GET


def _frame(event: StoredEvent, retry_ms: int) -> bytes:
    if event.data is None:  # a priming event
        return f"id: {event.event_id}\nretry: {retry_ms}\ndata:\n\n".encode()
    return b"id: " + event.event_id.encode() + b"\nevent: message\ndata: " + event.data + b"\n\n"
