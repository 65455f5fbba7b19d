"""A task line's sampling fields (``temperature``, ``top_p``, ``seed``, ``max_output_tokens``,
``top_logprobs``) are checked when the line is read and sent in every request body of the
task, in the dialect's names; every body validates against the openai package's types."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import check_wire, make_workspace, verified

import toolrelay
from toolrelay.batches import BatchOptions, TaskFile
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.protocol.chat import responses_request
from toolrelay.runner import RunOptions

READ = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 1}}
SCRIPT = {"turns": [{"calls": [READ]}, {"message": "done"}]}
SAMPLING = {"temperature": 0.2, "top_p": 0.9, "max_output_tokens": 300, "top_logprobs": 3}


def write(path: Path, tasks: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    return path


@pytest.mark.parametrize(("field", "value", "message"), [
    ("temperature", "hot", "temperature must be a number, got 'hot'"),
    ("temperature", 3, "temperature must be from 0 to 2, got 3"),
    ("top_p", True, "top_p must be a number, got True"),
    ("top_p", 1.5, "top_p must be from 0 to 1, got 1.5"),
    ("seed", 1.5, "seed must be a whole number, got 1.5"),
    ("max_output_tokens", 0, "max_output_tokens must be at least 1, got 0"),
    ("top_logprobs", 21, "top_logprobs must be from 0 to 20, got 21"),
])
def test_a_bad_sampling_field_names_its_line_and_is_skipped(
    tmp_path: Path, field: str, value: Any, message: str
) -> None:
    path = write(tmp_path / "tasks.jsonl", [{"id": "a", "task": "x"}, {"id": "b", "task": "x", field: value}])
    tasks = TaskFile(path)
    assert tasks.count == 1
    assert tasks.problems == [f"{path}:2: task b: {message}; skipped"]


def test_sampling_fields_reach_the_body_in_each_dialect(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "workspace")
    with OfflineModel(parse_script(SCRIPT)) as model:
        tasks = write(tmp_path / "tasks.jsonl", [
            {"id": "responses", "task": "Read notes.txt", **SAMPLING},
            {"id": "chat", "task": "Read notes.txt", "api": "chat", "seed": 7, **SAMPLING},
            {"id": "seeded", "task": "Read notes.txt", "seed": 7},
        ])
        run = RunOptions(model="gpt-4.1", base_url=model.base_url, environ={},
                         config=[in_process_file_server(workspace)])
        finished = {r.id: r for r in toolrelay.batch(tasks, BatchOptions(out=tmp_path / "out", run=run))}
        bodies = list(model.requests)
    chat = [body for body in bodies if "messages" in body]
    responses = [body for body in bodies if "input" in body]
    assert (len(chat), len(responses)) == (2, 2)
    for body in chat:
        check_wire("chat", body)
        assert {k: body.get(k) for k in ("temperature", "top_p", "seed", "max_completion_tokens",
                                         "top_logprobs", "logprobs")} == \
            {"temperature": 0.2, "top_p": 0.9, "seed": 7, "max_completion_tokens": 300, "top_logprobs": 3,
             "logprobs": True}
        assert "max_output_tokens" not in body and "include" not in body
        said = responses_request(body)  # read back in the loop's names: logprobs is implied
        assert "logprobs" not in said and said["top_logprobs"] == 3 and said["max_output_tokens"] == 300
    for body in responses:
        check_wire("responses", body)
        assert {k: body[k] for k in SAMPLING} == SAMPLING and "seed" not in body
        assert body["include"] == ["message.output_text.logprobs"]
    for name in ("responses", "chat"):
        assert finished[name].completed, finished[name]
        assert verified(tmp_path / "out" / "transcripts" / f"{name}.jsonl") == ""
    transcript = tmp_path / "out" / "transcripts" / "chat.jsonl"
    tampered = tmp_path / "tampered.jsonl"
    recorded = transcript.read_text()
    assert '"temperature": 0.2' in recorded  # the body as sent
    tampered.write_text(recorded.replace('"temperature": 0.2', '"temperature": 1.5'))
    assert "not the one sent" in verified(tampered)
    assert not finished["seeded"].completed
    assert "task seeded: seed is a Chat Completions field the Responses API has not: give the task api chat" \
        in str(finished["seeded"].error)
