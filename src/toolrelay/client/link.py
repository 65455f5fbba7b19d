"""One link of a ``Connection``: a ``Peer`` over the server's transport, and the inbox
its transport delivers to.

Non-JSON lines are skipped and reported; a malformed answer whose id is readable fails
only the request it answers; oversized messages fail only the request they answer. What
the server asks is answered by the owner's ``host.ServerRequests``; what it notifies is
handed to the owner. The owner is a ``Connection`` (``connection.py``), known here only as
the ``LinkOwner`` it is, with its notices and its 2026-07-28 envelope passed in.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Protocol

from ..errors import MessageTooLarge, ProtocolError, ToolrelayError, TransportError
from ..events import Event, McpInvalid, ServerExitedEvent
from ..protocol import json_depth, jsonrpc
from ..protocol import mcp as m
from ..protocol.framing import Oversized, find_id
from ..protocol.jsonrpc import PARSE_ERROR, DecodeError, JSONObject, Notification, Request
from ..protocol.listen import ACKNOWLEDGED, subscription_id
from ..protocol.peer import Peer
from .refusals import malformed_answer_message, too_large_message
from .shutdown import forget_in_flight, track_in_flight
from .subscriptions import Listener
from .transport import ChannelEnd
from .transport_registry import transport_kind
from .wire_events import WireTracer

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from ..events import EventStream
    from .config import ServerConfig
    from .host import ServerRequests
    from .transport import ClientTransport

__all__ = ["Enveloped", "Link", "LinkOwner", "Noticed"]

_PREVIEW: Final = 200

Noticed = Callable[[str, str], None]
"""Tells the user something about the server: ``(level, text)``, a ``Notice``."""
Enveloped = Callable[[JSONObject | None], JSONObject | None]
"""Params with the 2026-07-28 envelope added when that is the era (else unchanged)."""


class LinkOwner(Protocol):
    """What a link needs of the connection it belongs to."""

    config: ServerConfig
    name: str
    events: EventStream
    transport: ClientTransport
    requests: ServerRequests
    """Answers what the server asks (roots, sampling, elicitation, tasks)."""
    on_tools_changed: Callable[[str], None] | None
    on_resources_changed: Callable[[str], None] | None
    on_notification: Callable[[str, Notification, str | None], None] | None
    """Told every notification: (server, notification, the call_id of the call it came during)."""

    async def renew_session(self, link: Link) -> None:
        """The server forgot our session (HTTP 404): handshake again on ``link``."""


class Link:
    """One connection number: a peer over the server's transport, and the inbox it fills."""

    def __init__(self, owner: LinkOwner, number: int, *, notice: Noticed, enveloped: Enveloped) -> None:
        self.owner = owner
        self._notice = notice
        self.config = owner.config
        self.number = number
        self.tracer = WireTracer(owner.events, owner.name, number)
        self.transport = owner.transport
        self.peer = Peer(self.transport.send, on_request=self._on_server_request,
                         on_notification=self._on_notification, tracer=self.tracer,
                         tag_request=self._call_of, tag_notification=self._notified_call)
        self.tracer.owner_of = self._owner_of
        self.ready = False
        self.closing = False
        self.end_reason: str | None = None
        """How this link ended ("exited (code 1)"), shown when the next one starts."""
        self._ended = False
        self._close_task: asyncio.Task[None] | None = None
        self._garbage_lines = 0
        self._carrier: jsonrpc.RequestId | None = None
        """While a message is dispatched: our request whose HTTP stream carried it."""
        self.listener = Listener(self.peer, owner.name, enveloped=enveloped, notice=notice)
        """Its ``subscriptions/listen`` request (2026-07-28; opened by the owner)."""
        self._notified: dict[str, Callable[[Notification], None]] = {
            m.TOOLS_CHANGED: self._tools_changed,
            m.PROGRESS: self._progress,
            m.RESOURCES_CHANGED: self._resources_changed,
            m.RESOURCE_UPDATED: self._resource_updated,
            ACKNOWLEDGED: self.listener.received,
        }
        """What each notification the server may send does (others are only recorded)."""

    async def connect(self) -> None:
        """Open the transport's channel (the handshake is the owner's)."""
        track_in_flight(self)
        await self.transport.open(self, connection=self.number)

    def cancel_in_flight(self, reason: str) -> None:
        """toolrelay is told to stop: every request still waiting is cancelled now, while
        the server can still read it (``shutdown.py`` stops the server after this)."""
        self.listener.quiet()
        self.peer.cancel_all(reason, TransportError(f"server {self.owner.name}: request given up: {reason}"))

    # -- the inbox ------------------------------------------------------------------------

    def received(self, data: bytes | Oversized, *, carrier: jsonrpc.RequestId | None = None) -> None:
        """One framed message from the server (``carrier``: ``transport.Inbox.received``)."""
        if type(data) is bytes:
            try:
                message = jsonrpc.decode(data)
            except DecodeError as exc:
                self._undecodable(data, exc)
                return
            self._carrier = carrier  # read by _owner_of while the peer dispatches it (no await)
            try:
                self.peer.receive(message)
            finally:
                self._carrier = None
        elif isinstance(data, Oversized):
            self._oversized(data)

    def awaiting(self, mcp_id: jsonrpc.RequestId) -> bool:
        return self.peer.pending_exchange(mcp_id) is not None

    def failed(self, mcp_id: jsonrpc.RequestId, error: ToolrelayError) -> None:
        self.peer.fail(mcp_id, error)

    def notice(self, text: str, *, level: str = "warning") -> None:
        self._notice(level, text)

    def ended(self, end: ChannelEnd) -> None:
        """The channel is over: fail everything pending at once, say how it ended."""
        if self._ended:
            return
        self._ended = True
        self.peer.close(end.error)
        if self.end_reason is None:
            self.end_reason = end.reason
        owner = self.owner
        if owner.events.active:
            owner.events.emit(ServerExitedEvent(server=owner.name, connection=self.number,
                                                returncode=end.returncode, stderr_tail=end.stderr_tail,
                                                expected=self.closing))

    def emit(self, event: Event) -> None:
        if self.owner.events.active:
            self.owner.events.emit(event)

    async def session_forgotten(self) -> None:
        await self.owner.renew_session(self)

    # -- what the server sent -------------------------------------------------------------

    def _call_of(self, request: Request) -> str | None:
        """The model's call a server request belongs to: its task's, or the one tools/call
        pending (with several, it cannot be told)."""
        owner = self.owner.requests.call_of(request)
        return owner if owner is not None else self._tag_of(self._owner_of(request))

    def _owner_of(self, message: Request | Notification) -> jsonrpc.RequestId | None:
        """Our request a server request or notification came during, told by the MCP side
        alone (never by call_id, which the tasks of a batch repeat): a tool task's
        ``tools/call``; for a notification, a progress one's by its token (none if no
        pending request sent it), another's the request whose HTTP stream carried it; else
        the one tools/call pending (with several, what arrives on stdio cannot be told)."""
        if isinstance(message, Request):
            task_call = self.owner.requests.tool_task_request(message)
            if task_call is not None:
                return task_call
        elif subscription_id(message.raw) is not None:
            return None  # of the listen request: the server's lane, whatever call is pending
        elif message.method == m.PROGRESS:
            return self.peer.pending_with_token(_params(message).get("progressToken"))
        elif self._carrier is not None:
            return self._carrier
        pending = self.peer.pending_ids(m.CALL_TOOL)
        return pending[0] if len(pending) == 1 else None

    def _tag_of(self, mcp_id: jsonrpc.RequestId | None) -> str | None:
        """The call_id our pending request ``mcp_id`` was sent for, if any."""
        tag = self.peer.pending_tag(mcp_id) if mcp_id is not None else None
        return tag if isinstance(tag, str) else None

    def _on_server_request(self, request: Request) -> JSONObject | Awaitable[JSONObject]:
        if request.method == m.PING:
            return {}
        return self.owner.requests.answer(request, self._call_of(request), during=self._owner_of(request))

    def _notified_call(self, notification: Notification) -> str | None:
        """The model's call a notification belongs to: that of the request it came during."""
        return self._tag_of(self._owner_of(notification))

    def _on_notification(self, notification: Notification) -> None:
        handler = self._notified.get(notification.method)
        if handler is not None:
            handler(notification)
        told = self.owner.on_notification
        if told is not None:  # a proxy passes a call's progress and log messages on to its host
            try:
                told(self.owner.name, notification, self._notified_call(notification))
            except Exception as exc:  # the listener's problem must not break this connection
                said = f"server {self.owner.name}: handling {notification.method} failed: {exc}"
                self._notice("error", said)

    def _tools_changed(self, _notification: Notification) -> None:
        owner = self.owner
        if owner.on_tools_changed is not None:
            try:
                owner.on_tools_changed(owner.name)
            except Exception as exc:  # the catalog's problem must not break this connection
                self._notice("error", f"server {owner.name}: handling tools/list_changed failed: {exc}")

    def _resources_changed(self, _notification: Notification) -> None:
        owner = self.owner
        if owner.on_resources_changed is not None:
            owner.on_resources_changed(owner.name)  # only marks: the catalog re-lists before a turn

    def _resource_updated(self, notification: Notification) -> None:
        """A resource toolrelay subscribed to changed: the user is told which (a notice)."""
        uri = _params(notification).get("uri")
        shown = uri if isinstance(uri, str) else "(no uri given)"
        self._notice("info", f"server {self.owner.name}: resource {shown} was updated")

    def _progress(self, notification: Notification) -> None:
        """The call is still being worked on: its idle timeout starts again (up to its
        maximum). Progress for no pending call is recorded and otherwise ignored."""
        mcp_id = self.peer.pending_with_token(_params(notification).get("progressToken"))
        if mcp_id is not None:
            self.peer.renew(mcp_id)

    def _undecodable(self, line: bytes, exc: DecodeError) -> None:
        if not line.strip():
            return
        if exc.id is not None and exc.code != PARSE_ERROR:
            self._malformed(line, exc, exc.id)
            return
        if exc.id is not None and self._unreadable_answer(line, exc, exc.id):
            return
        self._garbage_lines += 1
        preview = line[:_PREVIEW].decode("utf-8", "replace")
        self._invalid(f"not a JSON-RPC message ({exc.message}); skipped", preview)
        self._log_note(f"skipped a line on stdout that is not JSON-RPC: {preview!r}")  # stdio only: a log
        if self._garbage_lines == 1:  # in the words of its transport: "printed ... on stdout"
            said = transport_kind(self.config.transport, self.owner.name).not_json_rpc
            self._notice("warning", f"server {self.owner.name} {said} (skipped): {preview!r}")

    def _unreadable_answer(self, line: bytes, exc: DecodeError, mcp_id: jsonrpc.RequestId) -> bool:
        """Not JSON we read (nested too deep), but its id is readable: the request it answers
        fails at once instead of waiting out its timeout. False when nothing waits for it."""
        exchange = self.peer.pending_exchange(mcp_id)
        if exchange is None:
            return False
        self._invalid(exc.message, line[:_PREVIEW].decode("utf-8", "replace"))
        reason = malformed_answer_message(self.owner.name, exchange.method, mcp_id, exc.message)
        self.peer.fail(mcp_id, ProtocolError(reason))
        return True

    def _malformed(self, line: bytes, exc: DecodeError, mcp_id: jsonrpc.RequestId) -> None:
        """Valid JSON, invalid message, readable id: answer it, or fail our request (its answer
        recorded as its response, as received: what the protocol error rests on)."""
        try:
            raw = json_depth.loads(line)
        except ValueError:
            raw = None
        if isinstance(raw, dict) and "method" in raw:
            self.peer.answer_error(mcp_id, exc.code, exc.message)
            return
        exchange = self.peer.pending_exchange(mcp_id)
        if exchange is None or not isinstance(raw, dict):
            self._invalid(exc.message, line[:_PREVIEW].decode("utf-8", "replace"))
            return
        self.tracer.malformed_answer(raw, mcp_id, time.monotonic() - exchange.started)
        reason = malformed_answer_message(self.owner.name, exchange.method, mcp_id, exc.message)
        self.peer.fail(mcp_id, ProtocolError(reason))

    def _oversized(self, marker: Oversized) -> None:
        mcp_id = find_id(marker)
        exchange = self.peer.pending_exchange(mcp_id) if mcp_id is not None else None
        limit = self.config.max_message_bytes
        if exchange is not None:
            reason = too_large_message(exchange.method, mcp_id, marker.size, limit)
            self.peer.fail(exchange.mcp_id, MessageTooLarge(reason))
        else:
            reason = too_large_message(None, None, marker.size, limit)
        text = f"server {self.owner.name}: {reason}; refused (the connection stays open)"
        self._invalid(reason, marker.head[:_PREVIEW].decode("utf-8", "replace"))
        self._notice("warning", text)
        self._log_note(text)

    def _invalid(self, reason: str, preview: str) -> None:
        events = self.owner.events
        if events.active:
            events.emit(McpInvalid(server=self.owner.name, connection=self.tracer.connection,
                                   reason=reason, preview=preview))

    def _log_note(self, text: str) -> None:
        """A line of toolrelay's own in the server's log, when it has one."""
        log = self.transport.log
        if log is not None:
            log.note(text)

    # -- end ------------------------------------------------------------------------------

    async def close(self) -> None:
        if self._close_task is None:
            self._close_task = asyncio.ensure_future(self._close())
        await asyncio.shield(self._close_task)

    async def _close(self) -> None:
        forget_in_flight(self)
        self.closing = True
        await self.listener.stop()  # cancelled while the server can still read it
        closed = TransportError(f"connection to server {self.owner.name} was closed")
        self.peer.close(closed)
        await self.transport.close()
        self.ended(ChannelEnd(error=closed, reason="was closed"))  # unless the transport told its end


def _params(notification: Notification) -> JSONObject:
    params = notification.params
    return params if isinstance(params, dict) else {}
