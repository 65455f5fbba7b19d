"""A batch whose tasks name their own endpoint: ``base_url``, ``api`` and ``api_key_env`` (the
variable holding the key, never the key), as a rollout gateway hands out one URL per
session. Two stand-ins on two ports: one with both APIs and a key, one chat-only."""

from __future__ import annotations

import json
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
