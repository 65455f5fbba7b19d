"""The host calls in flight, and what an upstream sends during one, passed on to its host.

Each host ``tools/call`` the forwarder sends upstream is a ``HostCall`` under the proxy's
key for it (unique in the run, whichever host sent it); the upstream request carries the
key as its ``call_id``, so what the upstream sends during the call is told by the key
(``client/link.py`` tells which call a notification came during, never by a model's id).
Passed on to the host that made the call, in the host's session, on the call's stream:

- ``notifications/progress`` with the host's own ``progressToken`` (the upstream one is
  the proxy's: ``KEY-N``; a host that gave none gets no progress);
- ``notifications/message`` at or above the level the host set (``logging/setLevel`` is
  answered by the proxy, per host session: the upstream servers are shared by every host,
  so their own level stays their config entry's ``toolrelay.logLevel``); a log message
  that came during no call goes to every host that set a level.

A 2026-07-28 host has no session: its request carries what it wants told, and the
server stack gives the call that request's own stream (``server/request_stream.py``):
progress when the request has a ``progressToken``, log messages at and above the
request's ``io.modelcontextprotocol/logLevel`` (none without one), before its answer
(stdio: before the response; HTTP: an SSE response). A call that takes ``input_required``
rounds (``rounds.py``) reports on the round in progress: between rounds nobody listens,
so nothing is passed on. Its server asks are ``asks.py``'s. Each message passed on is
recorded (``ProxyRelayed``), the upstream token beside the host's.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import TransportError
from ..events import EventStream
from ..protocol import mcp as m
from ..protocol.jsonrpc import JSONObject, Notification, Request
from ..protocol.peer import Peer
from ..server.app import ServerSession
from ..server.request_stream import LOG_MESSAGE, RequestStream, at_least
from .records import ProxyRelayed

__all__ = ["HostCall", "HostCalls"]



@dataclass(slots=True, kw_only=True)
class HostCall:
    """One host ``tools/call`` in flight, and how to reach its host."""

    key: str
    request: Request
    protocol_version: str | None
    session: ServerSession | None
    """The host's session (2025 hosts); None for a 2026-07-28 host."""
    capabilities: JSONObject = field(default_factory=dict)
    """What the host declared: in ``initialize``, or in this request's envelope (2026-07-28)."""
    server: str | None = None
    """The upstream server it was sent to, once routed."""
    host: int | None = None
    """The number of the host's HTTP session (1, 2, ... as they opened); None on stdio."""
    stream: RequestStream | None = None
    """A 2026-07-28 host's: the stream of its request in progress (None between rounds)."""
    round_request: Request | None = None
    """That request (a retry's, once the call takes rounds); None: ``request``."""
    cancel_reason: str | None = None
    """Why the proxy itself cancels the call (a 2026-07-28 host that never retried), if it does."""
    task_id: str | None = None
    """A host's task (``tasks.py``): the proxy's id of it, which what the upstream asks
    during the task names as its related task; None for a plain call."""
    ask: Callable[[HostCall, str, JSONObject, Any], Awaitable[tuple[JSONObject, JSONObject]]] | None = None
    """How a 2026-07-28 host is asked during its bridged task (``task_bridge.py``); None:
    by the call's ``input_required`` rounds (``asks.HostAsks.ask_modern``)."""
    ready: asyncio.Event | None = None
    """A bridged task's (``task_bridge.py``): set while the host's ``tasks/result`` waits,
    the 2025 way to be asked during a task; what the upstream asks waits for it."""
    between: bool = False
    """A host's task while no request of the host's about it is pending (``tasks.py``): what
    the upstream asks is asked of the host as no request's and recorded under the task
    (``key`` is the task's id; ``request`` the last one, answered already)."""
    lingering: bool = False
    """A host's task whose asks have moved on to a later request (``tasks.py``): kept only for
    an ask that came while this one was bound; no notification is passed on through it."""

    @property
    def peer(self) -> Peer | None:
        return self.session.peer if self.session is not None else None

    @property
    def current(self) -> Request:
        """The host request being answered now (the last round's, for a 2026-07-28 host)."""
        return self.round_request or self.request

    @property
    def progress_token(self) -> Any:
        if self.session is None:
            return self.stream.progress_token if self.stream is not None else None
        meta = (self.request.params or {}).get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None

    def declares(self, capability: str) -> bool:
        return isinstance(self.capabilities.get(capability), dict)


class HostCalls:
    """The calls in flight by key; passes each upstream notification on to its call's host."""

    def __init__(self, events: EventStream) -> None:
        self.events = events
        self._calls: dict[str, HostCall] = {}
        self._hosts: weakref.WeakKeyDictionary[ServerSession, int] = weakref.WeakKeyDictionary()
        self._numbers = itertools.count(1)

        self._sessions: weakref.WeakSet[ServerSession] = weakref.WeakSet()

    def track(self, session: ServerSession) -> None:
        """A host's session: told the log messages that belong to no call, once it sets a level."""
        self._sessions.add(session)

    def join(self, session: ServerSession) -> int:
        """Number an HTTP host's session (its messages and calls are recorded with it)."""
        self.track(session)
        number = self._hosts[session] = next(self._numbers)
        return number

    def number_of(self, session: ServerSession | None) -> int | None:
        return self._hosts.get(session) if session is not None else None

    def add(self, call: HostCall) -> None:
        self._calls[call.key] = call

    def remove(self, key: str) -> None:
        self._calls.pop(key, None)

    def get(self, key: str | None) -> HostCall | None:
        return self._calls.get(key) if key is not None else None

    def notified(self, server: str, note: Notification, key: str | None) -> None:
        """An upstream notification (``Connection.on_notification``): passed on to the host
        of the call it came during, when it is one a host is told."""
        call = self.get(key)
        if call is not None and (call.between or call.lingering):  # a task's, no request pending: no call's
            call = None
        if call is None and note.method == LOG_MESSAGE:
            self._log_for_all(server, note)
            return
        if call is None or call.server != server or (call.peer is None and call.stream is None):
            return
        if note.method == m.PROGRESS:
            self._progress(call, note)
        elif note.method == LOG_MESSAGE:
            self._log_message(call, note)

    def _progress(self, call: HostCall, note: Notification) -> None:
        token = call.progress_token
        if token is None:
            return
        params = dict(note.params or {})
        upstream_token = params.get("progressToken")
        params["progressToken"] = token
        self._pass_on(call, note, params, upstream_token=upstream_token)

    def _log_message(self, call: HostCall, note: Notification) -> None:
        params = note.params or {}
        if call.session is None and (call.stream is None or not call.stream.wants(note.method, params)):
            return  # 2026-07-28: only what the request asked for, or nothing
        wanted = call.session.log_level if call.session is not None else None
        if wanted is not None and not at_least(params.get("level"), wanted):
            return  # below what the host asked for
        self._pass_on(call, note, dict(params))

    def _log_for_all(self, server: str, note: Notification) -> None:
        """A log message of no call: to each host that asked for log messages (set a level)."""
        params = note.params or {}
        for session in list(self._sessions):
            wanted = session.log_level
            if wanted is None or not at_least(params.get("level"), wanted):
                continue
            if self.events.active:
                self.events.emit(ProxyRelayed(key="", host_id=None, server=server, method=note.method,
                                              upstream=note.raw, host=dict(params),
                                              to_host=self._hosts.get(session)))
            with contextlib.suppress(TransportError):
                session.peer.notify(note.method, dict(params))

    def _pass_on(self, call: HostCall, note: Notification, params: JSONObject, *,
                 upstream_token: Any = None) -> None:
        peer, stream = call.peer, call.stream
        if self.events.active:
            self.events.emit(ProxyRelayed(
                key=call.key, host_id=call.current.id, server=str(call.server), method=note.method,
                upstream=note.raw, host=params, upstream_token=upstream_token,
                host_token=params.get("progressToken") if upstream_token is not None else None,
                to_host=call.host))
        with contextlib.suppress(TransportError):  # the host left: its call is being cancelled
            if peer is not None:
                peer.notify(note.method, params, tag=call.request.id)  # over HTTP: on the call's stream
            elif stream is not None:
                stream.notify(note.method, params)  # 2026-07-28: on its request's own stream

