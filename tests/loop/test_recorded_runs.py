"""``toolrelay run`` against real recorded streams (tests/data/streams): two OpenAI models'
streamed function calls, replayed over loopback HTTP as turn 1, then a recorded answer.

The endpoint holds each recording's ``response.completed`` until the MCP server (a real
stdio server offering the recorded tool) has received the ``tools/call``: the call
starts as its item closes (its tool is annotated read-only), the output goes back
paired by ``call_id``, the run's transcript verifies, and the reasoning item replayed in
the next request is the one of the Response used — the terminal event's, or, when that
carries an empty ``output``, the ``output_item.done`` one — never the ``added`` one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

import pytest

from testkit.recorded_streams import (
    ReplayEndpoint,
    events_of,
    recorded,
    with_final_output,
    without_final_output,
)
from testkit.servers import CAPITAL_SERVER
from testkit.transcripts import transcript_events
from toolrelay.verify import load_run, verify

GPT55 = "phase_streamed_on_part_start.sse"
GPT5 = "streaming_usage.sse"
ANSWER = "phase_streamed_on_part_start_answer.sse"
RENAMED = {"get_capital": "capitals__get_capital", "final_result": "capitals__final_result"}
FINAL_TEXT = "The capital of PotatoLand is **Potato City**."


def _pairs(raw: bytes) -> list[tuple[str, str]]:
    """(event, data) of each event of a recording, as its lines say."""
    found = []
    for block in events_of(raw):
        event, data = block.decode().rstrip("\n").split("\n")
        found.append((event.removeprefix("event: "), data.removeprefix("data: ")))
    return found


def _payloads(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(data) for _, data in _pairs(raw)]


def _items(raw: bytes, event_type: str, item_type: str) -> list[dict[str, Any]]:
    return [p["item"] for p in _payloads(raw) if p["type"] == event_type and p["item"]["type"] == item_type]


def _run(
    tmp_path: Path, first: bytes, *, hold: bool = True
) -> tuple[subprocess.CompletedProcess[str], ReplayEndpoint]:
    """``toolrelay run`` against ``first`` then the recorded answer; ``hold``: the first answer's
    last event waits for the tools/call (a stream whose call cannot start early sends it at once)."""
    called = tmp_path / "called"
    config = {"mcpServers": {"capitals": {"command": sys.executable,
                                          "args": [str(CAPITAL_SERVER), "--touch", str(called)]}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_OPENAI_"))}
    task = "What is the capital of PotatoLand?"
    held = called if hold else None
    with ReplayEndpoint(first, recorded(ANSWER, rename=RENAMED), hold_first_until=held) as endpoint:
        proc = subprocess.run(
            [sys.executable, "-m", "toolrelay", "run", task, "--model", "gpt-5.5",
             "--base-url", endpoint.base_url, "--config", "mcp.json", "--transcript", "t.jsonl"],
            cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL,
        )
    return proc, endpoint


def _records(tmp_path: Path) -> list[dict[str, Any]]:
    return transcript_events(tmp_path / "t.jsonl")


def _verify(tmp_path: Path) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "toolrelay", "verify", "t.jsonl", "--json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    verdict: dict[str, Any] = json.loads(proc.stdout)
    return verdict


@pytest.mark.parametrize(
    ("recording", "final_output", "tool", "arguments", "output"),
    [
        (GPT55, "kept", "get_capital", {"country": "PotatoLand"}, "Potato City"),
        (GPT55, "empty", "get_capital", {"country": "PotatoLand"}, "Potato City"),
        (GPT5, "kept", "final_result", {"result": 6666}, "result 6666 recorded"),
    ],
    ids=["gpt-5.5", "gpt-5.5-completed-without-output", "gpt-5"],
)
def test_a_recorded_stream_runs_its_call_early_and_the_run_verifies(
    tmp_path: Path, recording: str, final_output: str, tool: str, arguments: dict[str, Any], output: str
) -> None:
    first = recorded(recording, rename=RENAMED)
    if final_output == "empty":
        first = without_final_output(first)
    proc, endpoint = _run(tmp_path, first)
    assert proc.returncode == 0, proc.stderr
    assert endpoint.held, "response.completed was sent before the tools/call arrived"
    messages = _items(first, "response.output_item.done", "message")
    said = "".join(part["text"] + "\n" for m in messages for part in m["content"])
    assert proc.stdout == said + FINAL_TEXT + "\n"  # every message once, in order, as it streamed

    # the call: parsed as its item closed, before response.completed; run once, ok
    records = _records(tmp_path)
    stream = [r for r in records if r["kind"] == "model_stream" and r["turn"] == 1]
    assert [(r["event"], r["data"]) for r in stream] == _pairs(first)  # each event exactly as received
    completed = next(r["seq"] for r in stream if r["event"] == "response.completed")
    [parsed] = [r for r in records if r["kind"] == "call_parsed"]
    [outcome] = [r["outcome"] for r in records if r["kind"] == "call_outcome"]
    [call] = _items(first, "response.output_item.done", "function_call")
    assert parsed["seq"] < completed and parsed["call_id"] == call["call_id"]
    assert (outcome["status"], outcome["alias"]) == ("ok", f"capitals__{tool}")
    assert outcome["call_id"] == call["call_id"]
    [sent] = [r["message"] for r in records
              if r["kind"] == "mcp_request" and r["message"].get("method") == "tools/call"]
    assert sent["params"] == {"name": tool, "arguments": arguments,
                              "_meta": {"progressToken": f"{call['call_id']}-1"}}

    # the next request: the turn's items as the Response used holds them, then the output
    second = endpoint.bodies[1]["input"]
    assert isinstance(second, list)
    terminal = json.loads(stream[-1]["data"])["response"]["output"]
    used = terminal or [p["item"] for p in _payloads(first) if p["type"] == "response.output_item.done"]
    fed = {"type": "function_call_output", "call_id": call["call_id"], "output": output}
    assert second[1:] == [*used, fed]
    replayed = second[1]
    [done] = _items(first, "response.output_item.done", "reasoning")
    assert replayed["type"] == "reasoning" and replayed == (terminal[0] if final_output == "kept" else done)
    [added] = _items(first, "response.output_item.added", "reasoning")
    if "encrypted_content" in added:  # gpt-5.5's differs between added, done and completed
        assert replayed["encrypted_content"] != added["encrypted_content"]

    verdict = _verify(tmp_path)
    assert verdict["ok"] and verdict["finished"]
    checks = {f["check"] for f in verdict["findings"] if f["ok"]}
    assert {"stream", "early_start"} <= checks


CHANGES = {
    "name": {"name": "capitals__final_result", "arguments": '{"result":2}'},
    "arguments": {"arguments": '{"country":"Atlantis"}'},
}


def _final_call(change: str) -> Any:
    """The terminal event's output, its function_call changed (``CHANGES``) or dropped."""

    def edit(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if change == "dropped":
            return [item for item in output if item["type"] != "function_call"]
        return [item | CHANGES[change] if item["type"] == "function_call" else item for item in output]

    return edit


def _shown(tmp_path: Path) -> tuple[str, str]:
    """What ``explain`` prints and ``view`` draws for the run."""
    explained, viewed = (
        subprocess.run([sys.executable, "-m", "toolrelay", *args], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60)
        for args in (["explain", "t.jsonl"], ["view", "t.jsonl", "-o", "trace.html"])
    )
    assert explained.returncode == 0 and viewed.returncode == 0, explained.stderr + viewed.stderr
    return explained.stdout, (tmp_path / "trace.html").read_text()


def _tools_calls(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r["message"]["params"] for r in records
            if r["kind"] == "mcp_request" and r["message"].get("method") == "tools/call"]


@pytest.mark.parametrize("change", ["name", "arguments"])
def test_a_final_response_that_changes_a_started_call_ends_the_run_as_a_stream_fault(
    tmp_path: Path, change: str
) -> None:
    """The call's item closes as get_capital {"country":"PotatoLand"} and starts; the
    terminal event then says the same call_id is another call. The early result is never
    fed back as that call's, the call the final response names never runs, exit 3."""
    first = with_final_output(recorded(GPT55, rename=RENAMED), _final_call(change))
    proc, endpoint = _run(tmp_path, first)
    assert proc.returncode == 3, proc.stderr
    [call] = _items(first, "response.output_item.done", "function_call")
    final = call | CHANGES[change]
    said = (f"{call['call_id']} started as capitals__get_capital {call['arguments']} when its item closed, "
            f"but the final response (response.completed) says {call['call_id']} is "
            f"{final['name']} {final['arguments']}")
    assert said in proc.stderr
    assert f"{final['name']} {final['arguments']} was not run" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(endpoint.bodies) == 1  # nothing fed back: no next request
    records = _records(tmp_path)
    assert _tools_calls(records) == [{"name": "get_capital", "arguments": {"country": "PotatoLand"},
                                      "_meta": {"progressToken": f"{call['call_id']}-1"}}]
    assert not [r for r in records if r["kind"] == "feedback"]
    [end] = [r for r in records if r["kind"] == "run_end"]
    assert end["status"] == "error" and said in end["reason"]

    verdict = _verify(tmp_path)  # the transcript verifies as what happened
    assert verdict["ok"] and not verdict["finished"]
    [found] = [f for f in verdict["findings"] if f["check"] == "endpoint_inconsistency"]
    assert found["link"] == "model_response" and found["call_id"] == call["call_id"]
    assert "the endpoint contradicted itself" in found["message"]
    assert f"{final['name']} {final['arguments']}" in found["message"]
    explained, drawn = _shown(tmp_path)
    assert (f"the endpoint contradicted itself: {call['call_id']}'s item closed in the stream as "
            f"capitals__get_capital {call['arguments']}, but the final response says {call['call_id']} is "
            f"{final['name']} {final['arguments']}") in explained
    assert "no output: the final response contradicts the call" in explained
    assert json.dumps(found["message"])[1:-1] in drawn  # a note on the response's row
    _fed_back_anyway_is_broken(tmp_path, call["call_id"], "as the final response's call")


def _fed_back_anyway_is_broken(tmp_path: Path, call_id: str, whose: str) -> None:
    """The same transcript with the early result fed back for the call (what toolrelay did
    before): a broken feedback link, toolrelay's, not the endpoint's."""
    records = _records(tmp_path)
    end = records.index(next(r for r in records if r["kind"] == "run_end"))
    output = {"type": "function_call_output", "call_id": call_id, "output": "Potato City"}
    fed = {"seq": records[end]["seq"], "time": records[end]["time"], "run": records[end]["run"],
           "kind": "feedback", "call_id": call_id, "item": output, "cut": []}
    later = [r | {"seq": r["seq"] + 1} for r in records[end:]]
    (tmp_path / "fed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*records[:end], fed, *later]))
    verdict = verify(load_run(tmp_path / "fed.jsonl"))
    [found] = [f for f in verdict.findings if f.check == "endpoint_inconsistency"]
    assert not verdict.ok and not found.ok and found.link == "feedback"
    assert f"yet an output went back for {call_id}: the result of the call that ran was fed back {whose}" in (
        found.message)


def test_a_final_response_that_drops_a_started_call_is_reported_and_its_output_not_fed_back(
    tmp_path: Path,
) -> None:
    """The call's item closes and the call starts; the terminal event's output no longer
    holds it (only the reasoning and the message). The call ran (or was stopped), it is
    said so, nothing goes back for it, and verify records the endpoint's inconsistency."""
    first = with_final_output(recorded(GPT55, rename=RENAMED), _final_call("dropped"))
    proc, endpoint = _run(tmp_path, first)
    assert proc.returncode == 0, proc.stderr
    [call] = _items(first, "response.output_item.done", "function_call")
    [notice] = [line for line in proc.stderr.splitlines() if "drops" in line]
    assert notice.startswith(f"! the model endpoint's final response to turn 1 drops {call['call_id']} "
                             f"(capitals__get_capital {call['arguments']}), which had started when its item "
                             "closed: it ended "), proc.stderr
    assert notice.endswith(", and its output is not fed back")
    assert len(endpoint.bodies) == 1
    records = _records(tmp_path)
    assert [p["name"] for p in _tools_calls(records)] == ["get_capital"]
    assert not [r for r in records if r["kind"] == "feedback"]

    verdict = _verify(tmp_path)
    assert verdict["ok"] and verdict["finished"], verdict
    [found] = [f for f in verdict["findings"] if f["check"] == "endpoint_inconsistency"]
    assert found["link"] == "model_response" and found["call_id"] == call["call_id"]
    assert "the final response drops it" in found["message"]
    explained, drawn = _shown(tmp_path)
    assert (f"the endpoint contradicted itself: {call['call_id']}'s item closed in the stream as "
            f"capitals__get_capital {call['arguments']}, and the final response drops it") in explained
    assert json.dumps(found["message"])[1:-1] in drawn
    _fed_back_anyway_is_broken(tmp_path, call["call_id"], "as a call the response drops")


SAME_CALL = {
    "escaped-event-type": (b'"type":"response.output_item.done"',
                           b'"type":"response.output_item.d\\u006fne"'),
    "escaped-item-type": (b'"type":"function_call"', b'"type":"function\\u005fcall"'),
    "type-of-the-event-field": (b'"type":"response.output_item.done",', b""),
    "call-id-of-the-added-item": (b',"call_id":"call_LabG58Uhrq9kZvR52BYKjToD"', b""),
    "name-of-the-added-item": (b',"name":"capitals__get_capital"', b""),
    "arguments-of-the-deltas": (b'"arguments":"{\\"country\\":\\"PotatoLand\\"}"',
                                b'"arguments":{"country":"PotatoLand"}'),
    "index-of-the-item-id": (b',"output_index":2', b""),
}
"""The function_call's ``output_item.done`` said otherwise, the same call to the stream's
reader: a letter of its type, or of its item's, written as a ``\\u`` escape (the same
parsed value); no type in its data (the ``event:`` field's is taken); its item without a
call_id, or a name (the added item's is taken), with arguments that are no JSON text (the
deltas' are taken), or without its output_index (the item's id finds it)."""
_TIME: Final = re.compile(r"\b\d+\.\d\d s\b")
"""A duration a finding quotes (how long after the response a call started): two runs differ."""


def _said_otherwise(raw: bytes, old: bytes, new: bytes) -> bytes:
    """The recording with ``old`` written as ``new`` in its function_call's ``output_item.done``."""
    blocks = events_of(raw)
    closing = b'"type":"response.output_item.done","item":{"id":"fc_'
    [at] = [n for n, block in enumerate(blocks) if closing in block]
    assert blocks[at].count(old) == 1
    blocks[at] = blocks[at].replace(old, new)
    return b"".join(blocks)


def _judged(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    """Each finding, its quoted durations masked."""
    return [{**found, "message": _TIME.sub("T s", found["message"])} for found in verdict["findings"]]


@pytest.fixture(scope="module")
def plain_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """The GPT-5.5 recording run as recorded: what it printed, and what verify says of it."""
    folder = tmp_path_factory.mktemp("plain")
    proc, endpoint = _run(folder, recorded(GPT55, rename=RENAMED))
    assert proc.returncode == 0 and endpoint.held, proc.stderr
    return proc.stdout, _verify(folder)


@pytest.mark.parametrize("change", SAME_CALL)
def test_a_call_item_closed_as_the_same_call_said_otherwise_runs_early_and_verifies_as_recorded(
    tmp_path: Path, change: str, plain_run: tuple[str, dict[str, Any]]
) -> None:
    """The run starts the call as its item closes, however its event says it; verify links
    the call's events to that item as the stream's reader completed it (the indexer read the
    raw text and item: it passed an escaped or untyped event by, leaving the call's parse,
    routing and outcome orphans of no model response, and took a call without a call_id for
    none, one without its name or JSON text for another call than the final response's)."""
    old, new = SAME_CALL[change]
    proc, endpoint = _run(tmp_path, _said_otherwise(recorded(GPT55, rename=RENAMED), old, new))
    printed, plain_verdict = plain_run
    assert proc.returncode == 0 and endpoint.held, proc.stderr  # started before response.completed
    assert proc.stdout == printed
    records = _records(tmp_path)
    [closing] = [r for r in records if r["kind"] == "model_stream"
                 and r["event"] == "response.output_item.done" and '"id":"fc_' in r["data"]]
    assert old.decode() not in closing["data"]  # recorded as received
    [outcome] = [r["outcome"] for r in records if r["kind"] == "call_outcome"]
    assert (outcome["status"], outcome["call_id"]) == ("ok", "call_LabG58Uhrq9kZvR52BYKjToD")

    verdict = _verify(tmp_path)
    assert verdict["ok"] and verdict["finished"], verdict
    assert _judged(verdict) == _judged(plain_verdict)
    [early] = [f for f in verdict["findings"] if f["check"] == "early_start"]
    assert early["ok"] and f"at stream event {closing['index']} of 33, as its item closed" in early["message"]


CLOSING: Final = b'"type":"response.output_item.done","item":{"id":"fc_'
"""How the recording's function_call ``output_item.done`` begins."""
LATE: Final = {
    "the-same-call": (b"", b""),
    "another-tool": (b'"name":"capitals__get_capital"', b'"name":"capitals__final_result"'),
    "another-call-id": (b'"call_id":"call_LabG58', b'"call_id":"call_OTHER'),
    "other-arguments": (b'"arguments":"{\\"country\\":\\"PotatoLand\\"}"',
                        b'"arguments":"{\\"country\\":\\"Atlantis\\"}"'),
}
"""The function_call item of an ``output_item.done`` sent after the terminal event: as the
final response has it, or saying another tool, another call_id, or other arguments than its
deltas added up to (``old``, ``new``)."""
ENDED = "arrived after the response ended"


def _closing_last(raw: bytes, terminal: bytes | None = None) -> bytes:
    """The recording with its function_call's ``output_item.done`` sent after the terminal
    event (``terminal``: another one in its place), each numbered on: that event is the only
    fault of the stream."""
    blocks = events_of(raw)
    [at] = [n for n, block in enumerate(blocks) if CLOSING in block]
    closing = blocks.pop(at)
    number = int(json.loads(closing.split(b"data: ")[1])["sequence_number"])
    ending = blocks[-1] if terminal is None else terminal
    blocks[-1] = re.sub(rb'"sequence_number":\d+', f'"sequence_number":{number}'.encode(), ending, count=1)
    closing = re.sub(rb'"sequence_number":\d+', f'"sequence_number":{number + 1}'.encode(), closing, count=1)
    return b"".join([*blocks, closing])


def _turn_one(records: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    """The seq of turn 1's model_response, and its stream's last event."""
    response = next(r["seq"] for r in records if r["kind"] == "model_response" and r["turn"] == 1)
    last = [r for r in records if r["kind"] == "model_stream" and r["turn"] == 1][-1]
    return response, last


@pytest.fixture(scope="module")
def late_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What verify says of the run whose call item closed after response.completed, as the
    final response has it (the live reader ran the call after the response, from that)."""
    folder = tmp_path_factory.mktemp("late")
    proc, _ = _run(folder, _closing_last(recorded(GPT55, rename=RENAMED)), hold=False)
    assert proc.returncode == 0, proc.stderr
    return _verify(folder)


@pytest.mark.parametrize("change", LATE)
def test_a_call_item_closed_after_the_response_ended_runs_as_the_response_says_and_verifies_so(
    tmp_path: Path, change: str, late_run: dict[str, Any]
) -> None:
    """The function_call's ``output_item.done`` comes after ``response.completed``: the stream's
    reader reports it and closes no item on it, so the call starts from the final response (not
    early), as that names it, and its output goes back. verify judges the run the same whatever
    the late item says: it used to take it for a call the stream closed, and then blamed the run
    for a call the endpoint dropped (one never asked of toolrelay) or for routing another tool's
    call, and for feeding back the result of an early start that never was."""
    old, new = LATE[change]
    first = _closing_last(recorded(GPT55, rename=RENAMED))
    if old:
        first = _said_otherwise(first, old, new)
    proc, endpoint = _run(tmp_path, first, hold=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith(FINAL_TEXT + "\n")
    assert (f"! the model endpoint's answer to turn 1: its stream was out of order: event 32 "
            f"(response.output_item.done): response.output_item.done {ENDED} (completed)\n") in proc.stderr
    assert len(endpoint.bodies) == 2
    records = _records(tmp_path)
    response, last = _turn_one(records)
    assert last["event"] == "response.output_item.done" and new.decode() in last["data"]  # recorded as sent
    [parsed] = [r for r in records if r["kind"] == "call_parsed"]
    assert parsed["seq"] > response  # not early: after the response, from its item
    assert _tools_calls(records) == [{"name": "get_capital", "arguments": {"country": "PotatoLand"},
                                      "_meta": {"progressToken": "call_LabG58Uhrq9kZvR52BYKjToD-1"}}]
    [fed] = [r["item"] for r in records if r["kind"] == "feedback"]
    assert fed == {"type": "function_call_output", "call_id": "call_LabG58Uhrq9kZvR52BYKjToD",
                   "output": "Potato City"}

    verdict = _verify(tmp_path)
    assert verdict["ok"] and verdict["finished"], verdict
    assert _judged(verdict) == _judged(late_run)
    checks = {f["check"] for f in verdict["findings"]}
    assert "early_start" not in checks and "endpoint_inconsistency" not in checks
    assert "call_OTHER" not in json.dumps(verdict)
    stream = next(f["message"] for f in verdict["findings"] if f["check"] == "stream" and f["turn"] == 1)
    assert f"the run reported event 32 (response.output_item.done): response.output_item.done {ENDED} " \
        "(completed); their deltas add up" in stream  # what the run warned of, not a stream without fault
    explained, _ = _shown(tmp_path)
    assert "call_LabG58Uhrq9kZvR52BYKjToD started at " in explained and ", after the response\n" in explained
    assert "contradicted" not in explained


TERMINAL: Final = {
    "its-type-escaped": (b'"type":"response.completed",', b'"type":"response.c\\u006fmpleted",'),
    "the-type-of-its-event-field": (b'"type":"response.completed",', b""),
    "no-event-field": (b"event: response.completed\n", b""),
}
"""``response.completed`` said otherwise, the same event to the stream's reader: a letter of
its type written as a ``\\u`` escape, no type in its data (the ``event:`` field's is taken),
or no ``event:`` field (its data's type is)."""


@pytest.mark.parametrize("spelled", TERMINAL)
def test_a_call_item_closed_after_the_response_ended_however_the_end_is_spelled(
    tmp_path: Path, spelled: str, late_run: dict[str, Any]
) -> None:
    """The same late item under another call_id, after a terminal event the reader reads as
    such whatever its spelling: the run and verify's verdict are those of the plain late item."""
    old, new = TERMINAL[spelled]
    raw = recorded(GPT55, rename=RENAMED)
    terminal = events_of(raw)[-1]
    assert terminal.count(old) == 1
    first = _closing_last(raw, terminal.replace(old, new))
    first = _said_otherwise(first, *LATE["another-call-id"][:2])
    proc, endpoint = _run(tmp_path, first, hold=False)
    assert proc.returncode == 0, proc.stderr
    assert f"response.output_item.done {ENDED} (completed)" in proc.stderr
    assert [p["name"] for p in _tools_calls(_records(tmp_path))] == ["get_capital"]
    assert len(endpoint.bodies) == 2

    verdict = _verify(tmp_path)
    assert verdict["ok"] and verdict["finished"], verdict
    assert _judged(verdict) == _judged(late_run)


def test_a_call_item_only_closed_after_the_response_ended_is_no_call(tmp_path: Path) -> None:
    """The final response holds no function_call, and the stream closes one only after it: the
    stream's reader closes no item then, so the run answers with the response's message and no
    tool runs. verify finds no call either (it used to index one from the late item, and record
    the endpoint as dropping a call that had started)."""
    without_call = with_final_output(recorded(GPT55, rename=RENAMED), _final_call("dropped"))
    proc, endpoint = _run(tmp_path, _closing_last(without_call), hold=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "I\u2019ll check the capital lookup tool for \u201cPotatoLand.\u201d\n"
    assert f"response.output_item.done {ENDED} (completed)" in proc.stderr
    assert len(endpoint.bodies) == 1 and not _tools_calls(_records(tmp_path))

    verdict = _verify(tmp_path)
    assert verdict["ok"] and not verdict["finished"], verdict
    assert verdict["unfinished"] == ["the model made no tool call: nothing ran"]
    assert not [f for f in verdict["findings"] if f.get("call_id")]
    explained, _ = _shown(tmp_path)
    assert "(completed): 0 function_call(s)" in explained and "call_LabG58" not in explained


@pytest.mark.parametrize("field", [b"event: error\n", b""], ids=["event-field", "no-event-field"])
def test_a_call_item_closed_after_an_error_event_runs_nothing_and_verifies_as_a_failed_turn(
    tmp_path: Path, field: bytes
) -> None:
    """An ``error`` event ends the stream (named so by its ``event:`` field and its data, or by
    its data alone); the function_call's ``output_item.done`` comes after it. The run ends with
    the failed response (exit 1), no tool runs; verify agrees (it did before too: the call it
    indexed from the late item had no events, as now the response's)."""
    error = (field + b'data: {"type":"error","sequence_number":0,"code":"server_error",'
             b'"message":"boom","param":null}\n\n')
    first = _said_otherwise(_closing_last(recorded(GPT55, rename=RENAMED), error), *LATE["another-call-id"])
    proc, endpoint = _run(tmp_path, first, hold=False)
    assert proc.returncode == 1, proc.stderr
    assert "run ended after 1 turn with a failed response: boom (server_error)" in proc.stderr
    assert f"response.output_item.done {ENDED} (error)" in proc.stderr
    assert len(endpoint.bodies) == 1 and not _tools_calls(_records(tmp_path))

    verdict = _verify(tmp_path)
    assert verdict["ok"] and not verdict["finished"], verdict
    failed = "the run ended after 1 turn with a failed response: boom (server_error)"
    assert verdict["unfinished"][0] == failed
    assert not [f for f in verdict["findings"]
                if not f["ok"] or f["check"] in ("early_start", "endpoint_inconsistency")]
    assert "call_OTHER" not in json.dumps(verdict)  # the late item's: no call of the run


DEEP: Final = {
    "the-same-call": (600, b"", b""),
    "another-tool": (600, b'"name":"capitals__get_capital"', b'"name":"capitals__final_result"'),
    "another-call-id": (600, b'"call_id":"call_LabG58', b'"call_id":"call_OTHER'),
    "deeper-than-python-recurses": (5000, b"", b""),
}
"""The function_call's ``output_item.done`` with an array nested ``depth`` deep in its item
(deeper than the 512 levels the stream's reader reads), and its item otherwise as the final
response has it, or saying another tool, or another call_id."""


def _unnumbered(raw: bytes) -> bytes:
    """The recording without ``sequence_number``s, as local servers send it."""
    return re.sub(rb',"sequence_number":\d+|"sequence_number":\d+,', b"", raw)


@pytest.mark.parametrize("change", DEEP)
def test_a_call_item_nested_deeper_than_the_reader_reads_closes_nothing_and_verifies_so(
    tmp_path: Path, change: str, late_run: dict[str, Any]
) -> None:
    """The stream's reader refuses data nested deeper than 512 levels (``its data is not a JSON
    object``), so the call's item does not close on it: the call starts from the final response,
    as that names it. verify reads the event as the reader does: it used to parse it anyway and
    blame the run as for a late item, or, deeper than Python recurses, stop with a traceback."""
    depth, old, new = DEEP[change]
    first = _unnumbered(recorded(GPT55, rename=RENAMED))
    if old:
        first = _said_otherwise(first, old, new)
    deep = b'"deep":' + b"[" * depth + b"]" * depth + b","
    first = _said_otherwise(first, b'"item":{"id":"fc_', b'"item":{' + deep + b'"id":"fc_')
    proc, endpoint = _run(tmp_path, first, hold=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith(FINAL_TEXT + "\n")
    assert ("! the model endpoint's answer to turn 1: its stream was out of order: event 31 "
            "(response.output_item.done): its data is not a JSON object\n") in proc.stderr
    records = _records(tmp_path)
    response, _ = _turn_one(records)
    [parsed] = [r for r in records if r["kind"] == "call_parsed"]
    assert parsed["seq"] > response and parsed["alias"] == "capitals__get_capital"
    assert [p["name"] for p in _tools_calls(records)] == ["get_capital"]
    assert len(endpoint.bodies) == 2

    verdict = _verify(tmp_path)
    assert verdict["ok"] and verdict["finished"], verdict
    checks = {f["check"] for f in verdict["findings"]}
    assert "early_start" not in checks and "endpoint_inconsistency" not in checks
    assert "call_OTHER" not in json.dumps(verdict)
    assert next(f["message"] for f in verdict["findings"] if f["check"] == "stream") == (
        "turn 1: 33 stream events, whole and in order; the run reported event 31 "
        "(response.output_item.done): its data is not a JSON object; their deltas add up, and they "
        "assemble to the recorded response (completed)")
