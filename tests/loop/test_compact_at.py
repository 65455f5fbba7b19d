"""``--compact-at TOKENS`` / ``compact_at``: asked for, refused where it cannot be said, and
the stand-in compacting on its own once a context crosses the threshold (streamed or not)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from testkit.openai_wire import check_body
from testkit.transcripts import transcript_events
from toolrelay.errors import UsageError
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.offline import parse_script
from toolrelay.relay.loop import RunLimits
from toolrelay.runner import RunOptions, run_async
from toolrelay.verify import load_run, verify

READ = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt"}}


def _run(folder: Path, *, compact_at: int, turns: int, stream: bool = True, chain: bool = False,
         ) -> list[dict[str, Any]]:
    lines = "".join(f"line {n}: some text to read\n" for n in range(40))
    (folder / "notes.txt").write_text(lines, encoding="utf-8")
    script = {"turns": [{"calls": [READ]} for _ in range(turns)] + [{"message": "done"}]}
    (folder / "script.json").write_text(json.dumps(script), encoding="utf-8")
    opts = RunOptions(model="offline", script=folder / "script.json", config=[in_process_file_server(folder)],
                      transcript=folder / "run.jsonl", compact_at=compact_at, stream=stream, chain=chain,
                      limits=RunLimits(max_turns=turns + 2))
    result = asyncio.run(run_async("Read notes.txt", opts))
    assert result.status == "completed" and result.final_text == "done", result.reason
    verdict = verify(load_run(folder / "run.jsonl"))
    assert verdict.ok, verdict.broken
    return transcript_events(folder / "run.jsonl")


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_the_stand_in_compacts_when_the_context_crosses_the_threshold(tmp_path: Path, stream: bool) -> None:
    events = _run(tmp_path, compact_at=600, turns=8, stream=stream)
    requests = [e for e in events if e["kind"] == "model_request"]
    records = [e for e in events if e["kind"] == "compaction"]
    assert records, "the context grew past 600 tokens: the stand-in compacts"
    later = {r["turn"]: r for r in requests}
    followed = [record for record in records if record["turn"] + 1 in later]
    assert followed
    for record in followed:  # the next input starts from the item
        assert later[record["turn"] + 1]["body"]["input"][0]["type"] == "compaction"
        assert record["dropped"] > 0
    for request in requests:
        check_body(request["body"])
        assert request["body"]["context_management"] == [{"type": "compaction", "compact_threshold": 600}]
    lengths = [len(r["body"]["input"]) for r in requests]
    assert max(lengths) < 2 * len(requests)  # it never carried the whole run


def test_chain_mode_asks_for_compaction_and_prunes_nothing(tmp_path: Path) -> None:
    events = _run(tmp_path, compact_at=600, turns=6, chain=True)
    responses = [e for e in events if e["kind"] == "model_response"]
    assert any(item["type"] == "compaction" for r in responses for item in r["body"]["output"])
    assert not [e for e in events if e["kind"] == "compaction"]  # previous_response_id carries it all
    requests = [e for e in events if e["kind"] == "model_request"]
    assert all("previous_response_id" in r["body"] for r in requests[1:])


def test_compact_at_is_refused_with_the_chat_api_before_anything_starts() -> None:
    said = (r"--compact-at \(compact_at\) asks the Responses API to compact the context "
            r"\(context_management\), which Chat Completions has not")
    with pytest.raises(UsageError, match=said):
        asyncio.run(run_async("x", RunOptions(model="offline", api="chat", compact_at=1000, config=[])))
    with pytest.raises(UsageError, match=r"compact_at\) must be a positive number of tokens, not 0"):
        asyncio.run(run_async("x", RunOptions(model="offline", compact_at=0, config=[])))


def test_the_cli_refuses_compact_at_with_api_chat(tmp_path: Path, toolrelay_cmd: list[str]) -> None:
    for verb in ("run", "batch"):
        target = ["x"] if verb == "run" else [str(tmp_path / "tasks.jsonl"), "--out", str(tmp_path / "out")]
        (tmp_path / "tasks.jsonl").write_text('{"id": "t1", "task": "x"}\n', encoding="utf-8")
        args = [verb, "--model", "offline", "--api", "chat", "--compact-at", "500", *target]
        proc = subprocess.run([*toolrelay_cmd, *args], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 2, (verb, proc.stdout, proc.stderr)
        assert "--compact-at (compact_at) asks the Responses API to compact the context" in proc.stderr, verb
    args = ["run", "--model", "offline", "--compact-at", "0", "x"]
    proc = subprocess.run([*toolrelay_cmd, *args], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "--compact-at: must be a whole number of at least 1, not '0'" in proc.stderr


def test_a_batch_task_may_set_its_own_threshold() -> None:
    from toolrelay.batches.tasks import task_specs

    [spec] = task_specs([{"id": "t1", "task": "x", "compact_at": 5000}])
    assert spec.overrides == {"compact_at": 5000}
    said = "task 1: task t1: compact_at must be a whole number of at least 1, got 0"
    with pytest.raises(UsageError, match=said):
        list(task_specs([{"id": "t1", "task": "x", "compact_at": 0}]))


def test_a_script_entry_compact_must_be_a_boolean() -> None:
    said = r"script <script>: turns\[0\]: compact must be true or false, got 'yes'"
    with pytest.raises(UsageError, match=said):
        parse_script({"turns": [{"calls": [READ], "compact": "yes"}]})
    assert parse_script({"turns": [{"calls": [READ], "compact": True}]}).turns[0].compact
