"""Tools added mid-run under ``--declare namespaces`` and tool search: a server lists a new
tool (``notifications/tools/list_changed``), the next request keeps the first request's
``tools`` byte for byte and offers the new tool in an ``additional_tools`` input item, the
model calls it, every body passes the openai types, and the transcript verifies; a copy
with the item removed is rejected. The offline stand-in and the growing stdio server."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import run_script

from testkit.openai_wire import check_body
from testkit.servers import GROWING_SERVER
from testkit.transcripts import transcript_events
from toolrelay.client.config import ServerConfig
from toolrelay.relay.stages.consent import approve_all
from toolrelay.verify import load_run, verify
from toolrelay.verify.explain import explain
from toolrelay.view.build import build_trace

GROW = ServerConfig(name="grow", transport="stdio", command=sys.executable, args=(str(GROWING_SERVER),))
SCRIPT = {"turns": [
    {"calls": [{"namespace": "grow", "name": "grow", "arguments": {}}]},
    {"calls": [{"namespace": "grow", "name": "tool_1", "arguments": {}}]},
    {"message": "grown"},
]}
MODES: dict[str, dict[str, Any]] = {
    "namespaces": {"declare": "namespaces"},
    "client": {"tool_search": "client", "always_load": ("grow.*",)},
    "hosted": {"tool_search": "hosted", "always_load": ("grow.*",)},
}


@pytest.fixture(scope="module", params=sorted(MODES))
def grown(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    root = tmp_path_factory.mktemp(f"added-{request.param}")
    transcript = root / "run.jsonl"
    options = MODES[request.param]
    done = run_script(root, SCRIPT, "grow", servers=[GROW], transcript=transcript, approve=approve_all,
                      **options)
    return done, transcript


def _additions(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in body["input"] if i.get("type") == "additional_tools"]


def test_a_tool_added_mid_run_comes_as_additional_tools_and_the_tools_stay(grown: tuple[Any, Path]) -> None:
    done, _ = grown
    assert done.result.status == "completed", done.result.stop_reason
    first, second, third = done.requests
    dumped = json.dumps(first["tools"])  # as sent: the same bytes, in the same order
    assert json.dumps(second["tools"]) == dumped == json.dumps(third["tools"])
    assert _additions(first) == []
    [item] = _additions(second)
    assert item["role"] == "developer"
    assert [(t["type"], t["name"], [f["name"] for f in t["tools"]]) for t in item["tools"]] == [
        ("namespace", "grow", ["tool_1"])]
    replayed, grown = _additions(third)  # the first replayed (the prefix stays), then tool_2
    assert replayed == item and [f["name"] for f in grown["tools"][0]["tools"]] == ["tool_2"]
    for body in done.requests:
        check_body(body)
    assert [(c.alias, c.status) for c in done.result.calls] == [("grow.grow", "ok"), ("grow.tool_1", "ok")]


def test_the_transcript_verifies_and_a_copy_without_the_item_is_rejected(
    grown: tuple[Any, Path], tmp_path: Path
) -> None:
    _, transcript = grown
    run = load_run(transcript)
    verdict = verify(run)
    assert verdict.ok, [f.message for f in verdict.broken_findings()]
    shown = explain(run, verdict)
    assert "1 tool(s) + 1 added by additional_tools (grow.tool_1)" in shown
    assert "+ 2 added by additional_tools (grow.tool_1, grow.tool_2)" in shown
    rows = build_trace(transcript_events(transcript)).rows()
    drawn = [row.detail for row in rows if row.stage == "request"]
    assert any(re.search(r"tools: \d+ \+ 2 added by additional_tools \(grow.tool_1, grow.tool_2\)", d)
               for d in drawn), drawn
    events = transcript_events(transcript)
    for event in events:
        body = event.get("body") if event.get("kind") == "model_request" else None
        if isinstance(body, dict) and isinstance(body.get("input"), list):
            body["input"] = [i for i in body["input"] if i.get("type") != "additional_tools"]
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    verdict = verify(load_run(tampered))
    assert verdict.broken is not None
    failed = [f.message for f in verdict.broken_findings()]
    assert any("request 2's tools are not the declarations in force" in m for m in failed), failed
    assert any("grow.tool_1 ran, but request 2 declared no such tool" in m for m in failed), failed


SHRINKING = ServerConfig(name="grow", transport="stdio", command=sys.executable, args=(str(GROWING_SERVER),),
                         env={"GROWING_SHRINKS": "1"})
CALL_AGAIN = {"turns": [
    {"calls": [{"namespace": "grow", "name": "grow", "arguments": {}}]},  # removes grow, adds tool_1
    {"calls": [{"namespace": "grow", "name": "grow", "arguments": {}}]},
    {"message": "done"},
]}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_tool_removed_mid_run_is_refused_with_why_and_the_run_verifies(mode: str, tmp_path: Path) -> None:
    transcript = tmp_path / "run.jsonl"
    done = run_script(tmp_path, CALL_AGAIN, "grow", servers=[SHRINKING], transcript=transcript,
                      approve=approve_all, **MODES[mode])
    calls = [(c.alias, c.status) for c in done.result.calls]
    assert calls == [("grow.grow", "ok"), ("grow.grow", "refused_by_hook")]  # the second never sent
    said = done.outputs(2)[-1]["output"]
    assert said == ("Error (refused by hook): grow.grow is no longer available: its server's tool list "
                    "changed during the run (tools/list_changed) and no longer lists it, so nothing was "
                    "sent; do not call it again")
    assert done.requests[1]["tools"] == done.requests[0]["tools"]
    for body in done.requests:
        check_body(body)
    verdict = verify(load_run(transcript))
    assert verdict.ok, [f.message for f in verdict.broken_findings()]


def test_under_hosted_search_an_added_tool_comes_deferred(tmp_path: Path) -> None:
    script = {"turns": [SCRIPT["turns"][0], {"message": "ok"}]}
    transcript = tmp_path / "run.jsonl"
    done = run_script(tmp_path, script, "grow", servers=[GROW], transcript=transcript, approve=approve_all,
                      tool_search="hosted", always_load=("grow.grow",))
    first, second = done.requests
    assert second["tools"] == first["tools"]
    [item] = _additions(second)
    assert [(t["name"], t.get("defer_loading")) for t in item["tools"][0]["tools"]] == [("tool_1", True)]
    check_body(second)
    verdict = verify(load_run(transcript))
    assert verdict.ok, [f.message for f in verdict.broken_findings()]


def test_with_chain_the_tools_are_rewritten_as_before(tmp_path: Path) -> None:
    transcript = tmp_path / "run.jsonl"
    done = run_script(tmp_path, SCRIPT, "grow", servers=[GROW], transcript=transcript, approve=approve_all,
                      declare="namespaces", chain=True)
    _, second, _ = done.requests
    assert "previous_response_id" in second and not _additions(second)
    assert [t["name"] for t in second["tools"][0]["tools"]] == ["grow", "tool_1"]
    verdict = verify(load_run(transcript))
    assert verdict.ok, [f.message for f in verdict.broken_findings()]
