"""Honest runs verify clean, whatever way they ended — and verify says what it saw.

Each run is real (offline model over loopback, real MCP servers as subprocesses); the
findings are checked for what a user reads: which outcome the server gave, that a failure
kept its marker, that a call that never left toolrelay was not sent anywhere.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolrelay.verify import LINKS, Finding, Verdict

from .conftest import RUNS
from .helpers import find, iter_events, read_events, tool_call, verdict_of


def messages(verdict: Verdict, link: str) -> str:
    return "\n".join(f.message for f in verdict.findings if f.link == link)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_every_honest_run_verifies_clean(name: str, run_named: Any) -> None:
    verdict = verdict_of(run_named(name))
    assert verdict.broken is None, verdict.broken
    assert verdict.ok
    assert {f.link for f in verdict.findings} >= {"model_response", "correlation", "next_input"}
    if name != "max_turns_run":
        assert verdict.finished, verdict.unfinished
        assert verdict.run_status == "completed"


def test_seed_run_holds_every_link_in_order(seed_run: Path) -> None:
    verdict = verdict_of(seed_run)
    links = [f.link for f in verdict.findings]
    assert set(links) == set(LINKS)
    assert links == sorted(links, key=LINKS.index)  # findings come in the seed's order
    parse = messages(verdict, "parse")
    assert (
        'arguments text "{\\"path\\":\\"notes.txt\\",\\"head\\":20}" '
        'parsed to {"path": "notes.txt", "head": 20}' in parse
    )
    assert "fs__read_text_file → fs/read_text_file; tools/call mcp id 4" in messages(verdict, "routing")
    assert "fs (connection 1) answered mcp id 4: a result (ok)" in messages(verdict, "server_check")
    assert "the output is the tool's own result" in messages(verdict, "feedback")
    call_link = next(f for f in verdict.findings if f.check == "call_links")
    assert (call_link.call_id, call_link.mcp_id, call_link.server) == ("call_offline_0001", 4, "fs")
    assert call_link.seqs and all(isinstance(s, int) for s in call_link.seqs)


def test_tool_error_is_verified_as_a_failure_fed_back_as_failure(run_named: Any) -> None:
    verdict = verdict_of(run_named("tool_error_run"))
    assert "isError: true (tool error)" in messages(verdict, "server_check")
    assert "keeps the failure (a tool error (isError: true))" in messages(verdict, "feedback")
    assert '"Error (tool): ' in messages(verdict, "feedback")


def test_invalid_arguments_and_unknown_tools_never_reach_a_server(run_named: Any) -> None:
    path = run_named("invalid_run")
    verdict = verdict_of(path)
    parse = messages(verdict, "parse")
    assert 'arguments text "{not json" was refused: arguments are not valid JSON' in parse
    server = messages(verdict, "server_check")
    assert server.count("invalid_arguments: not sent to any server") == 2
    assert "unknown_tool: not sent to any server" in server
    assert "fs__delete_everything is not a declared alias: reported as an unknown tool" in messages(
        verdict, "routing"
    )
    assert not list(iter_events(read_events(path), "mcp_request", method="tools/call"))


def test_a_crashed_server_is_a_transport_failure_fed_back_as_such(run_named: Any) -> None:
    path = run_named("crash_run")
    verdict = verdict_of(path)
    assert "no answer (exited)" in messages(verdict, "server_check")
    assert "Error (server box exited)" in messages(verdict, "feedback")
    request = tool_call(read_events(path))
    assert not [
        e
        for e in read_events(path)
        if e["kind"] == "mcp_response" and e.get("mcp_id") == request["mcp_id"] and e.get("server") == "box"
    ]


def test_protocol_error_image_result_and_refused_consent(run_named: Any) -> None:
    verdict = verdict_of(run_named("errors_run"))
    feedback = messages(verdict, "feedback")
    assert (
        "keeps the failure (a protocol error (reject refuses every call)), sent 1 time(s): "
        '"Error (protocol -32602): reject refuses every call' in feedback
    )
    assert "the output is the tool's own result (2 parts" in feedback  # text + input_image
    assert "not_approved: not sent to any server" in messages(verdict, "server_check")
    assert "JSON-RPC error -32602 (protocol error)" in messages(verdict, "server_check")


def test_media_results_verify_with_the_recorded_media_budget(run_named: Any, tmp_path: Path) -> None:
    """Audio, an image within and one over the media budget, a text/plain blob: verify
    renders them again with the run's own budget; a copy claiming another budget fails."""
    path = run_named("media_run")
    assert verdict_of(path).ok
    events = read_events(path)
    assert find(events, "run_start")["media_budget"] == 100_000
    cuts = [cut for e in iter_events(events, "feedback") for cut in e["cut"]]
    assert cuts == [
        "audio (audio/wav, about 44 bytes) replaced by a text note: no audio input",
        "image (image/png, 300000 bytes) dropped: over --media-budget 100000 bytes",
    ]
    find(events, "run_start")["media_budget"] = 1_000_000
    claimed = tmp_path / "claimed.jsonl"
    claimed.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    broken = verdict_of(claimed).broken
    assert broken is not None and broken.link == "feedback"
    assert "render_output gives" in broken.message


def test_max_turns_is_unfinished_not_broken(run_named: Any) -> None:
    verdict = verdict_of(run_named("max_turns_run"))
    assert verdict.ok and not verdict.finished
    assert verdict.run_status == "max_turns"
    assert "the run stopped at the turn limit (1): reached --max-turns 1" in verdict.unfinished[0]
    assert (
        "call_offline_0001 has no output in a later request: the model never saw its result"
        in verdict.unfinished
    )
    assert "not sent to the model (the run ended)" in messages(verdict, "feedback")


def test_chain_mode_is_checked_by_previous_response_id(run_named: Any) -> None:
    path = run_named("chain_run")
    events = read_events(path)
    second = [e for e in events if e["kind"] == "model_request"][1]["body"]
    assert second["previous_response_id"] == "resp_offline_0001"
    assert [i["type"] for i in second["input"]] == ["function_call_output"]
    context = messages(verdict_of(path), "next_input")
    assert (
        "request 2 continues resp_offline_0001 (previous_response_id) with the outputs of its 1 call(s)"
        in context
    )
    assert "request 3 continues resp_offline_0002" in context


def test_strict_mode_compares_arguments_after_null_stripping(run_named: Any) -> None:
    path = run_named("strict_run")
    events = read_events(path)
    parsed = find(events, "call_parsed")
    assert json.loads(parsed["arguments_text"]) == {"path": "notes.txt", "head": 20, "tail": None}
    assert tool_call(events)["message"]["params"]["arguments"] == {"path": "notes.txt", "head": 20}
    verdict = verdict_of(path)
    assert verdict.ok
    assert "carries the values of the arguments text" in messages(verdict, "routing")


def test_parallel_calls_are_each_paired(run_named: Any) -> None:
    verdict = verdict_of(run_named("parallel_run"))
    assert "request 2 answers each of the 3 call(s) of response 1 once, by call_id" in messages(
        verdict, "correlation"
    )
    links = [f for f in verdict.findings if f.check == "call_links"]
    assert sorted(f.mcp_id for f in links) == [4, 5, 6]  # type: ignore[type-var]
    assert len({f.call_id for f in links}) == 3


def test_a_tools_list_change_lets_the_declarations_change(run_named: Any) -> None:
    verdict = verdict_of(run_named("change_run"))
    context = messages(verdict, "next_input")
    assert "request 2 offers the declarations rebuilt since request 1 (tools/list_changed from box" in context
    assert "(tools/list_changed from box) are what the servers' tools/list rules give" in context


def test_findings_carry_both_id_domains(seed_run: Path) -> None:
    verdict = verdict_of(seed_run)
    call_findings: list[Finding] = [f for f in verdict.findings if f.call_id is not None]
    assert call_findings
    for finding in call_findings:
        assert finding.call_id == "call_offline_0001"
        assert finding.turn == 1
    assert {f.mcp_id for f in call_findings if f.link in ("routing", "server_check", "correlation")} == {4}
    as_dict = verdict.to_dict()
    assert as_dict["ok"] is True and as_dict["broken"] is None
    assert json.dumps(as_dict)  # the JSON report is serialisable
