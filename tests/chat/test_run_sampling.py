"""The sampling fields as run options (``RunOptions``/``run()`` keywords and the CLI's
``--temperature``, ``--top-p``, ``--seed``, ``--max-output-tokens``, ``--top-logprobs`` on
run, batch and chat): in every request body in the dialect's names, checked by the same
check as a batch task line's, a task's own field winning over the batch's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import make_workspace, run_dialect, verified

import toolrelay
from testkit.dialect import Dialect
from toolrelay.batches import BatchOptions
from toolrelay.errors import UsageError
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.runner import RunOptions

READ = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 1}}
SCRIPT = {"turns": [{"calls": [READ]}, {"message": "done"}]}
GIVEN = {"temperature": 0.3, "top_p": 0.8, "max_output_tokens": 200, "top_logprobs": 2}
CHAT_NAMES = ("temperature", "top_p", "seed", "max_completion_tokens", "top_logprobs", "logprobs")


def test_run_options_reach_every_body_in_the_dialects_names(tmp_path: Path, dialect: Dialect) -> None:
    seed = {"seed": 11} if dialect.chat else {}
    run = run_dialect(tmp_path, SCRIPT, api=dialect.api, stream=True, **GIVEN, **seed)
    assert run.result.status == "completed" and len(run.wire) == 2
    for body in run.wire:  # each already checked against the dialect's openai types
        if dialect.chat:
            assert {k: body.get(k) for k in CHAT_NAMES} == {
                "temperature": 0.3, "top_p": 0.8, "seed": 11, "max_completion_tokens": 200, "top_logprobs": 2,
                "logprobs": True}
            assert "max_output_tokens" not in body and "include" not in body
        else:
            assert {k: body[k] for k in GIVEN} == GIVEN and "seed" not in body
            assert body["include"] == ["message.output_text.logprobs"]
    assert verified(run.transcript) == ""


@pytest.mark.parametrize(("given", "message"), [
    ({"temperature": 2.5}, "temperature must be from 0 to 2, got 2.5 (--temperature)"),
    ({"top_p": -0.1}, "top_p must be from 0 to 1, got -0.1 (--top-p)"),
    ({"max_output_tokens": 0}, "max_output_tokens must be at least 1, got 0 (--max-output-tokens)"),
    ({"top_logprobs": 21}, "top_logprobs must be from 0 to 20, got 21 (--top-logprobs)"),
    ({"seed": 1.5, "api": "chat"}, "seed must be a whole number, got 1.5 (--seed)"),
    ({"seed": 7}, "seed is a Chat Completions field the Responses API has not: --seed (seed=) needs "
                  "--api chat (api='responses')"),
])
def test_a_bad_sampling_option_is_a_usage_error_before_anything_starts(
    given: dict[str, Any], message: str
) -> None:
    with pytest.raises(UsageError) as raised:
        toolrelay.run("x", model="offline", **given)
    assert str(raised.value) == message


def test_the_cli_flags_are_sent_and_a_bad_one_exits_2(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "workspace")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}

    def toolrelay_run(*flags: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "toolrelay", "run", "Read notes.txt", "--model", "offline",
                   "--quiet"]
        return subprocess.run([*command, *flags], cwd=workspace, capture_output=True, text=True, timeout=60,
                              env=env, stdin=subprocess.DEVNULL)

    done = toolrelay_run("--api", "chat", "--temperature", "0.5", "--top-p", "0.9", "--seed", "3",
                         "--max-output-tokens", "64", "--top-logprobs", "1", "--transcript", "t.jsonl")
    assert done.returncode == 0, done.stderr
    first = next(json.loads(line) for line in (workspace / "t.jsonl").read_text().splitlines()
                 if '"kind": "model_request"' in line)
    Dialect("chat").check(first["body"])
    assert {k: first["body"][k] for k in CHAT_NAMES} == \
        {"temperature": 0.5, "top_p": 0.9, "seed": 3, "max_completion_tokens": 64, "top_logprobs": 1,
         "logprobs": True}
    refused = toolrelay_run("--temperature", "9")
    assert refused.returncode == 2
    assert "toolrelay run: error: temperature must be from 0 to 2, got 9.0 (--temperature)" in refused.stderr


def test_a_tasks_own_field_wins_over_the_batchs(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "workspace")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "own", "task": "Read notes.txt", "temperature": 0.1}) + "\n"
                     + json.dumps({"id": "batch", "task": "Read notes.txt"}) + "\n", encoding="utf-8")
    with OfflineModel(parse_script(SCRIPT)) as model:
        run = RunOptions(model="gpt-4.1", base_url=model.base_url, environ={}, temperature=0.9, top_p=0.5,
                         config=[in_process_file_server(workspace)])
        finished = list(toolrelay.batch(tasks, BatchOptions(out=tmp_path / "out", run=run, concurrency=1)))
        bodies = list(model.requests)
    assert all(r.completed for r in finished)
    said = sorted((body["temperature"], body["top_p"]) for body in bodies)
    assert said == [(0.1, 0.5), (0.1, 0.5), (0.9, 0.5), (0.9, 0.5)]
