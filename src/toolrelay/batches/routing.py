"""One event stream for the shared servers and model client, one transcript per task.

The servers and the model client of a batch process are shared by its tasks, so they
emit on one stream; ``TaskRouter`` hands each of their events to the stream of the task
it belongs to. A task runs inside ``router.task(stream)``, which marks its asyncio
context: everything its relay does (model requests and streams, each call's parse,
route, ``tools/call`` and outcome) is emitted from that context. An answer that arrives
on a connection's own reader is not, but it carries the call_id of the request it
answers, which the router saw going out. Events of no task are the servers': before any
task ran (start-up, handshake, tool lists) they are kept as the ``preamble`` every
transcript starts with; later (a server's exit, a changed tool list) every running task
gets them, since each of those runs saw it happen.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

from ..events import Event, EventStream

__all__ = ["TaskRouter"]



class _Task:
    """A running task's stream and the call_ids it sent (compared by identity)."""

    __slots__ = ("call_ids", "stream")

    def __init__(self, stream: EventStream) -> None:
        self.stream = stream
        self.call_ids: set[str] = set()


_TASK: contextvars.ContextVar[_Task | None] = contextvars.ContextVar("toolrelay_batch_task", default=None)


class TaskRouter:
    """The shared stream's subscriber: each event to its task's stream."""

    def __init__(self) -> None:
        self.preamble: list[dict[str, Any]] = []
        """The records of the events before the first task (servers starting, their tools)."""
        self._started = False
        self._running: set[_Task] = set()
        self._owners: dict[str, _Task] = {}

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
            for call_id in task.call_ids:
                self._owners.pop(call_id, None)

    def __call__(self, event: Event) -> None:
        call_id = getattr(event, "call_id", None)
        owner = _TASK.get()
        if owner is None and isinstance(call_id, str):
            owner = self._owners.get(call_id)
        if owner is not None:
            if owner in self._running:
                if isinstance(call_id, str) and call_id not in self._owners:
                    self._owners[call_id] = owner
                    owner.call_ids.add(call_id)
                owner.stream.emit(event)
        elif isinstance(call_id, str):
            return  # a late answer for a task that has ended: its transcript is closed
        elif not self._started:
            self.preamble.append(event.to_record())
        else:
            for task in list(self._running):
                task.stream.emit(event)
