"""One side of an MCP conversation, shared by the client and the server.

The peer owns what both sides need and nothing that touches a pipe or a socket: request
ids, the table of requests awaiting an answer, pairing each response to its request,
timeouts with ``notifications/cancelled``, and dispatch of incoming requests and
notifications to handlers. A transport feeds it decoded messages (``receive``) and gives
it a ``send`` function; a ``Tracer`` sees every message in and out, which is how exact
wire messages and ids reach the event stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import MaxTimeExceeded, RequestTimeout, RpcError, ToolrelayError, TransportError
from . import jsonrpc
from .exchange import Exchange, Sent
from .jsonrpc import (
    ErrorResponse,
    JSONObject,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
)

__all__ = ["MaxTimeExceeded", "Peer", "RequestHandler", "Tracer"]

log = logging.getLogger("toolrelay.protocol")

# A handler answers with a result object, or an awaitable of one (run as its own task so
# the peer keeps reading, e.g. the response to a request the handler itself is awaiting).
RequestHandler = Callable[[Request], JSONObject | Awaitable[JSONObject]]
NotificationHandler = Callable[[Notification], None]


class Tracer(Protocol):
    """Sees every message the peer sends and receives, with the tag of its request."""

    def sent(self, message: JSONObject, tag: Any, delivered: bool = True) -> None:
        """``delivered`` is False for a cancellation the channel could not take (told after
        the attempt; every other message is told before it is sent)."""

    def received(self, message: Message, tag: Any, elapsed: float | None) -> None: ...


@dataclass(slots=True)
class _Pending:
    exchange: Exchange
    future: asyncio.Future[Exchange]
    tag: Any
    timeout: float | None = None
    deadline: float = 0.0
    """Event loop time after which the request has timed out (when ``timeout`` is set)."""
    max_time: float | None = None
    cap: float = 0.0
    """Event loop time the deadline never passes, however often it is renewed (``max_time``)."""
    on_answer: Sent | None = None
    """Given the exchange as its answer is read, before the next message is dispatched."""


class Peer:
    """Ids, pending requests and dispatch for one session; I/O is the transport's."""

    def __init__(
        self,
        send: Callable[[JSONObject], None],
        *,
        on_request: RequestHandler | None = None,
        on_notification: NotificationHandler | None = None,
        tracer: Tracer | None = None,
        first_id: int = 1,
        tag_request: Callable[[Request], Any] | None = None,
        tag_notification: Callable[[Notification], Any] | None = None,
    ) -> None:
        self._send = send
        self._on_request = on_request
        self._on_notification = on_notification
        self.tracer = tracer
        self._tag_request = tag_request
        """Names the tag an incoming request (and our answer to it) is traced with: a server
        request made during a tool call carries that call's tag."""
        self._tag_notification = tag_notification
        """The same for an incoming notification (progress, a log message)."""
        self._ids = itertools.count(first_id)
        self._pending: dict[RequestId, _Pending] = {}
        self._held: dict[RequestId, tuple[int, float]] = {}
        """tag → (the other side's requests being answered for it, loop time since when):
        while any is, the clocks of our requests with that tag stand still (``hold``)."""
        self._handling: dict[RequestId, asyncio.Task[None]] = {}
        self._closed: ToolrelayError | None = None
        # One timer for every request's deadline, armed for the earliest: a timer per
        # request (created, then cancelled when the answer comes) is a third of a call's work.
        self._watchdog: asyncio.TimerHandle | None = None
        self._watchdog_at = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None  # get_running_loop() costs a getpid()

    # -- outgoing -------------------------------------------------------------------

    def next_id(self) -> int:
        return next(self._ids)

    @property
    def pending_count(self) -> int:
        return len(self._pending)

    async def call(
        self,
        method: str,
        params: JSONObject | None = None,
        *,
        timeout: float | None = None,
        tag: Any = None,
        max_time: float | None = None,
        on_sent: Sent | None = None,
        on_answer: Sent | None = None,
    ) -> Exchange:
        """Send a request and wait for its answer; JSON-RPC errors come back in the Exchange.

        Raises TransportError when no answer can come (closed, timed out). On timeout or
        cancellation of the caller, ``notifications/cancelled`` names the request id.
        ``timeout`` is renewed by ``renew``; ``max_time`` (with a timeout) caps it in total.
        ``on_sent`` is given the exchange once the request is on the wire; ``on_answer`` as
        its answer is read, before the next message is dispatched (what the other side sends
        right after the answer may rest on it: a task the answer created).
        """
        if self._closed is not None:
            raise self._closed
        mcp_id = next(self._ids)
        message = jsonrpc.request(mcp_id, method, params)
        exchange = Exchange(mcp_id, method, message)
        loop = self._loop
        if loop is None or loop.is_closed():
            loop = self._loop = asyncio.get_running_loop()
        future: asyncio.Future[Exchange] = loop.create_future()
        pending = self._pending[mcp_id] = _Pending(exchange, future, tag, on_answer=on_answer)
        try:
            if self.tracer is not None:  # (what _emit does, written out on the hot path)
                self.tracer.sent(message, tag)
            self._send(message)
        except ToolrelayError as exc:
            self._pending.pop(mcp_id, None)
            raise exc.for_request(mcp_id, message) from None
        except BaseException:
            self._pending.pop(mcp_id, None)
            raise
        if on_sent is not None:
            on_sent(exchange)
        if timeout is not None:  # a deadline, not asyncio.wait_for: the hot path stays one future
            pending.timeout, pending.deadline = timeout, loop.time() + timeout
            if max_time is not None:
                pending.max_time, pending.cap = max_time, loop.time() + max_time
                pending.deadline = min(pending.deadline, pending.cap)
            if self._watchdog is None or pending.deadline < self._watchdog_at:
                self._arm(loop, pending.deadline)
        try:
            return await future
        except ToolrelayError as exc:  # timed out, the channel failed, or the answer was unusable
            raise exc.for_request(mcp_id, message) from None
        except asyncio.CancelledError:
            self._abandon(mcp_id, "cancelled by the client")
            raise

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
        self._watchdog, self._watchdog_at = loop.call_at(when, self._check_deadlines, loop), when

    def _check_deadlines(self, loop: asyncio.AbstractEventLoop) -> None:
        """Fail the requests whose deadline passed; wait for the next earliest one."""
        self._watchdog = None
        now = loop.time()
        timed = [(mcp_id, p.deadline) for mcp_id, p in self._pending.items()
                 if p.timeout is not None and mcp_id not in self._held]  # a held one re-arms on release
        for mcp_id, deadline in timed:
            if deadline <= now:
                self._expire(mcp_id)
        later = [deadline for _, deadline in timed if deadline > now]
        if later and self._closed is None:
            self._arm(loop, min(later))

    def _expire(self, mcp_id: RequestId) -> None:
        """A request's timeout passed: fail it and tell the other side (not for initialize)."""
        pending = self._pending.get(mcp_id)
        if pending is None or pending.future.done():
            return
        method, timeout, max_time = pending.exchange.method, pending.timeout, pending.max_time
        capped = max_time is not None and pending.deadline >= pending.cap
        why = f"ran past its maximum of {max_time:g} s" if capped else f"timed out after {timeout:g} s"
        self._abandon(mcp_id, why)
        sent = "" if method == "initialize" else " (a cancellation was sent)"  # see _abandon
        said = f"was still running after its maximum of {max_time:g} s" if capped else (
            f"got no answer within {timeout:g} s")
        kind = MaxTimeExceeded if capped else RequestTimeout
        error = kind(f"{method} request {jsonrpc.id_text(mcp_id)} {said}{sent}")
        pending.future.set_exception(error)

    async def request(
        self, method: str, params: JSONObject | None = None, *, timeout: float | None = None
    ) -> JSONObject:
        """Send a request; return its result or raise RpcError."""
        exchange = await self.call(method, params, timeout=timeout)
        return exchange.raise_for_error()

    def notify(self, method: str, params: JSONObject | None = None, tag: Any = None) -> None:
        """Send a notification (no answer expected)."""
        self._emit(jsonrpc.notification(method, params), tag)

    def pending_ids(self, method: str) -> list[RequestId]:
        """The ids of our requests of ``method`` still awaiting their answer, oldest first."""
        return [mcp_id for mcp_id, p in self._pending.items() if p.exchange.method == method]

    def postpone(self, mcp_id: RequestId, seconds: float) -> None:
        """Move the deadline of our pending request ``mcp_id`` ``seconds`` later (the time
        someone spent answering the other side's question on its behalf)."""
        pending = self._pending.get(mcp_id)
        if pending is not None and pending.timeout is not None:
            pending.deadline += seconds
            pending.cap += seconds

    def hold(self, mcp_id: RequestId) -> None:
        """One of the other side's requests, made during our request ``mcp_id``, is being
        answered: its clock stands still until as many ``release`` calls. Time spent with
        several held counts once (a flood of questions answered at once is not a flood of
        extra time). Keyed by our id, never by a tag such as the model's call_id, which
        the tasks of a batch sharing this connection repeat."""
        loop = self._loop or asyncio.get_running_loop()
        count, since = self._held.get(mcp_id, (0, loop.time()))
        self._held[mcp_id] = (count + 1, since)

    def release(self, mcp_id: RequestId) -> None:
        """The end of one ``hold``: after the last, the held time is added to the deadline."""
        held = self._held.get(mcp_id)
        if held is None:
            return
        count, since = held
        if count > 1:
            self._held[mcp_id] = (count - 1, since)
            return
        del self._held[mcp_id]
        loop = self._loop or asyncio.get_running_loop()
        self.postpone(mcp_id, loop.time() - since)
        timed = [p.deadline for held_id, p in self._pending.items()
                 if p.timeout is not None and held_id not in self._held]
        if timed and self._closed is None and (self._watchdog is None or min(timed) < self._watchdog_at):
            self._arm(loop, min(timed))

    def renew(self, mcp_id: RequestId) -> None:
        """The other side says request ``mcp_id`` is still being worked on (progress): its
        timeout starts again from now, never past its maximum time."""
        pending = self._pending.get(mcp_id)
        if pending is None or pending.timeout is None:
            return
        loop = self._loop or asyncio.get_running_loop()
        renewed = loop.time() + pending.timeout
        if pending.max_time is not None:
            renewed = min(renewed, pending.cap)
        pending.deadline = max(pending.deadline, renewed)  # the watchdog re-arms when it fires

    def pending_tag(self, mcp_id: RequestId) -> Any:
        """The tag of our request ``mcp_id`` while it awaits its answer (else None)."""
        pending = self._pending.get(mcp_id)
        return pending.tag if pending is not None else None

    def pending_with_token(self, token: Any) -> RequestId | None:
        """Our pending request whose ``_meta.progressToken`` is ``token``, if one is."""
        if isinstance(token, bool) or not isinstance(token, (str, int)):
            return None
        for mcp_id, pending in self._pending.items():
            params = pending.exchange.request.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            if isinstance(meta, dict) and meta.get("progressToken") == token:
                return mcp_id
        return None

    def pending_exchange(self, mcp_id: RequestId) -> Exchange | None:
        """The exchange of a request still awaiting its answer, if ``mcp_id`` names one."""
        pending = self._pending.get(mcp_id)
        return pending.exchange if pending is not None else None

    def fail(self, mcp_id: RequestId, error: ToolrelayError) -> bool:
        """Fail one pending request whose answer cannot arrive (refused as too large, or
        its HTTP POST failed); no cancellation is sent. False if it was not pending."""
        pending = self._pending.pop(mcp_id, None)
        if pending is None:
            return False
        if not pending.future.done():
            pending.future.set_exception(error)
        return True

    def cancel_all(self, reason: str, error: ToolrelayError) -> None:
        """Give up on every request awaiting its answer: each gets its
        ``notifications/cancelled`` now (as when its caller is cancelled) and fails with
        ``error``. For a program about to stop its servers: the cancellations go first."""
        for mcp_id, pending in list(self._pending.items()):
            self._abandon(mcp_id, reason)
            if not pending.future.done():
                pending.future.set_exception(error)

    def _abandon(self, mcp_id: RequestId, reason: str) -> None:
        pending = self._pending.pop(mcp_id, None)
        if pending is None or self._closed is not None:
            return
        if pending.exchange.method == "initialize":  # MUST NOT be cancelled (lifecycle)
            return
        cancelled = jsonrpc.notification("notifications/cancelled", {"requestId": mcp_id, "reason": reason})
        try:
            self._send(cancelled)
        except TransportError:  # the channel could not take it: recorded as such
            delivered = False
        else:
            delivered = True
        if self.tracer is not None:
            self.tracer.sent(cancelled, pending.tag, delivered)

    def _emit(self, message: JSONObject, tag: Any) -> None:
        if self.tracer is not None:
            self.tracer.sent(message, tag)
        self._send(message)

    # -- incoming -------------------------------------------------------------------

    def receive(self, message: Message) -> None:
        """Dispatch one decoded message from the other side."""
        if isinstance(message, (Response, ErrorResponse)):
            self._receive_answer(message)
        elif isinstance(message, Request):
            self._receive_request(message)
        else:
            self._receive_notification(message)

    def _receive_answer(self, message: Response | ErrorResponse) -> None:
        pending = self._pending.pop(message.id, None) if message.id is not None else None
        if pending is None:
            # Late (after a timeout or cancel) or never asked for: seen, then ignored.
            if self.tracer is not None:
                self.tracer.received(message, None, None)
            return
        exchange = pending.exchange
        exchange.elapsed = time.monotonic() - exchange.started
        exchange.settle(message)
        if self.tracer is not None:
            self.tracer.received(message, pending.tag, exchange.elapsed)
        if pending.on_answer is not None and not pending.future.done():
            pending.on_answer(exchange)
        if not pending.future.done():
            pending.future.set_result(exchange)

    def _receive_request(self, message: Request) -> None:
        tag = self._tag_request(message) if self._tag_request is not None else None
        if self.tracer is not None:
            self.tracer.received(message, tag, None)
        if self._on_request is None:
            self.answer_error(message.id, jsonrpc.METHOD_NOT_FOUND, f"Method not found: {message.method}",
                              tag=tag)
            return
        try:
            outcome = self._on_request(message)
        except RpcError as exc:
            self.answer_error(message.id, exc.code, exc.rpc_message, exc.data, tag=tag)
            return
        except Exception as exc:  # a handler bug must not end the session
            self._internal_error(message, exc, tag)
            return
        if isinstance(outcome, dict):
            self.answer(message.id, outcome, tag=tag)
            return
        task = asyncio.ensure_future(self._finish_request(message, outcome, tag))
        self._handling[message.id] = task
        request_id = message.id

        def forget(_task: asyncio.Task[None]) -> None:
            self._handling.pop(request_id, None)

        task.add_done_callback(forget)

    async def _finish_request(self, message: Request, pending: Awaitable[JSONObject], tag: Any) -> None:
        try:
            result = await pending
        except RpcError as exc:
            self.answer_error(message.id, exc.code, exc.rpc_message, exc.data, tag=tag)
        except asyncio.CancelledError:
            return  # the other side cancelled: no response (lifecycle spec)
        except TransportError:
            return  # the channel is gone; nobody to answer
        except Exception as exc:
            self._internal_error(message, exc, tag)
        else:
            self.answer(message.id, result, tag=tag)

    def _internal_error(self, message: Request, exc: Exception, tag: Any = None) -> None:
        log.exception("handler for %s failed", message.method)
        self.answer_error(
            message.id, jsonrpc.INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}", tag=tag
        )

    def _receive_notification(self, message: Notification) -> None:
        if self.tracer is not None:
            tag = self._tag_notification(message) if self._tag_notification is not None else None
            self.tracer.received(message, tag, None)
        if message.method == "notifications/cancelled":
            request_id = (message.params or {}).get("requestId")
            # Only a valid id can name a request (a list or object would not even hash).
            if isinstance(request_id, (int, str)) and not isinstance(request_id, bool):
                task = self._handling.pop(request_id, None)
                if task is not None:
                    task.cancel()
        if self._on_notification is not None:
            self._on_notification(message)

    def cancel_handling(self, request_id: RequestId) -> bool:
        """Stop answering the other side's request ``request_id``, as its
        ``notifications/cancelled`` would (no response is sent); False if none is running."""
        task = self._handling.pop(request_id, None)
        if task is None:
            return False
        task.cancel()
        return True

    def answer(self, mcp_id: RequestId, result: JSONObject, *, tag: Any = None) -> None:
        """Send a success response (traced with the ``tag`` of the request it answers)."""
        self._try_emit(jsonrpc.response(mcp_id, result), tag)

    def answer_error(
        self, mcp_id: RequestId | None, code: int, message: str, data: Any = None, *, tag: Any = None
    ) -> None:
        """Send an error response."""
        self._try_emit(jsonrpc.error_response(mcp_id, code, message, data), tag)

    def _try_emit(self, message: JSONObject, tag: Any) -> None:
        with contextlib.suppress(TransportError):  # the other side left; no reader
            self._emit(message, tag)

    # -- end --------------------------------------------------------------------------

    def close(self, error: ToolrelayError) -> None:
        """Fail every pending request at once with ``error``; refuse new ones."""
        if self._closed is None:
            self._closed = error
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        pending, self._pending = self._pending, {}
        for entry in pending.values():
            if not entry.future.done():
                entry.future.set_exception(error)
        for task in list(self._handling.values()):
            task.cancel()

    @property
    def closed(self) -> ToolrelayError | None:
        return self._closed
