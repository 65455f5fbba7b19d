"""Link 1 for a streamed turn: the recorded events are the stream, and they are the response.

``model_response``, for each turn answered by server-sent events (``model_stream``):

- every event of the answered attempt is there, once and in order: their indexes run
  0, 1, 2, … and add up to the count the response records, and each ``sequence_number``
  follows the one before (a dropped, repeated or reordered event breaks the link);
- the deltas add up: each text, refusal, reasoning and arguments part's deltas make its
  ``.done`` text and the text of its item in ``output_item.done`` (a changed delta breaks
  it: the deltas are what a person saw on the screen);
- the events assemble (``protocol.stream.assemble``, the live path's assembler) to
  exactly the recorded response; the differences real streams have between their items
  and their final response (reasoning ``encrypted_content``, ``obfuscation`` padding) are
  the assembler's to allow, and any other difference it reports is named, as the run
  warned about it;
- a call that started before its response was complete (after its item closed: the
  call is known from that event on) was allowed to by the run's ``--early`` policy
  (read-only: the server annotated the tool ``readOnlyHint``), so no call with side
  effects ran for a response that then failed;
- a call started from its stream item that the completed response names as another call
  (another tool or other arguments under the same call_id), or drops, is the endpoint
  contradicting itself: recorded (``endpoint_inconsistency``), not a broken link of
  toolrelay's, as long as no output went back for it (the early result belongs to the call
  that ran, never to the one the final response names).

A turn of function calls streamed in the common shape (four events a call, compact JSON)
is judged in one pass that says what the assembler and the checks above would
(``stream_common.py``); any other turn, and any fault, is theirs.

Older transcripts have no stream events: nothing here applies to them.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import itemgetter, methodcaller
from typing import Any, Final

from ..protocol.responses import (
    FUNCTION_CALL,
    FUNCTION_CALL_ARGUMENTS_DELTA,
    FUNCTION_CALL_ARGUMENTS_DONE,
    MESSAGE,
    OUTPUT_ITEM_DONE,
    OUTPUT_TEXT,
    OUTPUT_TEXT_DELTA,
    OUTPUT_TEXT_DONE,
    REASONING_SUMMARY_TEXT_DELTA,
    REASONING_SUMMARY_TEXT_DONE,
    REASONING_TEXT_DELTA,
    REASONING_TEXT_DONE,
    REFUSAL,
    REFUSAL_DELTA,
    REFUSAL_DONE,
)
from ..relay.stages.arguments import clip
from ..relay.stages.result import status_words
from .evidence import call_finding, seqs_of
from .facts import RunFacts
from .jsonpath import excerpt, first_difference, json_equal
from .record import CallTrace, ModelRound, RunRecord, ends_stream
from .resource_reads import is_reader
from .stream_common import Fields, common_stream, stream_fields
from .verdict import ENDPOINT_INCONSISTENCY, Finding

__all__ = ["StreamBySeq", "check_streams", "early_start", "inconsistency"]

Event = dict[str, Any]
_INDEX = methodcaller("get", "index")
_SEQUENCE_NUMBER = methodcaller("get", "sequence_number")
_SEQ = itemgetter("seq")
Part = tuple[str, Any, Any]
"""(what, item, index): ``("text", output_index, content_index)``, ``("arguments", 3, None)``."""

_DELTAS: Final = {
    OUTPUT_TEXT_DELTA: ("text", "content_index"),
    REFUSAL_DELTA: ("refusal", "content_index"),
    FUNCTION_CALL_ARGUMENTS_DELTA: ("arguments", None),
    REASONING_SUMMARY_TEXT_DELTA: ("summary", "summary_index"),
    REASONING_TEXT_DELTA: ("reasoning", "content_index"),
}
_DONES: Final = {
    OUTPUT_TEXT_DONE: ("text", "content_index", "text"),
    REFUSAL_DONE: ("refusal", "content_index", "refusal"),
    FUNCTION_CALL_ARGUMENTS_DONE: ("arguments", None, "arguments"),
    REASONING_SUMMARY_TEXT_DONE: ("summary", "summary_index", "text"),
    REASONING_TEXT_DONE: ("reasoning", "content_index", "text"),
}


def check_streams(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """model_response: each streamed turn's events are whole, add up, and are its response."""
    early = run.run_start.get("early") if run.run_start else None
    findings: list[Finding] = []
    for current in run.rounds:
        if current.stream:
            findings.extend(_stream(current, facts))
            findings.extend(_of_calls(current, facts, early))
    return findings


def _of_calls(current: ModelRound, facts: RunFacts, early: Any) -> list[Finding]:
    """The turn's calls that started early, then the ones the endpoint contradicted (one
    walk over its calls for both)."""
    ended = current.response["seq"] if current.response else None
    started: list[tuple[CallTrace, Event]] = []
    contradicted: list[CallTrace] = []
    for call in current.calls:
        if call.closed_seq is not None:  # early_start(call, current), inline: it runs for every call
            parsed = call.parsed
            first = parsed[0] if parsed else (call.outcomes[0] if call.outcomes else None)
            if first is not None and (ended is None or first["seq"] < ended):
                started.append((call, first))
        if call.final_item is not None or call.dropped:  # inconsistency(call) is not None
            contradicted.append(call)
    if not started and not contradicted:
        return []
    closing = StreamBySeq(current)
    found = [_early_start(call, first, current, facts, early, closing) for call, first in started]
    found += [_inconsistent(call, current, facts, closing) for call in contradicted]
    return found


class StreamBySeq:
    """The turn's stream event of each seq (the first one, where a seq is repeated), made
    once for the turn's findings (and ``explain``'s lines), not looked for in the whole
    stream for each call."""

    def __init__(self, current: ModelRound) -> None:
        self._stream = current.stream
        self._positions: dict[Any, int] | None = None

    def position(self, seq: Any) -> int | None:
        if self._positions is None:
            stream = self._stream  # read from the end: the first event of a seq is the one kept
            backwards = range(len(stream) - 1, -1, -1)
            self._positions = dict(zip(map(_SEQ, reversed(stream)), backwards, strict=True))
        return self._positions.get(seq)

    def event(self, seq: Any) -> Event | None:
        position = self.position(seq)
        return None if position is None else self._stream[position]


def _stream(current: ModelRound, facts: RunFacts) -> list[Finding]:
    events = current.stream
    fields = stream_fields(events)  # the records read once, for both
    broken = _order(current, fields)
    common = common_stream(current, fields) if broken is None else None  # most turns: one pass, few parses
    if broken is None and common is None:
        shown = facts.stream_of(current)
        payloads = [event.payload or {} for event in shown]  # parsed once, as live
        read = next((n + 1 for n, event in enumerate(shown) if ends_stream(event)), len(shown))
        # the texts the assembler adds up end with the stream: a later event is a fault it reported
        broken = (_sequence(events, payloads) or _deltas(events[:read], payloads[:read])
                  or _assembly(current, facts))
    if broken is not None:
        message, where = broken
        return [_finding(current, False, message, "stream", *where)]
    problems: list[str] = []
    if common is None:
        assembled = facts.assembled(current)
        terminal, differences, problems = assembled.terminal, assembled.differences, assembled.problems
    else:
        terminal, differences = common  # a stream of the common shape has no fault to report
    said = f"{len(events)} stream events, whole and in order"
    if problems:  # faults of the endpoint's the live reader reported and read past, as the run did
        said += "; the run reported " + "; ".join(problems)
    said += "; their deltas add up"
    if current.answer is not None:
        said += f", and they assemble to the recorded response ({terminal})"
    else:
        said += f"; the stream ended {terminal or 'before its end'} (no response recorded)"
    if differences:
        said += "; its items differ from its final response as the run warned: " + "; ".join(differences)
    return [_finding(current, True, said, "stream", events[0], events[-1])]


def _finding(current: ModelRound, ok: bool, message: str, check: str, *events: Event | None) -> Finding:
    return Finding(link="model_response", ok=ok, check=check, turn=current.turn,
                   message=f"turn {current.turn}: {message}", seqs=seqs_of(*events, current.response))


Broken = tuple[str, tuple[Event | None, ...]]
"""What is wrong, and the events it rests on."""


def _order(current: ModelRound, fields: Fields | None) -> Broken | None:
    """Each event of the answered attempt once, in order, and as many as the response says
    (``fields``: the stream's ``stream_fields``)."""
    attempt = current.request.get("attempt", 1) if current.request else 1
    stream = current.stream
    whole = type(attempt) is int and _whole(stream, attempt, fields)
    previous: Event | None = None
    for position, event in enumerate(() if whole else stream):  # compared in C; the fault found here
        if event.get("index") != position:
            return (f"stream event {event.get('index')} follows event "
                    f"{previous.get('index') if previous else 'none'}: an event of the stream is missing, "
                    "repeated or out of order", (previous, event))
        if event.get("attempt", attempt) != attempt:
            said = f"stream event {position} belongs to attempt {event.get('attempt')}, not {attempt}"
            return said, (event,)
        previous = event
    count = current.response.get("stream_events") if current.response else None
    if isinstance(count, int) and count and count != len(current.stream):
        return (f"the response records {count} stream events, the transcript holds {len(current.stream)}: "
                "events are missing or added", (current.stream[-1],))
    return None


def _whole(stream: list[Event], attempt: int, fields: Fields | None) -> bool:
    """Whether the events' indexes run 0, 1, 2, … and each is of ``attempt`` (compared in C)."""
    if fields is None:  # an event without one of them (or no event): read one by one
        return (list(map(_INDEX, stream)) == list(range(len(stream)))
                and list(map(methodcaller("get", "attempt", attempt), stream)).count(attempt) == len(stream))
    indexes, attempts, _ = fields
    return list(indexes) == list(range(len(stream))) and attempts.count(attempt) == len(stream)


def _sequence(events: list[Event], payloads: list[dict[str, Any]]) -> Broken | None:
    """Each ``sequence_number`` one more than the last (endpoints that send none are let be)."""
    if _consecutive(list(map(_SEQUENCE_NUMBER, payloads))):
        return None  # every event numbered, one after another (compared in C)
    last: tuple[int, Event] | None = None
    for event, payload in zip(events, payloads, strict=True):
        number = payload.get("sequence_number")
        if not isinstance(number, int) or isinstance(number, bool):
            continue
        if last is not None and number != last[0] + 1:
            return (f"stream event {event.get('index')} has sequence_number {number} after {last[0]}: "
                    "the events were reordered, or one is missing", (last[1], event))
        last = (number, event)
    return None


def _consecutive(numbers: list[Any]) -> bool:
    """Whether ``numbers`` are ints (not bools), each one more than the one before."""
    if not numbers or set(map(type, numbers)) != {int}:
        return False
    return numbers == list(range(numbers[0], numbers[0] + len(numbers)))


def _deltas(events: list[Event], payloads: list[dict[str, Any]]) -> Broken | None:
    """Each part's deltas make its ``.done`` text and its item's text."""
    sums: dict[Part, list[str]] = {}
    last: dict[Part, Event] = {}
    for event, payload in zip(events, payloads, strict=True):
        kind = payload.get("type")
        if kind in _DELTAS:
            what, index_field = _DELTAS[kind]
            part = (what, _item_key(payload), payload.get(index_field) if index_field else None)
            sums.setdefault(part, []).append(str(payload.get("delta", "")))
            last[part] = event
            continue
        if kind not in _DONES and kind != OUTPUT_ITEM_DONE:
            continue  # states no whole text
        for part, text in _finished_parts(kind, payload):
            if part in sums and "".join(sums[part]) != text:
                said = f"{excerpt(''.join(sums[part]))} is not the {kind} text {excerpt(text)}"
                return f"the {part[0]} deltas of output item {part[1]} add up to {said}", (last[part], event)
    return None


def _finished_parts(kind: Any, payload: dict[str, Any]) -> Iterator[tuple[Part, str]]:
    """The whole texts an event states: a ``.done`` event's, or its item's parts."""
    if kind in _DONES:
        what, index_field, text_field = _DONES[kind]
        text = payload.get(text_field)
        if isinstance(text, str):
            yield (what, _item_key(payload), payload.get(index_field) if index_field else None), text
    elif kind == OUTPUT_ITEM_DONE and isinstance(payload.get("item"), dict):
        item = payload["item"]
        index = payload.get("output_index")
        key = index if isinstance(index, int) else item.get("id")  # _item_key, the item's id its item_id
        if item.get("type") == FUNCTION_CALL and isinstance(item.get("arguments"), str):
            yield ("arguments", key, None), item["arguments"]
        if item.get("type") == MESSAGE and isinstance(item.get("content"), list):
            for index, part in enumerate(item["content"]):
                if isinstance(part, dict) and part.get("type") in (OUTPUT_TEXT, REFUSAL):
                    what = "text" if part.get("type") == OUTPUT_TEXT else "refusal"
                    if isinstance(part.get(what), str):
                        yield (what, key, index), part[what]


def _item_key(payload: dict[str, Any]) -> Any:
    """Which output item an event is about: its output_index (its item_id where it has none)."""
    index = payload.get("output_index")
    return index if isinstance(index, int) else payload.get("item_id")


def _assembly(current: ModelRound, facts: RunFacts) -> Broken | None:
    """The recorded response is what the events assemble to."""
    recorded = current.answer
    if recorded is None:
        return None
    assembled = facts.assembled(current).response
    if assembled is None:
        return "the stream events assemble to no response, yet a response is recorded", (current.response,)
    if json_equal(assembled, recorded):
        return None
    path = first_difference(assembled, recorded)
    return (f"the recorded response is not what its {len(current.stream)} stream events assemble to: "
            f"it departs at {path}", (current.stream[-1], current.response))


def early_start(call: CallTrace, current: ModelRound) -> Event | None:
    """The call's first event when it came before its response was recorded (it started
    while the response was streaming), else None."""
    if call.closed_seq is None:
        return None
    return _started_before(call, current.response["seq"] if current.response else None)


def _started_before(call: CallTrace, ended: Any) -> Event | None:
    """The call's first event when it came before seq ``ended`` (or no response was recorded)."""
    first = call.parsed[0] if call.parsed else (call.outcomes[0] if call.outcomes else None)
    if first is None:
        return None
    return first if ended is None or first["seq"] < ended else None


def _early_start(call: CallTrace, first: Event, current: ModelRound, facts: RunFacts, early: Any,
                 closing: StreamBySeq) -> Finding:
    """A call that started (``first``: its first event) before its response was complete:
    after its item closed, and as the run's policy allows (words made when first read)."""
    problem = _not_allowed(call, facts, early)
    if problem is not None:
        said = f"{_when(call, first, current, closing)}, {problem}"
        return call_finding(call, "model_response", False, said, "early_start", first)
    allowed = "the run allowed early calls of every tool" if early == "all" else (
        "its tool is annotated readOnlyHint, as --early read-only asks")
    return call_finding(call, "model_response", True,
                        lambda: f"{_when(call, first, current, closing)}, as its item closed; {allowed}",
                        "early_start", first)


def _when(call: CallTrace, first: Event, current: ModelRound, closing: StreamBySeq) -> str:
    into, at = _seconds(first, current.request), _stream_index(call, current, closing)
    return f"{call.call_id} started {into} into the response, at stream event {at}"


def inconsistency(call: CallTrace) -> str | None:
    """How the completed response contradicts the stream item a call started from, in
    words (``explain`` and ``view`` say the same), else None."""
    final = call.final_item
    if final is None and not call.dropped:
        return None  # the response confirmed the call as it started (asked of every call)
    started = _as_called(call.item)
    if call.dropped or final is None:
        return f"{call.call_id}'s item closed in the stream as {started}, and the final response drops it"
    return (f"{call.call_id}'s item closed in the stream as {started}, but the final response says "
            f"{call.call_id} is {_as_called(final)}")


def _as_called(item: dict[str, Any]) -> str:
    """A function_call item as ``name {arguments text}``."""
    arguments = item.get("arguments")
    return f"{item.get('name')} {clip(arguments, 200) if isinstance(arguments, str) else excerpt(arguments)}"


def _inconsistent(call: CallTrace, current: ModelRound, facts: RunFacts, closing: StreamBySeq) -> Finding:
    """An endpoint inconsistency is recorded, not toolrelay's broken link, unless an output
    went back for the call anyway (the early result then stood in for another call)."""
    said = inconsistency(call)
    closed = closing.event(call.closed_seq)
    if call.feedbacks or facts.sent_after(call):
        whose = "the final response's call" if call.final_item is not None else "a call the response drops"
        message = (f"turn {current.turn}: {said}; yet an output went back for {call.call_id}: the result of "
                   f"the call that ran was fed back as {whose}")
        return call_finding(call, "feedback", False, message, ENDPOINT_INCONSISTENCY, closed, *call.feedbacks)
    refused_by = (call.outcome or {}).get("refused_by")
    ran = status_words(call.status, refused_by) if call.status else "without an outcome"
    message = (f"turn {current.turn}: the endpoint contradicted itself (an endpoint inconsistency, "
               f"recorded): {said}; the call that started ended {ran}, and no output went back for it")
    if call.final_item is not None:
        message += f"; {call.final_item.get('name')} was not run"
    return call_finding(call, "model_response", True, message, ENDPOINT_INCONSISTENCY, closed)


def _not_allowed(call: CallTrace, facts: RunFacts, early: Any) -> str | None:
    if early is None or early == "all":
        return None  # an older transcript says no policy: when it started is still shown
    if early != "read-only":
        return f"yet the run's policy (--early {early}) lets no call start before its response is complete"
    routed = call.routed[0] if call.routed else {}
    listing = facts.listing_at(routed.get("server"), routed["seq"]) if routed else None
    tool = listing.tools.get(str(routed.get("tool"))) if listing is not None else None
    if listing is not None and is_reader(routed.get("tool"), listing.tools):
        return None  # the --expose-resources reader: toolrelay's own, and it only reads
    annotations = tool.get("annotations") if isinstance(tool, dict) else None
    if isinstance(annotations, dict) and annotations.get("readOnlyHint") is True:
        return None
    return "yet --early read-only starts only tools annotated readOnlyHint, and this one is not"


def _stream_index(call: CallTrace, current: ModelRound, closing: StreamBySeq) -> str:
    closed = closing.event(call.closed_seq)
    return f"{closed.get('index')} of {len(current.stream)}" if closed else "?"


def _seconds(event: Event, since: Event | None) -> str:
    start, at = (since or {}).get("time"), event.get("time")
    if not isinstance(start, int | float) or not isinstance(at, int | float):
        return "?"
    return f"{max(0.0, at - start):.2f} s"


