"""One event stream for the shared servers and model client, one transcript per task.

The servers and the model client of a batch process are shared by its tasks, so they
emit on one stream; ``TaskRouter`` hands each of their events to the stream of the task
it belongs to. A task runs inside ``router.task(stream)``, which marks its asyncio
context: everything its relay does (model requests and streams, each call's parse,
route, ``tools/call`` and outcome) is emitted from that context.

An MCP message is routed by the MCP side alone: when a request goes out, the router
notes whose it is under (server, connection, JSON-RPC id); its answer, its cancellation
and what the server sends during it name that request (``McpMessage.belongs_to``), and
go where it went, whatever asyncio context they arrive in (a connection's own reader, a
timer another task armed). Never by the model's call_id: call_ids are unique only within
one run, and the tasks of a batch repeat them (``call_1`` in every task).

Events of no task are the servers': before any task ran (start-up, handshake, tool
lists) they are kept as the ``preamble`` every transcript starts with; later (a server's
exit, a changed tool list) every running task gets them, since each of those runs saw it
happen. A request sent outside any task is the servers' too, and so is its answer.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any, Final

from ..events import MCP_REQUEST, MCP_RESPONSE, Event, EventStream, McpMessage

__all__ = ["TaskRouter"]

_Key = tuple[str, int, int | str]
"""(server, connection, JSON-RPC id) of a request of ours."""


class _Task:
    """A running task's stream and the requests it sent (compared by identity)."""

    __slots__ = ("requests", "stream")

    def __init__(self, stream: EventStream) -> None:
        self.stream = stream
        self.requests: set[_Key] = set()


_SERVERS: Final = _Task(EventStream(flood=None))
"""The owner of the requests sent outside any task (start-up, a re-list): the servers' lane."""

_TASK: contextvars.ContextVar[_Task | None] = contextvars.ContextVar("toolrelay_batch_task", default=None)


class TaskRouter:
    """The shared stream's subscriber: each event to its task's stream."""

    def __init__(self) -> None:
        self.preamble: list[dict[str, Any]] = []
        """The records of the events before the first task (servers starting, their tools)."""
        self._started = False
        self._running: set[_Task] = set()
        self._owners: dict[_Key, _Task] = {}

    @contextlib.contextmanager
    def task(self, stream: EventStream) -> Iterator[None]:
        """Route the events of the code run inside to ``stream``."""
        self._started = True
        task = _Task(stream)
        self._running.add(task)
        token = _TASK.set(task)
        try:
            yield
        finally:
            _TASK.reset(token)
            self._running.discard(task)
            for key in task.requests:
                self._owners.pop(key, None)

    def __call__(self, event: Event) -> None:
        owner = None
        if isinstance(event, McpMessage) and event.belongs_to is not None:
            owner = self._request_owner(event, event.belongs_to)
        if owner is None:
            owner = _TASK.get()
        if owner is not None and owner is not _SERVERS:
            if owner in self._running:
                owner.stream.emit(event)
        elif getattr(event, "call_id", None) is None:
            self._servers(event)
        # else: a late message of a task that has ended: its transcript is closed

    def _request_owner(self, event: McpMessage, request: int | str) -> _Task | None:
        """Whose request ``event`` belongs to: noted as it goes out, forgotten once answered."""
        key = (event.server, event.connection, request)
        if event.role == MCP_REQUEST:
            owner = _TASK.get() or _SERVERS
            self._owners[key] = owner
            owner.requests.add(key)
            return owner
        found = self._owners.get(key)
        if event.role == MCP_RESPONSE and found is not None:  # a request is answered once
            del self._owners[key]
            found.requests.discard(key)
        return found

    def _servers(self, event: Event) -> None:
        """An event of no task: the preamble before the first task, else every running task's."""
        if not self._started:
            self.preamble.append(event.to_record())
        else:
            for task in list(self._running):
                task.stream.emit(event)
