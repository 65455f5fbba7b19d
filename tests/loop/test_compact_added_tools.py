"""Tools added mid-run survive a compaction: under ``--declare namespaces`` and tool search
the ``additional_tools`` items before a compaction item are dropped with the rest of the
context, so the next request offers every tool added so far again, in one
``additional_tools`` item after the carried context (``relay/stages/additions.py`` compares
what the kept context still offers, not what was ever sent). The model calls an added tool
after the compaction, every body passes the openai types, the transcript verifies, and a
copy whose post-compaction request lost the re-sent item is rejected. The growing stdio
server and the offline stand-in (``"compact": true`` on the second response)."""

from __future__ import annotations

import json
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

GROW = ServerConfig(name="grow", transport="stdio", command=sys.executable, args=(str(GROWING_SERVER),))
SCRIPT = {"turns": [
    {"calls": [{"namespace": "grow", "name": "grow", "arguments": {}}]},  # lists tool_1
    {"calls": [{"namespace": "grow", "name": "tool_1", "arguments": {}}], "compact": True},  # lists tool_2
    {"calls": [{"namespace": "grow", "name": "tool_1", "arguments": {}}]},  # after the compaction
    {"message": "grown"},
]}
MODES: dict[str, dict[str, Any]] = {
    "namespaces": {"declare": "namespaces"},
    "client": {"tool_search": "client", "always_load": ("grow.*",)},
    "hosted": {"tool_search": "hosted", "always_load": ("grow.*",)},
}


def _added(body: dict[str, Any]) -> list[list[str]]:
    """The tool names each ``additional_tools`` item of a request's input offers, in order."""
    return [[t["name"] for ns in i["tools"] for t in ns["tools"]]
            for i in body["input"] if i.get("type") == "additional_tools"]


@pytest.mark.parametrize("mode", sorted(MODES))
def test_tools_added_before_a_compaction_are_offered_again_after_it(mode: str, tmp_path: Path) -> None:
    transcript = tmp_path / "run.jsonl"
    done = run_script(tmp_path, SCRIPT, "grow", servers=[GROW], transcript=transcript, approve=approve_all,
                      compact_at=100_000, **MODES[mode])
    assert done.result.status == "completed"
    assert [(c.alias, c.status) for c in done.result.calls] == [
        ("grow.grow", "ok"), ("grow.tool_1", "ok"), ("grow.tool_1", "ok")]
    _, second, third, fourth = done.requests
    assert [r["turn"] for r in done.records("compaction")] == [2]
    assert _added(second) == [["tool_1"]]
    assert third["input"][0]["type"] == "compaction"  # the item of request 2 was left out with it
    assert _added(third) == [["tool_1", "tool_2"]]  # so every added tool comes again, in one item
    assert _added(fourth) == [["tool_1", "tool_2"], ["tool_3"]]
    assert json.dumps(third["tools"]) == json.dumps(second["tools"])  # the kept prefix stays
    for body in done.requests:
        check_body(body)
    run = load_run(transcript)
    verdict = verify(run)
    assert verdict.ok, [f.message for f in verdict.broken_findings()]
    assert "request_3: 4 input item(s), 1 tool(s) + 2 added by additional_tools (grow.tool_1, grow.tool_2)" \
        in explain(run, verdict)


def test_a_copy_whose_compacted_request_lost_the_added_tools_is_rejected(tmp_path: Path) -> None:
    transcript = tmp_path / "run.jsonl"
    run_script(tmp_path, SCRIPT, "grow", servers=[GROW], transcript=transcript, approve=approve_all,
               compact_at=100_000, declare="namespaces")
    events = transcript_events(transcript)
    third = [e for e in events if e.get("kind") == "model_request"][2]["body"]
    third["input"] = [i for i in third["input"] if i.get("type") != "additional_tools"]
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    failed = [f.message for f in verify(load_run(tampered)).broken_findings()]
    said = ("call_offline_0003: grow.tool_1 ran, but request 3 declared no such tool: "
            "only a declared tool runs")
    assert said in failed, failed
    assert any(m.startswith("request 3's tools are not the declarations in force") for m in failed), failed
