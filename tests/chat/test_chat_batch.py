"""A batch whose tasks name their own endpoint: ``base_url``, ``api`` and ``api_key_env`` (the
variable holding the key, never the key), as a rollout gateway hands out one URL per
session. Two stand-ins on two ports: one with both APIs and a key, one chat-only."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from chat_helpers import make_workspace, verified

import toolrelay
from toolrelay.batches import BatchOptions
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.runner import RunOptions

READ = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 1}}
SCRIPT = {"turns": [{"calls": [READ]}, {"message": "done"}]}


def test_tasks_run_on_their_own_endpoints_in_their_own_dialects(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "workspace")
    with OfflineModel(parse_script(SCRIPT), require_key="sk-task-a") as keyed, \
            OfflineModel(parse_script(SCRIPT), chat_only=True) as chat_only:
        tasks = [
            {"id": "a-responses", "task": "Read notes.txt", "base_url": keyed.base_url,
             "api_key_env": "KEY_A"},
            {"id": "a-chat", "task": "Read notes.txt", "base_url": keyed.base_url, "api_key_env": "KEY_A",
             "api": "chat"},
            {"id": "b-chat", "task": "Read notes.txt", "base_url": chat_only.base_url, "api": "chat"},
            {"id": "b-auto", "task": "Read notes.txt", "base_url": chat_only.base_url, "api": "auto"},
            {"id": "no-key", "task": "Read notes.txt", "base_url": keyed.base_url,
             "api_key_env": "UNSET_KEY"},
            {"id": "bad-api", "task": "Read notes.txt", "api": "soap"},
        ]
        tasks_file = tmp_path / "tasks.jsonl"
        tasks_file.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
        run = RunOptions(model="gpt-4.1", environ={"KEY_A": "sk-task-a"}, base_url=chat_only.base_url,
                         config=[in_process_file_server(workspace)])
        finished = {r.id: r for r in toolrelay.batch(tasks_file, BatchOptions(out=tmp_path / "out", run=run,
                                                                               concurrency=2))}
        keyed_paths = [("messages" in body) for body in keyed.requests]
        chat_bodies = [body for body in chat_only.requests if "messages" in body]
    assert sorted(finished) == ["a-chat", "a-responses", "b-auto", "b-chat", "no-key"]  # bad-api: skipped
    for name in ("a-responses", "a-chat", "b-chat", "b-auto"):
        assert finished[name].completed, (name, finished[name])
        assert verified(tmp_path / "out" / "transcripts" / f"{name}.jsonl") == "", name
    assert not finished["no-key"].completed
    assert "api_key_env names UNSET_KEY, which is not set" in str(finished["no-key"].error)
    assert sorted(keyed_paths) == [False, False, True, True]
    assert len(chat_bodies) == 4
    text = (tmp_path / "out" / "transcripts" / "a-chat.jsonl").read_text()
    assert "sk-task-a" not in text


def test_fifty_chat_tasks_on_two_endpoints_verify_and_export(
    tmp_path: Path, toolrelay_cmd: list[str]
) -> None:
    """The issue's done-when: 50 tasks split over two stand-ins by their own ``base_url``, the
    batch in the chat dialect, each transcript verifying; exported to chat and evals rows, and
    ``--only-verified`` leaves out the one run tampered with afterwards, saying so."""
    workspace = make_workspace(tmp_path / "workspace")
    with OfflineModel(parse_script(SCRIPT)) as first, \
            OfflineModel(parse_script(SCRIPT), chat_only=True) as second:
        tasks = [{"id": f"t{n:02}", "task": "Read notes.txt", "base_url": (first, second)[n % 2].base_url}
                 for n in range(50)]
        tasks_file = tmp_path / "tasks.jsonl"
        tasks_file.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
        run = RunOptions(model="gpt-4.1", api="chat", base_url=first.base_url,  # each task: its own
                         environ={}, config=[in_process_file_server(workspace)])
        finished = list(toolrelay.batch(tasks_file, BatchOptions(out=tmp_path / "out", run=run,
                                                                 concurrency=16)))
        served = [len(first.requests), len(second.requests)]
        assert all("messages" in body for body in [*first.requests, *second.requests])
    assert len(finished) == 50 and all(r.completed for r in finished)
    assert served == [50, 50]  # 25 tasks each, two requests a task
    transcripts = tmp_path / "out" / "transcripts"
    assert [verified(transcripts / f"{t['id']}.jsonl") for t in tasks] == [""] * 50
    def export(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*toolrelay_cmd, "export", str(tmp_path / "out"), *args], capture_output=True,
                              text=True, timeout=60)
    chat = export("--format", "chat")
    rows = [json.loads(line) for line in chat.stdout.splitlines()]
    assert sorted(row["task_id"] for row in rows) == [t["id"] for t in tasks], chat.stderr
    assert all(row["messages"][-2]["content"] == "line 1\n" for row in rows)
    evals = export("--format", "evals")
    assert [json.loads(line)["sample"]["output_text"] for line in evals.stdout.splitlines()] == ["done"] * 50
    tampered = transcripts / "t17.jsonl"
    tampered.write_text(tampered.read_text().replace('"content": "line 1\\n"', '"content": "line 9\\n"'))
    kept = export("--format", "evals", "--only-verified")
    assert kept.returncode == 0, kept.stderr
    ids = sorted(json.loads(line)["item"]["task_id"] for line in kept.stdout.splitlines())
    assert ids == [t["id"] for t in tasks if t["id"] != "t17"]
    assert "skipped 1 of 50 run(s) that do not verify" in kept.stderr and "t17.jsonl" in kept.stderr
