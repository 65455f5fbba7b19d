"""Tampered copies of real transcripts are rejected, on the right link, with a clear message.

Each case takes one real run (made once), applies one mutation to a copy of its
transcript, and checks the first broken link in the seed's order and what it says. The
untouched copies pass (test_untouched_copies_pass), so the failures come from the
mutations, not from copying.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .helpers import Event, broken_link, find, model_body, tampered, tool_call, verdict_of

Mutation = Callable[[list[Event]], None]


def _request_2(events: list[Event]) -> dict[str, Any]:
    body: dict[str, Any] = model_body(events, "model_request", 2)
    return body


def _index(items: list[Any], kind: str) -> int:
    return next(i for i, item in enumerate(items) if item.get("type") == kind)


def usage_inflated(events: list[Event]) -> None:
    find(events, "run_end")["usage"]["output_tokens"] += 1000


def wrong_mcp_id(events: list[Event]) -> None:
    tool_call(events, 0, "mcp_response")["message"]["id"] = 99


def wrong_mcp_id_everywhere(events: list[Event]) -> None:
    answer = tool_call(events, 0, "mcp_response")
    answer["message"]["id"] = answer["mcp_id"] = 99


def original_call_dropped(events: list[Event]) -> None:
    items = _request_2(events)["input"]
    del items[_index(items, "function_call")]


def arguments_object_in_response(events: list[Event]) -> None:
    for item in model_body(events, "model_response", 1)["output"]:
        if item["type"] == "function_call":
            item["arguments"] = json.loads(item["arguments"])


def arguments_object_in_replay(events: list[Event]) -> None:
    items = _request_2(events)["input"]
    call = items[_index(items, "function_call")]
    call["arguments"] = json.loads(call["arguments"])


def feedback_text_altered(events: list[Event]) -> None:
    items = _request_2(events)["input"]
    items[_index(items, "function_call_output")]["output"] = "line 1\nline 2 (edited)\n"


def feedback_event_altered(events: list[Event]) -> None:
    find(events, "feedback")["item"]["output"] = "edited"


def output_dropped(events: list[Event]) -> None:
    items = _request_2(events)["input"]
    del items[_index(items, "function_call_output")]


def output_duplicated(events: list[Event]) -> None:
    items = _request_2(events)["input"]
    items.append(dict(items[_index(items, "function_call_output")]))


def items_reordered(events: list[Event]) -> None:
    items = _request_2(events)["input"]
    items[0], items[1] = items[1], items[0]


def is_error_flipped(events: list[Event]) -> None:
    result = tool_call(events, 0, "mcp_response")["message"]["result"]
    result["isError"] = not result.get("isError", False)


def declaration_changed(events: list[Event]) -> None:
    _request_2(events)["tools"][0]["description"] = "a different rule"


def declaration_holds_a_value(events: list[Event]) -> None:
    for tool in model_body(events, "model_request", 1)["tools"]:
        if tool["name"] == "fs__read_text_file":
            tool["parameters"]["properties"]["path"]["default"] = "notes.txt"


def mcp_arguments_changed(events: list[Event]) -> None:
    tool_call(events)["message"]["params"]["arguments"]["head"] = 5


def answer_replaced(events: list[Event]) -> None:
    find(events, "run_end")["final_text"] = "I read the file."


def mcp_response_removed(events: list[Event]) -> None:
    events.remove(tool_call(events, 0, "mcp_response"))


def route_changed(events: list[Event]) -> None:
    find(events, "call_routed")["tool"] = "read_file"


def outcome_names_another_id(events: list[Event]) -> None:
    find(events, "call_outcome")["outcome"]["mcp_id"] = 7


def outputs_swapped(events: list[Event]) -> None:
    outputs = [i for i in _request_2(events)["input"] if i.get("type") == "function_call_output"]
    outputs[0]["call_id"], outputs[1]["call_id"] = outputs[1]["call_id"], outputs[0]["call_id"]


def _swap_tags(events: list[Event], *roles: str) -> None:
    for role in roles:
        first, second = tool_call(events, 0, role), tool_call(events, 1, role)
        first["call_id"], second["call_id"] = second["call_id"], first["call_id"]


def mcp_request_tags_swapped(events: list[Event]) -> None:
    _swap_tags(events, "mcp_request")


def mcp_exchange_tags_swapped(events: list[Event]) -> None:
    _swap_tags(events, "mcp_request", "mcp_response")


def mcp_arguments_copied_from_another_call(events: list[Event]) -> None:
    """One-sided: the first tools/call now carries the second's arguments, not a swap."""
    second = tool_call(events, 1)["message"]["params"]["arguments"]
    tool_call(events)["message"]["params"]["arguments"] = dict(second)


def tools_call_method_changed(events: list[Event]) -> None:
    tool_call(events)["message"]["method"] = "tools/run"


def jsonrpc_version_changed(events: list[Event]) -> None:
    tool_call(events)["message"]["jsonrpc"] = "1.0"  # the answer's is checked at server_check


def outcome_names_another_tool(events: list[Event]) -> None:
    find(events, "call_outcome")["outcome"]["tool"] = "read_file"


def outcome_message_changed(events: list[Event]) -> None:
    find(events, "call_outcome")["outcome"]["message"] = "all fine"


def never_sent_outcome_names_an_mcp_id(events: list[Event]) -> None:
    find(events, "call_outcome", call_id="call_offline_0002")["outcome"]["mcp_id"] = 4


def listed_tool_removed(events: list[Event]) -> None:
    listing = find(events, "mcp_response", method="tools/list")["message"]["result"]
    listing["tools"] = [tool for tool in listing["tools"] if tool["name"] != "read_text_file"]


def error_code_changed(events: list[Event]) -> None:
    outcome = find(events, "call_outcome", call_id="call_offline_0002")["outcome"]
    outcome["error_code"] = -32603


def notice_line_removed(events: list[Event]) -> None:
    events.remove(find(events, "server_ready"))


def line_repeated(events: list[Event]) -> None:
    events.insert(1, dict(events[1]))


def previous_response_id_changed(events: list[Event]) -> None:
    _request_2(events)["previous_response_id"] = "resp_offline_9999"


def tool_call_sent_twice(events: list[Event]) -> None:
    request = tool_call(events)
    again = json.loads(json.dumps(request))
    again["message"]["id"] = again["mcp_id"] = 42
    events.insert(events.index(request) + 1, again)
    for seq, event in enumerate(events, 1):
        event["seq"] = seq


def call_parsed_text_changed(events: list[Event]) -> None:
    find(events, "call_parsed")["arguments_text"] = '{"path": "other.txt", "head": 20}'


def invented_output(events: list[Event]) -> None:
    _request_2(events)["input"].append(
        {"type": "function_call_output", "call_id": "call_invented", "output": "x"}
    )


def parse_error_hidden(events: list[Event]) -> None:
    parsed = find(events, "call_parsed")
    parsed["error"], parsed["arguments"] = None, {"path": "notes.txt"}


def invalid_call_sent(events: list[Event]) -> None:
    find(events, "call_outcome", call_id="call_offline_0002")["outcome"]["status"] = "ok"


def _rename_call_id(events: list[Event], old: str, new: str) -> None:
    """Every trace of ``old`` now says ``new``: the record of a run in which both ran."""
    text = json.dumps(events).replace(f'"{old}"', f'"{new}"')
    events[:] = json.loads(text)


def repeated_call_id_run_twice(events: list[Event]) -> None:
    _rename_call_id(events, "call_offline_0002", "call_offline_0001")


def _refusal(events: list[Event]) -> Event:
    outcomes = (e for e in events if e["kind"] == "call_outcome")
    return next(e for e in outcomes if e["outcome"]["status"] == "duplicate_call_id")


def refusal_not_recorded(events: list[Event]) -> None:
    events.remove(_refusal(events))


def refusal_dropped_from_the_output(events: list[Event]) -> None:
    for item in _request_2(events)["input"]:
        if item.get("call_id") == "dup" and item["type"] == "function_call_output":
            item["output"] = item["output"].split("\n\n\nError (duplicate call id)")[0]


FORGED = "sha256:" + "0" * 64


def definition_digest_changed(events: list[Event]) -> None:
    find(events, "declarations")["digests"]["fs__read_text_file"] = FORGED


def listed_definition_swapped(events: list[Event]) -> None:
    """The recorded tools/list says something else than what was digested (and offered)."""
    listing = find(events, "mcp_response", method="tools/list")["message"]["result"]
    next(tool for tool in listing["tools"] if tool["name"] == "read_text_file")["description"] = "Reads."


def call_names_another_definition(events: list[Event]) -> None:
    find(events, "call_routed")["digest"] = FORGED


def definition_swapped_before_the_call(events: list[Event]) -> None:
    """A second tools/list answer, with another description, just before the tools/call."""
    again = json.loads(json.dumps(find(events, "mcp_response", method="tools/list")))
    listed_definition_swapped([again])
    events.insert(events.index(tool_call(events)), again)
    for seq, event in enumerate(events, 1):
        event["seq"] = seq


CASES: list[tuple[str, Mutation, str, str]] = [
    ("seed_run", definition_digest_changed, "routing",
     f"the declarations (initial) record fs__read_text_file's definition as {FORGED}, but fs's tools/list"),
    ("seed_run", listed_definition_swapped, "routing", ": a digest changed or a definition swapped"),
    ("seed_run", call_names_another_definition, "routing",
     f"(request 1), but the call was routed with definition {FORGED}: a definition changed between"),
    ("seed_run", definition_swapped_before_the_call, "routing",
     "fs__read_text_file was offered and routed as sha256:"),
    ("seed_run", wrong_mcp_id, "correlation", "records mcp id 4, its message has id 99"),
    (
        "seed_run",
        wrong_mcp_id_everywhere,
        "correlation",
        "the response with mcp id 99 on fs (connection 1) answers no request",
    ),
    (
        "seed_run",
        original_call_dropped,
        "next_input",
        "request 2 dropped function_call call_offline_0001 (output[0] of response 1)",
    ),
    (
        "seed_run",
        arguments_object_in_response,
        "parse",
        "the model's arguments is a JSON object, not JSON text",
    ),
    (
        "seed_run",
        arguments_object_in_replay,
        "next_input",
        "request 2 changed function_call call_offline_0001 (output[0] of response 1) at input[1].arguments",
    ),
    (
        "seed_run",
        feedback_text_altered,
        "feedback",
        'request 2 input[2] holds "line 1\\nline 2 (edited)\\n"; render_output gives',
    ),
    ("seed_run", feedback_event_altered, "feedback", 'the feedback event holds "edited"'),
    (
        "seed_run",
        output_dropped,
        "correlation",
        "call_offline_0001 (response 1) has no function_call_output in request 2",
    ),
    (
        "seed_run",
        output_duplicated,
        "correlation",
        "request 2 holds 2 function_call_output items for call_offline_0001",
    ),
    ("seed_run", items_reordered, "next_input", "request 2 reordered the context"),
    (
        "seed_run",
        is_error_flipped,
        "feedback",
        "call_outcome records ok, but the recorded answer is a tool error (isError: true)",
    ),
    (
        "seed_run",
        declaration_changed,
        "next_input",
        "the declarations changed between request 1 and 2 (tools[0].description) with no tools/list_changed",
    ),
    (
        "seed_run",
        declaration_holds_a_value,
        "next_input",
        'they hold call_offline_0001\'s value "notes.txt": a declaration is a rule',
    ),
    (
        "seed_run",
        mcp_arguments_changed,
        "routing",
        'params.arguments of mcp id 4, {"path": "notes.txt", "head": 5}, is not the parsed arguments text',
    ),
    (
        "seed_run",
        answer_replaced,
        "model_response",
        'the answer presented, "I read the file.", is not the text of response resp_offline_0002',
    ),
    ("seed_run", mcp_response_removed, "server_check", "recorded as ok, but no answer is recorded for it"),
    (
        "seed_run",
        route_changed,
        "routing",
        "the declarations route fs__read_text_file to fs/read_text_file, the call went to fs/read_file",
    ),
    (
        "seed_run",
        outcome_names_another_id,
        "correlation",
        "call_outcome names mcp id 7 on fs, but its tools/call is mcp id 4",
    ),
    ("seed_run", tool_call_sent_twice, "server_check", "tools/call was sent 2 times (mcp ids 4, 42)"),
    ("seed_run", call_parsed_text_changed, "parse", "call_parsed records arguments text"),
    (
        "seed_run",
        invented_output,
        "correlation",
        "request 2 holds an output for call_invented, but no earlier "
        "response has a function_call with that call_id",
    ),
    (
        "parallel_run",
        outputs_swapped,
        "correlation",
        "carries the result of call_offline_0001: call_ids swapped",
    ),
    ("parallel_run", items_reordered, "next_input", "request 2 reordered the context"),
    (
        "seed_run",
        tools_call_method_changed,
        "correlation",
        "the mcp_request event on fs (connection 1) records method tools/call, its message has method "
        "'tools/run'",
    ),
    (
        "seed_run",
        jsonrpc_version_changed,
        "correlation",
        "the mcp_request event on fs (connection 1) (mcp id 4) holds a message that is not JSON-RPC 2.0 "
        "(jsonrpc: '1.0')",
    ),
    (
        "seed_run",
        outcome_names_another_tool,
        "routing",
        "call_outcome names fs/read_file, the call was routed to fs/read_text_file",
    ),
    (
        "tool_error_run",
        outcome_message_changed,
        "feedback",
        "call_outcome records the message \"all fine\", but the recorded answer gives",
    ),
    (
        "invalid_run",
        never_sent_outcome_names_an_mcp_id,
        "server_check",
        "recorded as invalid_arguments (never sent), yet its outcome names mcp id 4",
    ),
    (
        "seed_run",
        notice_line_removed,
        "correlation",
        "event seq 8 follows seq 6: a line of the transcript is missing, repeated or out of order",
    ),
    ("seed_run", line_repeated, "correlation", "event seq 2 follows seq 2"),
    (
        "seed_run",
        listed_tool_removed,
        "next_input",
        "route to fs/read_text_file, but fs's tools/list answer (seq 9) lists no such tool",
    ),
    (
        "errors_run",
        error_code_changed,
        "feedback",
        "call_outcome records the error_code -32603, but the recorded answer gives -32602",
    ),
    (
        "parallel_run",
        mcp_request_tags_swapped,
        "correlation",
        "the tools/call tagged call_offline_0001 (mcp id 5) carries the arguments of call_offline_0002: "
        "the MCP events' call_id tags are swapped",
    ),
    (
        "parallel_run",
        mcp_exchange_tags_swapped,
        "correlation",
        "the tools/call tagged call_offline_0001 (mcp id 5) carries the arguments of call_offline_0002",
    ),
    (
        "parallel_run",
        mcp_arguments_copied_from_another_call,
        "routing",
        'params.arguments of mcp id 4, {"path": "notes.txt", "head": 2}, is not the parsed arguments text',
    ),
    (
        "tool_error_run",
        is_error_flipped,
        "feedback",
        # the tool declares an outputSchema and its error has no structuredContent: as a
        # success it would break the schema
        "call_outcome records tool_error, but the recorded answer is invalid output",
    ),
    (
        "tool_error_run",
        feedback_text_altered,
        "feedback",
        "feeds a failure (a tool error (isError: true)) back as success",
    ),
    ("crash_run", feedback_text_altered, "feedback", "feeds a failure (transport error) back as success"),
    (
        "errors_run",
        feedback_text_altered,
        "feedback",
        "feeds a failure (a tool error (isError: true)) back as success",
    ),
    (
        "chain_run",
        previous_response_id_changed,
        "next_input",
        "request 2's previous_response_id is "
        "'resp_offline_9999', the previous response is "
        "'resp_offline_0001'",
    ),
    ("chain_run", output_dropped, "correlation", "has no function_call_output in request 2"),
    ("invalid_run", parse_error_hidden, "parse", "the text does not parse (arguments are not valid JSON"),
    ("invalid_run", invalid_call_sent, "server_check", "call_offline_0002: recorded as ok, but no tools/call "
                                                       "request is recorded for it"),
    ("invalid_run", feedback_text_altered, "feedback", "feeds a failure (invalid arguments) back as success"),
    ("chain_run", output_duplicated, "correlation", "holds 2 function_call_output items"),
    ("strict_run", mcp_arguments_changed, "routing", "is not the parsed arguments text"),
    (
        "max_turns_run",
        is_error_flipped,
        "feedback",
        "call_outcome records ok, but the recorded answer is a tool error",
    ),
    ("max_turns_run", wrong_mcp_id, "correlation", "its message has id 99"),
    (
        "parallel_run",
        repeated_call_id_run_twice,
        "parse",
        "call_id call_offline_0001 is used by 2 function_calls of response 1 (fs__read_text_file, "
        "fs__read_text_file) and 2 of them were run: only the first may run, the later ones must be refused "
        "as duplicates (the API takes one function_call_output per call_id)",
    ),
    (
        "duplicate_call_id_run",
        refusal_not_recorded,
        "parse",
        "output[2] (fs__read_text_file) has no refusal recorded, yet the call_id's output was given",
    ),
    ("duplicate_call_id_run", refusal_dropped_from_the_output, "feedback",
     'request 2 input[4] holds "line 1"'),
    ("seed_run", usage_inflated, "model_response", "but the 2 turn(s)' recorded responses add up to "),
]


@pytest.mark.parametrize(
    ("run", "mutation", "link", "message"),
    CASES,
    ids=[f"{run}-{mutation.__name__}" for run, mutation, _, _ in CASES],
)
def test_tampered_transcript_is_rejected(
    run: str, mutation: Mutation, link: str, message: str, run_named: Any, tmp_path: Path
) -> None:
    copy = tampered(run_named(run), tmp_path / "tampered.jsonl", mutation)
    broken, said = broken_link(copy)
    assert (broken, message in said) == (link, True), said


@pytest.mark.parametrize("run", sorted({run for run, _, _, _ in CASES}))
def test_untouched_copies_pass(run: str, run_named: Any, tmp_path: Path) -> None:
    copy = tampered(run_named(run), tmp_path / "copy.jsonl", lambda events: None)
    assert verdict_of(copy).ok


def test_a_broken_finding_names_its_ids_and_events(run_named: Any, tmp_path: Path) -> None:
    copy = tampered(run_named("seed_run"), tmp_path / "t.jsonl", feedback_text_altered)
    broken = verdict_of(copy).broken
    assert broken is not None
    assert (broken.call_id, broken.mcp_id, broken.server, broken.turn) == ("call_offline_0001", 4, "fs", 1)
    kinds = {e["seq"]: e["kind"] for e in (json.loads(line) for line in copy.read_text().splitlines())}
    assert {kinds[s] for s in broken.seqs} == {"model_response", "mcp_response", "model_request"}
