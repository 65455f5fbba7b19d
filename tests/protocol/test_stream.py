"""The stream assembler, alone: hand-built event sequences for each quirk real streams have
(../shared/notes/streaming-batch.md §A), order problems reported, garbage never fatal."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolrelay.protocol.sse import SseParser, StreamEvent
from toolrelay.protocol.stream import (
    ItemAdded,
    ItemDone,
    ReasoningDelta,
    RefusalDelta,
    StreamAssembler,
    StreamEnded,
    StreamFailed,
    StreamProblem,
    TextDelta,
    Update,
    assemble,
)

SHELL = {"id": "resp_1", "object": "response", "status": "in_progress", "output": [], "usage": None}
CALL = {"id": "fc_1", "type": "function_call", "status": "completed", "arguments": '{"a":1}',
        "call_id": "call_1", "name": "lookup"}
MESSAGE = {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": "Hi there", "annotations": []}]}
REASONING = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "gAAA-done"}
USAGE = {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}


def events(*payloads: dict[str, Any], numbered: bool = True) -> list[StreamEvent]:
    """SSE events with these payloads (``sequence_number`` in order unless one is given)."""
    found = []
    for index, payload in enumerate(payloads):
        data = {"sequence_number": index, **payload} if numbered else payload
        found.append(StreamEvent(index=index, event=payload.get("type"), data=json.dumps(data)))
    return found


def completed(output: list[dict[str, Any]] | None) -> dict[str, Any]:
    return {"type": "response.completed",
            "response": {**SHELL, "status": "completed", "output": output, "usage": USAGE}}


def message_events(index: int = 0, deltas: tuple[str, ...] = ("Hi", " there")) -> list[dict[str, Any]]:
    where = {"item_id": "msg_1", "output_index": index, "content_index": 0}
    return [
        {"type": "response.output_item.added", "output_index": index,
         "item": {**MESSAGE, "status": "in_progress", "content": []}},
        {"type": "response.content_part.added", **where,
         "part": {"type": "output_text", "text": "", "annotations": []}},
        *({"type": "response.output_text.delta", **where, "delta": d, "obfuscation": "xyz"} for d in deltas),
        {"type": "response.output_text.done", **where, "text": "Hi there"},
        {"type": "response.content_part.done", **where, "part": MESSAGE["content"][0]},
        {"type": "response.output_item.done", "output_index": index, "item": MESSAGE},
    ]


def call_events(index: int = 1, *, done_item: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    where = {"item_id": "fc_1", "output_index": index}
    return [
        {"type": "response.output_item.added", "output_index": index,
         "item": {**CALL, "status": "in_progress", "arguments": ""}},
        {"type": "response.function_call_arguments.delta", **where, "delta": '{"a"', "obfuscation": "q"},
        {"type": "response.function_call_arguments.delta", **where, "delta": ":1}", "obfuscation": "r"},
        {"type": "response.function_call_arguments.done", **where, "arguments": '{"a":1}'},  # no name
        {"type": "response.output_item.done", "output_index": index, "item": done_item or CALL},
    ]


def start() -> list[dict[str, Any]]:
    return [{"type": "response.created", "response": SHELL},
            {"type": "response.in_progress", "response": SHELL}]


def feed_all(stream: list[StreamEvent]) -> tuple[list[Update], StreamAssembler]:
    assembler = StreamAssembler()
    return [update for event in stream for update in assembler.feed(event)], assembler


# -- a whole response ---------------------------------------------------------------------------------


def test_a_text_and_call_turn_gives_its_updates_in_order_and_the_completed_response() -> None:
    final = completed([MESSAGE, CALL])
    updates, assembler = feed_all(events(*start(), *message_events(), *call_events(), final))
    assert updates == [
        ItemAdded(output_index=0, item={**MESSAGE, "status": "in_progress", "content": []}),
        TextDelta(output_index=0, item_id="msg_1", content_index=0, delta="Hi"),
        TextDelta(output_index=0, item_id="msg_1", content_index=0, delta=" there"),
        ItemDone(output_index=0, item=MESSAGE),
        ItemAdded(output_index=1, item={**CALL, "status": "in_progress", "arguments": ""}),
        ItemDone(output_index=1, item=CALL),
        StreamEnded(status="completed", response=final["response"]),
    ]
    result = assembler.finish()
    assert result.response == final["response"] and result.terminal == "completed"
    assert result.built == {**final["response"], "output": [MESSAGE, CALL]}
    assert (result.differences, result.problems, result.retry_safe) == ([], [], False)


def test_an_empty_output_on_completed_is_built_from_the_done_items() -> None:
    for output in ([], None):
        result = assemble(events(*start(), *message_events(), *call_events(), completed(output)))
        assert result.response == {**SHELL, "status": "completed", "output": [MESSAGE, CALL], "usage": USAGE}
        assert result.response is result.built and result.differences == []


def test_the_name_and_call_id_come_from_the_item_when_the_done_item_lacks_them() -> None:
    bare_done = {**CALL, "name": "", "call_id": None}  # a proxy's output_item.done (CLIProxyAPI #1004)
    updates, assembler = feed_all(events(*start(), *call_events(0, done_item=bare_done), completed([])))
    done = [u for u in updates if isinstance(u, ItemDone)]
    assert done == [ItemDone(output_index=0, item=CALL)]
    assert assembler.finish().response["output"] == [CALL]  # type: ignore[index]


def test_reasoning_keeps_the_done_content_and_its_differences_are_known_ones() -> None:
    added = {**REASONING, "encrypted_content": "gAAA-added"}
    at_end = {**REASONING, "encrypted_content": "gAAA-completed"}
    stream = events(*start(), {"type": "response.output_item.added", "output_index": 0, "item": added},
                    {"type": "response.output_item.done", "output_index": 0, "item": REASONING},
                    *call_events(1), completed([at_end, CALL]))
    result = assemble(stream)
    assert result.built["output"][0]["encrypted_content"] == "gAAA-done"  # type: ignore[index]
    assert result.response["output"][0]["encrypted_content"] == "gAAA-completed"  # type: ignore[index]
    assert result.differences == [] and result.problems == []


def test_other_differences_between_completed_and_the_items_are_recorded() -> None:
    changed = {**CALL, "arguments": '{"a":2}'}
    result = assemble(events(*start(), *call_events(0), completed([changed, MESSAGE])))
    assert result.response["output"] == [changed, MESSAGE]  # type: ignore[index]  # the terminal's is used
    assert result.differences == [
        "the terminal event's output has 2 items, the stream's items 1",
        "output[0] (function_call fc_1): arguments differ from the stream's item",
    ]


def test_reasoning_summary_refusal_and_raw_reasoning_deltas() -> None:
    where = {"item_id": "rs_1", "output_index": 0}
    summary = {"type": "summary_text", "text": "Plan"}
    refusal_where = {"item_id": "msg_2", "output_index": 1, "content_index": 0}
    refusal = {"id": "msg_2", "type": "message", "status": "completed", "role": "assistant",
               "content": [{"type": "refusal", "refusal": "No."}]}
    updates, assembler = feed_all(events(
        *start(),
        {"type": "response.output_item.added", "output_index": 0, "item": {**REASONING, "summary": []}},
        {"type": "response.reasoning_summary_part.added", **where, "summary_index": 0,
         "part": {"type": "summary_text", "text": ""}},
        {"type": "response.reasoning_summary_text.delta", **where, "summary_index": 0, "delta": "Plan"},
        {"type": "response.reasoning_summary_text.done", **where, "summary_index": 0, "text": "Plan"},
        {"type": "response.reasoning_text.delta", **where, "content_index": 0, "delta": "raw"},
        {"type": "response.output_item.added", "output_index": 1, "item": {**refusal, "content": []}},
        {"type": "response.refusal.delta", **refusal_where, "delta": "No."},
        {"type": "response.refusal.done", **refusal_where, "refusal": "No."},
        {"type": "response.output_item.done", "output_index": 1, "item": refusal},
        completed([]),
    ))
    assert [u for u in updates if isinstance(u, ReasoningDelta | RefusalDelta)] == [
        ReasoningDelta(output_index=0, item_id="rs_1", delta="Plan", summary=True),
        ReasoningDelta(output_index=0, item_id="rs_1", delta="raw", summary=False),
        RefusalDelta(output_index=1, item_id="msg_2", content_index=0, delta="No."),
    ]
    # the reasoning item never had its done event: it is built from its deltas
    built = assembler.finish().response["output"]  # type: ignore[index]
    raw = [{"type": "reasoning_text", "text": "raw"}]
    assert built[0] == {**REASONING, "summary": [summary], "content": raw}
    assert built[1] == refusal


# -- what local servers leave out ---------------------------------------------------------------------


def test_no_sequence_numbers_and_no_done_events_still_assemble() -> None:
    # Llama Stack sends no output_text.done, SGLang no output_item.done, llama.cpp no sequence_number
    stream = [e for e in [*start(), *message_events(), *call_events()]
              if not e["type"].endswith((".done",))]
    result = assemble(events(*stream, completed([]), numbered=False))
    assert result.problems == []
    assert result.response["output"] == [MESSAGE, CALL]  # type: ignore[index]


def test_an_error_event_ends_the_stream_as_a_failed_response() -> None:
    error = {"type": "error", "code": "server_error", "message": "The server had an error", "param": None}
    updates, assembler = feed_all(events(*start(), *message_events(), error))
    assert updates[-1] == StreamFailed(code="server_error", message="The server had an error", param=None)
    result = assembler.finish()
    assert result.terminal == "error" and assembler.ended
    assert result.response == {**SHELL, "status": "failed", "output": [MESSAGE],
                               "error": {"code": "server_error", "message": "The server had an error"}}
    nested = {"type": "error", "error": {"code": "rate_limit_exceeded", "message": "slow down"}}
    alone = assemble(events(nested))
    assert alone.response == {"object": "response", "status": "failed", "output": [],
                              "error": {"code": "rate_limit_exceeded", "message": "slow down"}}


def test_failed_and_incomplete_terminals_keep_their_status_and_the_items_so_far() -> None:
    failed = {"type": "response.failed", "response": {**SHELL, "status": "failed", "output": [],
                                                      "error": {"code": "server_error", "message": "x"}}}
    result = assemble(events(*start(), *call_events(0), failed))
    assert result.terminal == "failed" and result.response["status"] == "failed"  # type: ignore[index]
    assert result.response["output"] == [CALL]  # type: ignore[index]
    incomplete = {"type": "response.incomplete", "response": {**SHELL, "status": "incomplete", "output": []}}
    cut_short = [e for e in message_events() if e["type"] != "response.output_item.done"]
    result = assemble(events(*start(), *cut_short, incomplete))
    assert result.response["output"][0]["status"] == "incomplete"  # type: ignore[index]
    assert result.response["output"][0]["content"][0]["text"] == "Hi there"  # type: ignore[index]


# -- cuts and what may be retried ---------------------------------------------------------------------


def test_a_cut_is_retry_safe_only_before_anything_but_created_and_in_progress() -> None:
    assert assemble([]).retry_safe and assemble([]).response is None and assemble([]).terminal is None
    early = assemble(events(*start(), {"type": "response.queued", "response": SHELL}))
    assert early.retry_safe and early.terminal is None and early.response == {**SHELL, "output": []}
    later = assemble(events(*start(), *message_events()[:3]))
    assert not later.retry_safe and later.terminal is None
    assert later.response["output"][0]["content"][0]["text"] == "Hi"  # type: ignore[index]
    assert not assemble(events(*start(), {"type": "response.web_search_call.searching"})).retry_safe


# -- problems: reported, never fatal -------------------------------------------------------------------


def test_sequence_numbers_that_go_back_or_skip_are_reported() -> None:
    stream = events(*start(), *message_events(), completed([]))
    swapped = [*stream[:4], stream[5], stream[4], *stream[6:]]  # the two text deltas
    assert assemble(swapped).problems == [
        "event 4 (response.output_text.delta): sequence_number 4 after 5: out of order",
        "event 6 (response.output_text.done): the deltas of output_index 0 parts[0] add up to ' thereHi', "
        "but its done event says 'Hi there'",
    ]
    dropped = [*stream[:3], *stream[5:]]  # content_part.added and the first delta
    assert assemble(dropped).problems == [
        "event 6 (response.output_text.done): the deltas of output_index 0 parts[0] add up to ' there', "
        "but its done event says 'Hi there'",
        "sequence_number 3, 4 never arrived: 2 events missing",
    ]
    assert assemble([*stream, stream[-1]]).problems == [
        "event 9 (response.completed): sequence_number 9 after 9: a repeat",
        "event 9 (response.completed): response.completed arrived after the response ended (completed)",
    ]
    assert assemble(stream[1:]).problems[0] == (
        "event 1 (response.in_progress): the first sequence_number is 1, not 0"
    )


def test_a_tampered_delta_or_done_item_is_reported() -> None:
    payloads = [*start(), *message_events(deltas=("Hi", " thera")), completed([])]
    assert assemble(events(*payloads)).problems == [
        "event 6 (response.output_text.done): the deltas of output_index 0 parts[0] add up to 'Hi thera', "
        "but its done event says 'Hi there'"
    ]
    tampered_call = {**CALL, "arguments": '{"a":9}'}
    problems = assemble(events(*start(), *call_events(0, done_item=tampered_call), completed([]))).problems
    assert problems == ["event 6 (response.output_item.done): output_item.done arguments '{\"a\":9}' differ "
                        "from the streamed '{\"a\":1}'"]


def test_order_problems_of_items_are_reported() -> None:
    where = {"item_id": "msg_9", "output_index": 4, "content_index": 0}
    result = assemble(events(
        *start(),
        {"type": "response.output_text.delta", **where, "delta": "early"},
        {"type": "response.output_item.added", "output_index": 0, "item": CALL},
        {"type": "response.output_item.added", "output_index": 0, "item": MESSAGE},
        {"type": "response.output_item.done", "output_index": 0, "item": {**MESSAGE, "id": "msg_other"}},
        {"type": "response.output_item.done", "output_index": 0, "item": MESSAGE},
        {"type": "response.output_text.delta", "delta": "nowhere"},
        completed([]),
        {"type": "response.output_text.delta", **where, "delta": "late"},
    ))
    assert [text.split(": ", 1)[1] for text in result.problems] == [
        "response.output_text.delta arrived before its item (output_index 4)",
        "a second item was added at output_index 0",
        "the item at output_index 0 changed id from 'msg_1' to 'msg_other'",
        "output_index 0 was done twice",
        "response.output_text.delta names no item (no output_index or item_id)",
        "response.output_text.delta arrived after the response ended (completed)",
    ]


def test_garbage_is_reported_and_skipped() -> None:
    stream = [
        StreamEvent(index=0, event="response.created", data="not json"),
        StreamEvent(index=1, event=None, data="[DONE]"),  # the Chat Completions sentinel: silently skipped
        StreamEvent(index=2, event="response.output_item.added", data='{"item": "not an object"}'),
        StreamEvent(index=3, event="response.created", data='{"type": "response.completed"}'),
        StreamEvent(index=4, event=None, data='{"type": 5, "sequence_number": true}'),
    ]
    result = assemble(stream)
    assert result.problems == [
        "event 0 (response.created): its data is not a JSON object",
        "event 2 (response.output_item.added): output_item.added without an item object",
        "event 3 (response.completed): its event field says 'response.created' but its data says "
        "'response.completed'",
        "event 4 (no type): an event without a type arrived after the response ended (completed)",
    ]
    assert result.terminal == "completed" and result.response == {"object": "response", "output": [],
                                                                  "status": "completed"}


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
TYPES = st.sampled_from([
    "response.created", "response.output_item.added", "response.output_item.done",
    "response.output_text.delta", "response.output_text.done", "response.content_part.added",
    "response.function_call_arguments.done",
    "response.completed", "error", "other",
])
FIELDS = st.fixed_dictionaries({}, optional={
    "type": TYPES, "sequence_number": st.integers(-1, 5), "output_index": st.integers(-1, 3) | JSON_VALUES,
    "item_id": st.sampled_from(["fc_1", "msg_1"]) | JSON_VALUES, "content_index": st.integers(-1, 2),
    "delta": st.text(max_size=3) | JSON_VALUES, "item": st.just(CALL) | st.just(MESSAGE) | JSON_VALUES,
    "response": st.just(SHELL) | JSON_VALUES, "text": JSON_VALUES, "part": JSON_VALUES,
})


@settings(max_examples=300)
@given(st.lists(st.one_of(FIELDS.map(json.dumps), st.text(max_size=10)), max_size=12))
def test_no_sequence_of_events_makes_it_raise(datas: list[str]) -> None:
    assembler = StreamAssembler()
    for index, data in enumerate(datas):
        for update in assembler.feed(StreamEvent(index=index, event=None, data=data)):
            assert not isinstance(update, StreamProblem) or update.index == index
    result = assembler.finish()
    assert result.response is None or isinstance(result.response.get("output"), list)


WHOLE = "".join(
    f"event: {payload['type']}\ndata: {json.dumps({'sequence_number': n, **payload})}\n\n"
    for n, payload in enumerate([*start(), *message_events(), *call_events(), completed([])])
).encode()


@given(st.lists(st.integers(min_value=0, max_value=len(WHOLE)), max_size=20))
def test_any_split_of_a_valid_streams_bytes_assembles_the_same_response(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    parser = SseParser()
    assembler = StreamAssembler()
    for a, b in zip([0, *points], [*points, len(WHOLE)], strict=True):
        for event in parser.feed(WHOLE[a:b]):
            assembler.feed(event)
    result = assembler.finish()
    assert result.problems == [] and result.terminal == "completed"
    assert result.response == {**SHELL, "status": "completed", "output": [MESSAGE, CALL], "usage": USAGE}
