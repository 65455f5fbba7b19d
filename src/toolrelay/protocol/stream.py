"""A streamed Responses answer, assembled from its server-sent events (sans-IO, pure).

``StreamAssembler.feed(event)`` takes each ``StreamEvent`` in the order received and
returns what it means now (``Update`` values: a text delta, an item that closed, the
end of the response, a problem with the stream); ``finish()`` gives the ``Assembled``
result after the last event, or after a cut. ``assemble(events)`` does both at once:
``verify`` re-runs it on the recorded events and compares.

Real streams differ from the spec (../shared/notes/streaming-batch.md §A), and every
difference below is tolerated, never an exception:

- ``function_call_arguments.done`` carries no ``name`` on the live API: the name (and the
  ``call_id``) are the item's, from ``output_item.added`` / ``.done``;
- some servers send ``response.completed`` with an empty ``output``: the response is then
  built from the ``output_item.done`` items; a non-empty ``output`` is the one used, and
  where it differs from those items the difference is recorded (``differences``);
- a reasoning item's ``encrypted_content`` differs between ``added``, ``done`` and
  ``completed``: the ``done`` one is kept, never the ``added`` one, and the difference is
  a known one (not listed); so is ``obfuscation`` padding on deltas;
- local servers omit ``sequence_number``, or done events (an item without
  ``output_item.done`` is built from its ``added`` item and its deltas);
- event types not listed in ``protocol.responses`` are kept and ignored.

What is out of order is reported as a ``StreamProblem`` (and in ``Assembled.problems``):
a ``sequence_number`` that goes back or skips, content before its item, an item added
twice or whose id changes, deltas that do not add up to their done text, data that is
not a JSON object, events after the end.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from .responses import (
    FAILED,
    IN_PROGRESS,
    OUTPUT_ITEM_ADDED,
    OUTPUT_ITEM_DONE,
    RETRY_SAFE_STREAM_EVENTS,
    STREAM_ERROR,
    TERMINAL_STATUS,
)
from .sse import EventTooLarge, SseParser, StreamEvent
from .stream_items import ItemState, Located, build_item, compare_outputs, locate
from .stream_updates import (
    Assembled,
    ItemAdded,
    ItemDone,
    ReasoningDelta,
    RefusalDelta,
    StreamEnded,
    StreamFailed,
    StreamProblem,
    TextDelta,
    Update,
)

__all__ = [
    "Assembled",
    "EventTooLarge",
    "ItemAdded",
    "ItemDone",
    "ReasoningDelta",
    "RefusalDelta",
    "SseParser",
    "StreamAssembler",
    "StreamEnded",
    "StreamEvent",
    "StreamFailed",
    "StreamProblem",
    "TextDelta",
    "Update",
    "assemble",
]

_ERROR: Final = "error"
_MAX_GAP: Final = 1000
"""``Assembled.terminal`` after an ``error`` event."""


class StreamAssembler:
    """Reads one attempt's stream, event by event; see the module docstring."""

    def __init__(self) -> None:
        self._shell: dict[str, Any] | None = None
        """The latest Response of created / in_progress / queued."""
        self._items: dict[int, ItemState] = {}
        self._ids: dict[str, int] = {}
        """item id → output_index."""
        self._terminal: str | None = None
        self._final: dict[str, Any] | None = None
        """The terminal event's Response."""
        self._error: dict[str, Any] | None = None
        self._last_sequence: int | None = None
        self._missing: set[int] = set()
        """Sequence numbers skipped so far: a late one is out of order, one never seen is missing."""
        self._problems: list[str] = []
        self._retry_safe = True
        self._events = 0

    @property
    def events(self) -> int:
        """Events fed so far."""
        return self._events

    @property
    def ended(self) -> bool:
        """A terminal event (completed / incomplete / failed) or an ``error`` event arrived."""
        return self._terminal is not None

    def feed(self, event: StreamEvent) -> list[Update]:
        """What ``event`` means, given every event before it."""
        self._events += 1
        updates: list[Update] = []
        payload = event.payload
        said = payload.get("type") if payload is not None else None
        kind = said if isinstance(said, str) else event.event
        if kind not in RETRY_SAFE_STREAM_EVENTS:
            self._retry_safe = False
        if payload is None:
            if event.data.strip() != "[DONE]":  # the Chat Completions sentinel some servers add
                self._problem(event, "its data is not a JSON object", updates)
            return updates
        if "sequence_number" in payload:
            self._check_sequence(event, payload["sequence_number"], updates)
        if event.event is not None and said is not None and said != event.event:
            self._problem(event, f"its event field says {event.event!r} but its data says {kind!r}", updates)
        if self._terminal is not None:
            what = kind or "an event without a type"
            self._problem(event, f"{what} arrived after the response ended ({self._terminal})", updates)
            return updates
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(self, event, str(kind), payload, updates)
        return updates

    def finish(self) -> Assembled:
        """The result so far: after the last event, or after a cut (``terminal`` None)."""
        built = self._built()
        final = self._final
        used = final if final is not None and _nonempty_output(final) else built
        differences = []
        if used is final and final is not None and built is not None:
            differences = compare_outputs(final["output"], built["output"])
        problems = list(self._problems)
        if self._missing:
            numbers = sorted(self._missing)
            shown = ", ".join(str(n) for n in numbers[:10]) + (", ..." if len(numbers) > 10 else "")
            problems.append(f"sequence_number {shown} never arrived: {len(numbers)} "
                            f"event{'s' if len(numbers) > 1 else ''} missing")
        return Assembled(response=used, built=built, terminal=self._terminal, differences=differences,
                         problems=problems, retry_safe=self._retry_safe)

    # -- what each event type does ------------------------------------------------------

    def _response_started(
        self, event: StreamEvent, kind: str, payload: dict[str, Any], updates: list[Update]
    ) -> None:
        response = payload.get("response")
        if isinstance(response, dict):
            self._shell = response

    def _item_added(
        self, event: StreamEvent, kind: str, payload: dict[str, Any], updates: list[Update]
    ) -> None:
        item = payload.get("item")
        if not isinstance(item, dict):
            self._problem(event, "output_item.added without an item object", updates)
            return
        index = _index(payload.get("output_index"))
        index = len(self._items) if index is None else index
        state = self._items.get(index)
        if state is not None and state.added is not None:
            self._problem(event, f"a second item was added at output_index {index}", updates)
        state = self._items[index] = state if state is not None and state.added is None else ItemState()
        state.added = item
        self._remember_id(item, index)
        updates.append(ItemAdded(output_index=index, item=item))

    def _item_done(
        self, event: StreamEvent, kind: str, payload: dict[str, Any], updates: list[Update]
    ) -> None:
        item = payload.get("item")
        if not isinstance(item, dict):
            self._problem(event, "output_item.done without an item object", updates)
            return
        index = _index(payload.get("output_index"))
        if index is None:
            item_id = item.get("id")
            index = self._ids.get(item_id) if isinstance(item_id, str) else None
            index = len(self._items) if index is None else index
        state = self._items.setdefault(index, ItemState())
        added_id = state.added.get("id") if state.added is not None else None
        if added_id is not None and item.get("id") != added_id:
            self._problem(event, f"the item at output_index {index} changed id from {added_id!r} to "
                                 f"{item.get('id')!r}", updates)
        if state.done is not None:
            self._problem(event, f"output_index {index} was done twice", updates)
        state.done = item
        self._remember_id(item, index)
        for text in state.mismatches():
            self._problem(event, text, updates)
        updates.append(ItemDone(output_index=index, item=build_item(state, None)))

    def _content(
        self, event: StreamEvent, kind: str, payload: dict[str, Any], updates: list[Update]
    ) -> None:
        located = self._locate(event, kind, payload, updates)
        if located is None:
            return
        state, index, item_id = located
        update = state.take(kind, payload, index, item_id)
        if isinstance(update, str):
            self._problem(event, update, updates)
        elif update is not None:
            updates.append(update)

    def _ended(
        self, event: StreamEvent, kind: str, payload: dict[str, Any], updates: list[Update]
    ) -> None:
        status = TERMINAL_STATUS.get(kind, FAILED)
        self._terminal = status
        response = payload.get("response")
        final = self._final = response if isinstance(response, dict) else None
        used = final if final is not None and _nonempty_output(final) else self._built()
        updates.append(StreamEnded(status=status, response=used))

    def _failed(
        self, event: StreamEvent, kind: str, payload: dict[str, Any], updates: list[Update]
    ) -> None:
        nested = payload.get("error")
        fields: dict[str, Any] = nested if isinstance(nested, dict) else payload
        code, message, param = (_text(fields.get(key)) for key in ("code", "message", "param"))
        self._terminal = _ERROR
        self._error = {"code": code, "message": message or "the stream ended with an error event"}
        updates.append(StreamFailed(code=code, message=message, param=param))

    # -- helpers ----------------------------------------------------------------------------

    def _locate(
        self, event: StreamEvent, kind: str, payload: dict[str, Any], updates: list[Update]
    ) -> Located | None:
        found = locate(payload, self._items, self._ids)
        if found is None:
            self._problem(event, f"{kind} names no item (no output_index or item_id)", updates)
            return None
        state, index, item_id, known = found
        if not known:
            self._problem(event, f"{kind} arrived before its item (output_index {index})", updates)
            self._items[index] = state
        return state, index, item_id

    def _remember_id(self, item: dict[str, Any], index: int) -> None:
        item_id = item.get("id")
        if isinstance(item_id, str):
            self._ids[item_id] = index

    def _check_sequence(self, event: StreamEvent, number: Any, updates: list[Update]) -> None:
        if not isinstance(number, int) or isinstance(number, bool):
            return  # local servers send none: nothing to check
        last = self._last_sequence
        if last is None:
            if number != 0:
                self._problem(event, f"the first sequence_number is {number}, not 0", updates)
        elif number <= last:
            late = number in self._missing
            self._missing.discard(number)
            self._problem(event, f"sequence_number {number} after {last}: "
                                 f"{'out of order' if late else 'a repeat'}", updates)
        elif number > last + 1:
            if number - last > _MAX_GAP:  # not worth remembering each: said now
                self._problem(event, f"sequence_number jumps from {last} to {number}", updates)
            else:
                self._missing.update(range(last + 1, number))
        self._last_sequence = number if last is None else max(last, number)

    def _problem(self, event: StreamEvent, text: str, updates: list[Update]) -> None:
        said = f"event {event.index} ({event.type or 'no type'}): {text}"
        self._problems.append(said)
        updates.append(StreamProblem(index=event.index, text=said))

    def _built(self) -> dict[str, Any] | None:
        """The Response from the shell (or terminal Response) and the items, or None."""
        base = self._final if self._final is not None else self._shell
        if base is None and not self._items and self._terminal is None:
            return None
        built: dict[str, Any] = dict(base) if base is not None else {"object": "response"}
        status = self._terminal
        built["output"] = [build_item(self._items[index], status) for index in sorted(self._items)]
        if status == _ERROR:
            built["status"] = FAILED
            built["error"] = self._error
        elif status is not None:  # the terminal Response's own status, unless it still says in progress
            said = self._final.get("status") if self._final is not None else None
            built["status"] = said if isinstance(said, str) and said != IN_PROGRESS else status
        return built


_HANDLERS: Final = {
    **dict.fromkeys(RETRY_SAFE_STREAM_EVENTS, StreamAssembler._response_started),
    OUTPUT_ITEM_ADDED: StreamAssembler._item_added,
    OUTPUT_ITEM_DONE: StreamAssembler._item_done,
    **dict.fromkeys(ItemState.CONTENT_EVENTS, StreamAssembler._content),
    **dict.fromkeys(TERMINAL_STATUS, StreamAssembler._ended),
    STREAM_ERROR: StreamAssembler._failed,
}


def assemble(events: Iterable[StreamEvent]) -> Assembled:
    """Feed every event in order; the result (what ``verify`` re-derives from a transcript)."""
    assembler = StreamAssembler()
    for event in events:
        assembler.feed(event)
    return assembler.finish()


def _index(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _nonempty_output(response: dict[str, Any]) -> bool:
    output = response.get("output")
    return isinstance(output, list) and len(output) > 0

