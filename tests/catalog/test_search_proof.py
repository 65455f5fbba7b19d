"""The proof of tool search: each search has its one output in its turn, calls are of loaded
tools only, a client search loads only offered tools; tampered copies of real transcripts
(a search output removed, a loaded namespace changed, a loaded tool swapped, a hosted
load dropped) are rejected by ``verify``, and ``explain`` and ``view`` show the searches."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from search_helpers import ANSWER, CALLS, SearchRun, search_run

from testkit.transcripts import transcript_events
from toolrelay.verify import Verdict, load_run, verify
from toolrelay.verify.explain import explain
from toolrelay.view.build import build_trace

QUERY = "search github issues send slack message"
SCRIPTS = {
    "client": {"turns": [{"search": {"query": QUERY, "limit": 6}}, {"calls": CALLS}, ANSWER]},
    "hosted": {"turns": [{"search": {"query": QUERY, "limit": 6}, "calls": CALLS}, ANSWER]},
}
Record = dict[str, Any]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SearchRun]:
    root = tmp_path_factory.mktemp("search-proof")
    return {mode: search_run(root, mode, script=script, count=3) for mode, script in SCRIPTS.items()}


def _records(path: Path) -> list[Record]:
    return transcript_events(path)  # request bodies whole: each later one is recorded as a delta


def _tampered(done: SearchRun, change: Callable[[list[Record]], None], tmp_path: Path) -> Verdict:
    records = _records(done.transcript)
    change(records)
    copy = tmp_path / "tampered.jsonl"
    copy.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return verify(load_run(copy))


def _search_findings(verdict: Verdict) -> list[Any]:
    return [f for f in verdict.findings if f.check in ("tool_search", "tool_search_load")]


def _bodies(records: list[Record]) -> list[dict[str, Any]]:
    """Every request body and response body of the transcript (the items they hold)."""
    found = [r["body"] for r in records if r["kind"] in ("model_request", "model_response")]
    return [body for body in found if isinstance(body, dict)]


def _each_output_item(records: list[Record], kind: str, change: Callable[[dict[str, Any]], None]) -> None:
    for body in _bodies(records):
        for key in ("input", "output"):
            for item in body.get(key) or []:
                if isinstance(item, dict) and item.get("type") == kind:
                    change(item)


def test_real_search_runs_verify_with_their_search_findings(runs: dict[str, SearchRun]) -> None:
    for mode, done in runs.items():
        assert done.result.status == "completed", (mode, done.result.reason)
        verdict = verify(load_run(done.transcript))
        assert verdict.broken is None, (mode, verdict.broken)
        found = _search_findings(verdict)
        pairs = [f for f in found if f.check == "tool_search"]
        loads = [f for f in found if f.check == "tool_search_load"]
        assert len(pairs) == 1 and all(f.ok for f in found), mode
        assert [f.message for f in loads] == ["github.search_issues is loaded by a search before it",
                                              "slack.send_message is loaded by a search before it"], mode
    found = _search_findings(verify(load_run(runs["client"].transcript)))
    [client] = [f for f in found if f.check == "tool_search"]
    assert client.message.startswith(f"client tool search {client.call_id} of response 1 ({QUERY!r}) is "
                                     "answered once, in request 2, loading 6 offered tool(s)")


def _drop_search_outputs(records: list[Record]) -> None:
    for body in _bodies(records):
        for key in ("input", "output"):
            if isinstance(body.get(key), list):
                body[key] = [i for i in body[key] if i.get("type") != "tool_search_output"]
    for record in records:  # and the model_stream events of a hosted response
        if record["kind"] == "model_stream" and '"tool_search_output"' in record["data"]:
            data = json.loads(record["data"])
            if data.get("item", {}).get("type") == "tool_search_output":
                data["item"] = {**data["item"], "type": "message_removed"}
            record["data"] = json.dumps(data)


def _rename_slack(item: dict[str, Any]) -> None:
    for space in item.get("tools", []):
        if space.get("name") == "slack":
            space["name"] = "calendar"


def _swap_loaded(item: dict[str, Any]) -> None:
    for space in item.get("tools", []):
        for tool in space.get("tools", []):
            if tool.get("name") == "search_issues":
                tool["name"] = "delete_issue"


CASES: dict[str, tuple[str, Callable[[list[Record]], None], str]] = {
    "client-output-removed": ("client", _drop_search_outputs,
                              "request 2 adds no tool_search_output with its call_id (exactly one is owed)"),
    "hosted-output-removed": ("hosted", _drop_search_outputs,
                              "the response holds no tool_search_output after it with its call_id"),
    "client-namespace-changed": (
        "client", lambda r: _each_output_item(r, "tool_search_output", _rename_slack),
        "slack.send_message is called, but request 2 does not declare it and no search loaded it"),
    "client-loaded-tool-swapped": (
        "client", lambda r: _each_output_item(r, "tool_search_output", _swap_loaded),
        "the tool_search event does not record the output request 2 sent"),
    "hosted-loaded-tool-swapped": (
        "hosted", lambda r: _each_output_item(r, "tool_search_output", _swap_loaded),
        "it loads github.delete_issue, which request 1 did not declare deferred as loaded"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_tampered_search_transcripts_are_rejected(
    case: str, runs: dict[str, SearchRun], tmp_path: Path
) -> None:
    mode, change, said = CASES[case]
    verdict = _tampered(runs[mode], change, tmp_path)
    assert verdict.broken is not None, case
    broken = [f.message for f in _search_findings(verdict) if not f.ok]
    assert any(said in message for message in broken), (case, broken)



def test_explain_and_view_show_searches_and_what_they_loaded(runs: dict[str, SearchRun]) -> None:
    done = runs["client"]
    run = load_run(done.transcript)
    text = explain(run, verify(run))
    assert re.search(r"declares 0 tool\(s\), tool_search \(client\) · digest [0-9a-f]{12}", text)
    assert f'tool_search_call (client) "{QUERY}"' in text
    searched = rf"toolrelay searched '{QUERY}' for call_offline_\d+: loads [^\n]*github\.search_issues"
    assert re.search(searched, text)
    hosted = load_run(runs["hosted"].transcript)
    said = explain(hosted, verify(hosted))
    declared = r"declares 75 tool\(s\) in 3 namespace\(s\) \(75 deferred\), tool_search \(hosted\)"
    assert re.search(declared, said)
    assert re.search(r"tool_search_output loads [^\n]*slack\.send_message", said)
    rows = build_trace(_records(done.transcript), verify(run)).rows()
    [search] = [row for row in rows if row.kind == "tool_search"]
    assert search.label == f"tool search {QUERY!r} (limit 6)" and "github.search_issues (" in search.detail
    [first] = [row for row in rows if row.kind == "model_request"][:1]
    assert "declares 0 tool(s), tool_search (client) · digest " in first.detail
    answers = [row for row in rows if row.kind == "model_response"]
    assert f'tool_search_call (client) "{QUERY}"' in answers[0].detail
