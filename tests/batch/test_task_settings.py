"""A batch's request settings: ``--request-settings`` for every task, a task line's
``request_settings`` over it; and a batch whose tasks each name their own endpoint, which
needs none of its own. The stand-ins run over loopback HTTP; every body is checked against
the openai package's types of its dialect."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import toolrelay
from testkit.dialect import Dialect
from testkit.transcripts import transcript_events
from toolrelay.batches import BatchOptions, TaskFile
from toolrelay.errors import UsageError
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.runner import RunOptions
from toolrelay.verify import load_run, verify

READ = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 1}}
SCRIPT = {"turns": [{"calls": [READ]}, {"message": "done"}]}


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def workspace(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.txt").write_text("line 1\nline 2\n", encoding="utf-8")
    return root


def bodies(out: Path, task: str) -> list[dict[str, Any]]:
    events = transcript_events(out / "transcripts" / f"{task}.jsonl")
    return [e for e in events if e["kind"] in ("model_request", "run_start")]


def test_a_tasks_request_settings_go_over_the_batches(tmp_path: Path) -> None:
    files = workspace(tmp_path / "files")
    with OfflineModel(parse_script(SCRIPT)) as model:
        tasks = write(tmp_path / "tasks.jsonl", [
            {"id": "plain", "task": "Read notes.txt"},
            {"id": "own", "task": "Read notes.txt",
             "request_settings": {"metadata": {"task": "own"}, "temperature": 0.1, "top_k": 5}},
            {"id": "chat", "task": "Read notes.txt", "api": "chat",
             "request_settings": {"max_completion_tokens": 64}},
        ])
        run = RunOptions(model="gpt-4.1", base_url=model.base_url, environ={},
                         config=[in_process_file_server(files)],
                         extra_body={"metadata": {"task": "batch"}, "temperature": 0.5,
                                     "service_tier": "flex"})
        finished = {r.id: r for r in toolrelay.batch(tasks, BatchOptions(out=tmp_path / "out", run=run))}
    assert all(result.completed for result in finished.values()), finished
    expected = {
        "plain": {"metadata": {"task": "batch"}, "temperature": 0.5, "service_tier": "flex"},
        "own": {"metadata": {"task": "own"}, "temperature": 0.1, "service_tier": "flex", "top_k": 5},
        "chat": {"metadata": {"task": "batch"}, "temperature": 0.5, "service_tier": "flex",
                 "max_completion_tokens": 64},
    }
    for task, fields in expected.items():
        start, *requests = bodies(tmp_path / "out", task)
        assert len(requests) == 2
        for event in requests:
            body = event["body"]
            assert {key: body.get(key) for key in fields} == fields, task
            Dialect("chat" if task == "chat" else "responses").check(
                {key: value for key, value in body.items() if key != "top_k"})  # vLLM's: no openai field
        if task == "chat":  # recorded in the loop's names
            assert start["settings"]["max_output_tokens"] == 64
            assert "max_completion_tokens" not in start["settings"]
        assert verify(load_run(tmp_path / "out" / "transcripts" / f"{task}.jsonl")).ok, task


@pytest.mark.parametrize(("settings", "says"), [
    ("hot", "task b: request_settings must be an object of request body fields, got 'hot'"),
    ({"model": "gpt-5"}, "task b: request_settings: model is set by toolrelay, not a request setting: use "
                         "--model (a batch task: its model field)"),
    ({"tools": []}, "task b: request_settings: tools is set by toolrelay, not a request setting: use "
                    "--config (the servers' tools), --declare and --tool-search"),
    ({"top_p": 2}, "task b: request_settings: top_p must be from 0 to 1, got 2"),
])
def test_a_bad_request_settings_field_names_its_line_and_is_skipped(
    tmp_path: Path, settings: Any, says: str
) -> None:
    path = write(tmp_path / "tasks.jsonl", [{"id": "a", "task": "x"},
                                            {"id": "b", "task": "x", "request_settings": settings}])
    tasks = TaskFile(path)
    assert tasks.count == 1
    assert tasks.problems == [f"{path}:2: {says}; skipped"]


def test_a_sampling_field_given_twice_in_a_line_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "tasks.jsonl", [{"id": "a", "task": "x", "temperature": 0.2,
                                             "request_settings": {"temperature": 0.4}}])
    assert TaskFile(path).problems == [
        f"{path}:1: task a: temperature is given twice, in the line and in its request_settings: give it "
        "once; skipped"]


def test_a_task_whose_api_cannot_say_a_setting_ends_naming_it(tmp_path: Path) -> None:
    files = workspace(tmp_path / "files")
    with OfflineModel(parse_script(SCRIPT)) as model:
        tasks = write(tmp_path / "tasks.jsonl", [{"id": "r", "task": "Read notes.txt"},
                                                 {"id": "c", "task": "Read notes.txt", "api": "chat"}])
        run = RunOptions(model="gpt-4.1", base_url=model.base_url, environ={},
                         config=[in_process_file_server(files)],
                         extra_body={"include": ["message.output_text.logprobs"]})
        finished = {r.id: r for r in toolrelay.batch(tasks, BatchOptions(out=tmp_path / "out", run=run))}
    assert finished["r"].completed
    assert not finished["c"].completed
    assert finished["c"].error == (
        "task c: the request settings (--request-settings and the task's): include is a Responses field Chat "
        "Completions has not (with --api chat leave it out; --top-logprobs asks for logprobs in both APIs)")


def test_a_batch_whose_tasks_name_their_endpoints_needs_none_of_its_own(tmp_path: Path) -> None:
    """No --base-url, no key: every task goes to its own stand-in, by its own dialect."""
    files = workspace(tmp_path / "files")
    with OfflineModel(parse_script(SCRIPT)) as first, \
            OfflineModel(parse_script(SCRIPT), chat_only=True) as second:
        rows = [{"id": f"t{n}", "task": "Read notes.txt", "base_url": (first, second)[n % 2].base_url,
                 **({"api": "chat"} if n % 2 else {})} for n in range(4)]
        tasks = write(tmp_path / "tasks.jsonl", rows)
        run = RunOptions(model="gpt-4.1", environ={}, config=[in_process_file_server(files)])
        finished = list(toolrelay.batch(tasks, BatchOptions(out=tmp_path / "out", run=run)))
        served = [len(first.requests), len(second.requests)]
    assert sorted(r.id for r in finished if r.completed) == ["t0", "t1", "t2", "t3"]
    assert served == [4, 4]
    for row in rows:
        assert verify(load_run(tmp_path / "out" / "transcripts" / f"{row['id']}.jsonl")).ok


def test_a_task_that_needs_the_missing_endpoint_is_refused_naming_its_line(
    tmp_path: Path, toolrelay_cmd: list[str]
) -> None:
    workspace(tmp_path)
    write(tmp_path / "tasks.jsonl", [{"id": "own", "task": "x", "base_url": "http://127.0.0.1:9/v1"},
                                     {"id": "bare", "task": "x"}])
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OPENAI_", "AZURE_OPENAI"))}
    done = subprocess.run([*toolrelay_cmd, "batch", "tasks.jsonl", "--out", "out", "--quiet"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2
    assert "no API key for https://api.openai.com/v1/responses: set OPENAI_API_KEY" in done.stderr
    assert "(tasks.jsonl:2 (task bare) names no base_url of its own, so it needs the batch's endpoint)" \
        in done.stderr
    assert not (tmp_path / "out").exists()  # refused before anything started


def test_a_library_task_list_is_checked_alike_and_one_given_later_ends_with_the_error(tmp_path: Path) -> None:
    files = workspace(tmp_path / "files")
    run = RunOptions(model="gpt-4.1", environ={}, config=[in_process_file_server(files)])
    listed = [{"id": "own", "task": "x", "base_url": "http://127.0.0.1:9/v1"}, {"id": "bare", "task": "x"}]
    with pytest.raises(UsageError, match=r"\(task 2 names no base_url of its own"):
        list(toolrelay.batch(listed, BatchOptions(out=tmp_path / "listed", run=run)))
    with OfflineModel(parse_script(SCRIPT)) as model:
        given = iter([{"id": "own", "task": "Read notes.txt", "base_url": model.base_url},
                      {"id": "bare", "task": "Read notes.txt"}])
        finished = {r.id: r for r in toolrelay.batch(given, BatchOptions(out=tmp_path / "given", run=run))}
    assert finished["own"].completed
    assert finished["bare"].error is not None and finished["bare"].error.startswith(
        "task bare names no base_url, and the batch has no endpoint of its own: no API key for "
        "https://api.openai.com/v1/responses")
    assert finished["bare"].error.endswith("give the task a base_url, or the batch --base-url (or its key)")
