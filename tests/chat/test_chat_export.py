"""``toolrelay export``: a batch folder's runs as chat, responses or evals rows; with
``--only-verified`` a tampered run is left out and said so."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from chat_helpers import make_workspace

import toolrelay
from toolrelay.batches import BatchOptions
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.runner import RunOptions

READ = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 1}}
SCRIPT = {"turns": [{"calls": [READ]}, {"message": "done"}]}


@pytest.fixture(scope="module")
def batch_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("export")
    workspace = make_workspace(root / "workspace")
    with OfflineModel(parse_script(SCRIPT)) as model:
        tasks = root / "tasks.jsonl"
        tasks.write_text("".join(json.dumps({"id": f"t{n}", "task": "Read notes.txt", "api": api}) + "\n"
                                 for n, api in enumerate(["chat", "responses", "chat"], 1)), encoding="utf-8")
        run = RunOptions(model="gpt-4.1", base_url=model.base_url, environ={},
                         config=[in_process_file_server(workspace)])
        assert all(r.completed for r in toolrelay.batch(tasks, BatchOptions(out=root / "out", run=run)))
    return root / "out"


def export(toolrelay_cmd: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*toolrelay_cmd, "export", *args], capture_output=True, text=True, timeout=60)


def test_chat_rows_pair_each_tool_call_with_its_tool_message(
    batch_dir: Path, toolrelay_cmd: list[str]
) -> None:
    proc = export(toolrelay_cmd, str(batch_dir), "--format", "chat")
    assert proc.returncode == 0, proc.stderr
    rows = {row["task_id"]: row for row in map(json.loads, proc.stdout.splitlines())}
    assert sorted(rows) == ["t1", "t2", "t3"]
    for row in rows.values():  # a chat run's recorded messages and a Responses run's, alike
        roles = [m["role"] for m in row["messages"]]
        assert roles[-4:] == ["user", "assistant", "tool", "assistant"], roles
        assistant, tool = row["messages"][-3], row["messages"][-2]
        assert assistant["tool_calls"][0]["id"] == tool["tool_call_id"] and tool["content"] == "line 1\n"
        assert row["messages"][-1]["content"] == "done"
        assert row["tools"][0]["type"] == "function" and "name" in row["tools"][0]["function"]
        assert row["reward"] is None and row["metrics"] == {} and row["run_id"]
        assert [t["usage"] is not None for t in row["turns"]] == [True, True]


def test_evals_and_responses_rows(batch_dir: Path, toolrelay_cmd: list[str]) -> None:
    evals = [json.loads(line) for line in export(toolrelay_cmd, str(batch_dir), "--format", "evals").stdout
             .splitlines()]
    assert [row["item"]["input"] for row in evals] == ["Read notes.txt"] * 3
    assert [row["sample"]["output_text"] for row in evals] == ["done"] * 3
    responses = [json.loads(line) for line in
                 export(toolrelay_cmd, str(batch_dir / "transcripts" / "t2.jsonl"), "--format", "responses")
                 .stdout.splitlines()]
    [row] = responses
    assert row["input"] == [{"role": "user", "content": "Read notes.txt"}] and row["task_id"] is None
    assert [i.get("type") for i in row["output"]] == ["function_call", "function_call_output", "message"]


def test_only_verified_leaves_out_a_tampered_run_and_says_why(
    batch_dir: Path, tmp_path: Path, toolrelay_cmd: list[str]
) -> None:
    copy = tmp_path / "out"
    (copy / "transcripts").mkdir(parents=True)
    for path in (batch_dir / "transcripts").glob("*.jsonl"):
        text = path.read_text()
        if path.stem == "t3":
            text = text.replace('"content": "line 1\\n"', '"content": "line 9\\n"')
        (copy / "transcripts" / path.name).write_text(text)
    rows = str(tmp_path / "rows")
    proc = export(toolrelay_cmd, str(copy), "--format", "chat", "--only-verified", "-o", rows)
    assert proc.returncode == 0
    ids = [json.loads(line)["task_id"] for line in (tmp_path / "rows").read_text().splitlines()]
    assert ids == ["t1", "t2"]
    assert "skipped 1 of 3 run(s) that do not verify" in proc.stderr and "t3.jsonl: feedback:" in proc.stderr
    missing = export(toolrelay_cmd, str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "no such transcript or batch folder" in missing.stderr
