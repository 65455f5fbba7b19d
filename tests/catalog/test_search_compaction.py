"""Client tool search across a compaction: the ``tool_search_output`` a client search was
answered with is left out with the items before the compaction item, so the next request
offers the tools it loaded again, in one ``additional_tools`` item after the calls'
outputs (``additions.reloaded``), and the model calls one of them after the compaction.
Every body passes the openai types, the transcript verifies, and a copy whose compacted
request lost the item is rejected (the call names a tool nothing in its input loaded).
Hosted searches re-send nothing: their tools stay declared, deferred. The 500-tool
catalog's first 3 servers and the offline stand-in (``"compact": true`` on turn 2)."""

from __future__ import annotations

import json
from pathlib import Path

from search_helpers import ANSWER, CALLS, search_run

from testkit.openai_wire import check_body
from testkit.transcripts import transcript_events
from toolrelay.verify import load_run, verify

SEARCH = {"query": "search github issues, send a slack message", "limit": 6}
CLIENT = {"turns": [{"search": SEARCH}, {"calls": [CALLS[0]], "compact": True}, {"calls": [CALLS[1]]},
                    ANSWER]}
HOSTED = {"turns": [{"search": SEARCH, "calls": [CALLS[0]]}, {"calls": [CALLS[0]], "compact": True},
                    {"calls": [CALLS[1]]}, ANSWER]}


def _kinds(body: dict[str, object]) -> list[object]:
    items = body["input"]
    assert isinstance(items, list)
    return [item.get("type") for item in items]


def test_a_client_search_before_a_compaction_still_counts_after_it(tmp_path: Path) -> None:
    done = search_run(tmp_path, "client", script=CLIENT, count=3, compact_at=10**9)
    assert [(c.alias, c.status) for c in done.result.calls] == [
        ("github.search_issues", "ok"), ("slack.send_message", "ok")]
    _, second, third, fourth = done.requests
    [loaded] = [item for item in second["input"] if item.get("type") == "tool_search_output"]
    assert _kinds(third) == ["compaction", "function_call", "function_call_output", "additional_tools"]
    assert third["input"][-1] == {"type": "additional_tools", "role": "developer", "tools": loaded["tools"]}
    assert _kinds(fourth)[:4] == _kinds(third)  # replayed once, not offered twice
    for body in done.requests:
        check_body(body)
    verdict = verify(load_run(done.transcript))
    assert verdict.ok, [f.message for f in verdict.broken_findings()]

    events = transcript_events(done.transcript)
    for event in events:
        body = event.get("body") if event.get("kind") == "model_request" else None
        if isinstance(body, dict) and isinstance(body.get("input"), list):
            body["input"] = [i for i in body["input"] if i.get("type") != "additional_tools"]
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    failed = [f.message for f in verify(load_run(tampered)).broken_findings()]
    said = ("slack.send_message is called, but request 3 does not declare it and no search loaded it "
            "before the call: only a tool the model was given may be called")
    assert said in failed, failed
    ran = ("call_offline_0003: slack.send_message ran, but request 3 declared no such tool: "
           "only a declared tool runs")
    assert ran in failed, failed


def test_a_hosted_search_re_sends_nothing_after_a_compaction(tmp_path: Path) -> None:
    done = search_run(tmp_path, "hosted", script=HOSTED, count=3, compact_at=10**9)
    assert [c.status for c in done.result.calls] == ["ok", "ok", "ok"]
    assert "additional_tools" not in _kinds(done.requests[2])
    verdict = verify(load_run(done.transcript))
    assert verdict.ok, [f.message for f in verdict.broken_findings()]
