"""``toolrelay run`` as a user meets it: a real subprocess, the offline stand-in model,
real MCP servers; exit codes and the messages on stdout/stderr."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_helpers import TOOLBOX, make_workspace

from testkit.fake_http import Canned, CannedEndpoint
from testkit.processes import ProcessKeeper, run
from toolrelay.offline import wire

FIRST_20 = "".join(f"line {i}\n" for i in range(1, 21))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "workspace")


def toolrelay(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    return run([sys.executable, "-m", "toolrelay", *args], cwd=cwd, text=True, timeout=timeout, env=env)


def write_json(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value))
    return path


def box_config(path: Path, *extra: str) -> Path:
    return write_json(
        path, {"mcpServers": {"box": {"command": sys.executable, "args": [str(TOOLBOX), *extra]}}}
    )


def test_the_seed_task_prints_the_answer_and_progress(workspace: Path) -> None:
    proc = toolrelay("run", "Read the first 20 lines of notes.txt", "--model", "offline", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "The tool returned:\n" + FIRST_20
    assert f"no --config: the built-in read-only file server exposes {workspace} as server fs" in proc.stderr
    assert re.search(r"call fs__read_text_file → fs/read_text_file · mcp id \d+ · ", proc.stderr)
    assert ", MCP 2026-07-28)\n" in proc.stderr  # the probe found the file server modern
    assert "run completed after 2 turns: " in proc.stderr


def test_json_prints_the_whole_result_with_both_ids(workspace: Path) -> None:
    proc = toolrelay(
        "run", "Read the first 5 lines of notes.txt", "--model", "offline", "--json", "--quiet", cwd=workspace
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "completed" and result["turns"] == 2
    [call] = result["calls"]
    assert call["call_id"].startswith("call_") and call["status"] == "ok"
    # after server/discover (1), the handshake's id (2: refused, or unsent when the probe was
    # answered first), tools/list (3) and the round answered input_required for the roots (4)
    assert call["mcp_id"] == 5
    assert json.loads(call["arguments_text"]) == {"path": "notes.txt", "head": 5}
    assert proc.stderr == ""


def test_a_run_that_does_not_complete_exits_1_and_says_how_it_ended(workspace: Path) -> None:
    script = write_json(
        workspace / "s.json", {"turns": [{"status": "incomplete", "reason": "content_filter"}]}
    )
    proc = toolrelay("run", "x", "--model", "offline", "--script", str(script), cwd=workspace)
    assert proc.returncode == 1
    assert "run ended after 1 turn with an incomplete response: content_filter" in proc.stderr


def test_failed_calls_are_shown_beside_the_answer(workspace: Path) -> None:
    script = write_json(
        workspace / "s.json",
        {"turns": [{"calls": [{"name": "fs__read_text_file", "arguments": {"path": "nope.txt"}}]}]},
    )
    proc = toolrelay("run", "x", "--model", "offline", "--script", str(script), cwd=workspace)
    assert proc.returncode == 0  # the model answered: completed, but the failure is shown
    assert proc.stdout.startswith("The tool returned:\nError (tool): ")
    # with progress on, the call line says why (once); the closing line counts
    assert proc.stderr.count("No such file or directory: nope.txt") == 1
    assert re.search(r"call fs__read_text_file → fs/read_text_file · mcp id \d+ · ", proc.stderr)
    assert "toolrelay run: 1 of 1 call(s) failed (see the call lines above)\n" in proc.stderr
    quiet = toolrelay("run", "x", "--model", "offline", "--script", str(script), "--quiet", cwd=workspace)
    assert quiet.stderr == (
        "toolrelay run: 1 of 1 call(s) failed:\n"
        "  call_offline_0001 fs__read_text_file: tool error: No such file or directory: nope.txt\n"
    )


def test_failed_calls_exit_1_with_fail_on_call_error_and_are_counted_in_json(workspace: Path) -> None:
    script = write_json(
        workspace / "s.json",
        {"turns": [{"calls": [
            {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 1}},
            {"name": "fs__read_text_file", "arguments": {"path": "nope.txt"}},
        ]}]},
    )
    args = ("run", "x", "--model", "offline", "--script", str(script), "--quiet")
    assert toolrelay(*args, cwd=workspace).returncode == 0  # the default: the model answered
    strict = toolrelay(*args, "--fail-on-call-error", cwd=workspace)
    assert strict.returncode == 1
    assert strict.stdout.startswith("The tools returned:")  # the answer is still printed
    assert "toolrelay run: 1 of 2 call(s) failed:" in strict.stderr
    as_json = toolrelay(*args, "--json", "--fail-on-call-error", cwd=workspace)
    assert as_json.returncode == 1
    result = json.loads(as_json.stdout)
    assert (result["status"], result["failed_calls"], len(result["calls"])) == ("completed", 1, 2)


def test_fail_on_call_error_keeps_exit_0_when_every_call_succeeded(workspace: Path) -> None:
    proc = toolrelay(
        "run", "Read notes.txt", "--model", "offline", "--quiet", "--fail-on-call-error", "--json",
        cwd=workspace,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["failed_calls"] == 0


def test_usage_errors_exit_2(workspace: Path) -> None:
    bad_choice = toolrelay("run", "x", "--model", "offline", "--tool-choice", "fs__nope", cwd=workspace)
    assert bad_choice.returncode == 2
    assert "--tool-choice 'fs__nope' is not a tool alias; tools: fs__get_file_info" in bad_choice.stderr
    no_offline = toolrelay("run", "x", "--script", "s.json", cwd=workspace)
    assert no_offline.returncode == 2 and "add --model offline" in no_offline.stderr
    bad_turns = toolrelay("run", "x", "--max-turns", "0", cwd=workspace)
    assert bad_turns.returncode == 2 and "must be a whole number of at least 1, not '0'" in bad_turns.stderr
    no_key = toolrelay("run", "x", "--model", "gpt-4.1", cwd=workspace)  # OPENAI_API_KEY unset
    assert no_key.returncode == 2, no_key.stderr
    assert no_key.stderr.endswith(
        "toolrelay run: error: no API key for https://api.openai.com/v1/responses: set OPENAI_API_KEY, "
        "or use --model offline (the built-in stand-in), or --base-url for a local server that needs no key\n"
    )
    assert "turn 1" not in no_key.stderr  # refused before any request
    (workspace / "a.txt").write_text("x")
    no_transcript = toolrelay("run", "x", "--model", "offline", "--transcript", "a.txt/t", cwd=workspace)
    assert no_transcript.returncode == 2
    assert no_transcript.stderr.endswith(
        "toolrelay run: error: cannot write the transcript a.txt/t: a.txt is a file, not a folder\n"
    )
    assert "turn 1" not in no_transcript.stderr  # refused before the run starts


def test_consent_is_refused_without_a_terminal_and_given_by_yes(workspace: Path) -> None:
    config = box_config(workspace / "box.json")
    script = write_json(
        workspace / "s.json", {"turns": [{"calls": [{"name": "box__echo", "arguments": {"text": "hi"}}]}]}
    )
    refused = toolrelay(
        "run", "x", "--model", "offline", "--script", str(script), "--config", str(config), cwd=workspace
    )
    assert refused.returncode == 0
    assert refused.stdout == (
        "The tool returned:\nError (not approved): tool echo on server box is not marked read-only and "
        "was not approved (no terminal to ask on; rerun with --yes to approve all calls)\n"
    )
    approved = toolrelay(
        "run",
        "x",
        "--model",
        "offline",
        "--script",
        str(script),
        "--config",
        str(config),
        "--yes",
        cwd=workspace,
    )
    assert approved.returncode == 0 and approved.stdout == "The tool returned:\nhi\n"


@pytest.fixture
def unauthorized_endpoint() -> Iterator[str]:
    refused = {
        "error": {
            "message": "Incorrect API key provided: sk-test.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
    }
    with CannedEndpoint(Canned(401, refused)) as endpoint:
        yield endpoint.base_url


def test_an_http_error_from_the_model_endpoint_exits_3_with_the_apis_message(
    workspace: Path, unauthorized_endpoint: str
) -> None:
    proc = toolrelay("run", "x", "--base-url", unauthorized_endpoint, cwd=workspace)
    assert proc.returncode == 3
    assert "Incorrect API key provided: sk-test." in proc.stderr
    assert "401" in proc.stderr


def test_ctrl_c_cancels_the_call_and_leaves_no_process_behind(
    workspace: Path, tmp_path: Path, processes: ProcessKeeper
) -> None:
    record = tmp_path / "received.jsonl"
    config = box_config(workspace / "box.json", "--record", str(record))
    script = write_json(
        workspace / "s.json", {"turns": [{"calls": [{"name": "box__hang", "arguments": {}}]}]}
    )
    proc = processes.spawn(
        [
            sys.executable,
            "-m",
            "toolrelay",
            "run",
            "x",
            "--model",
            "offline",
            "--script",
            str(script),
            "--config",
            str(config),
            "--yes",
            "--json",
        ],
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and '"hang"' not in (record.read_text() if record.exists() else ""):
        time.sleep(0.05)
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "aborted (Ctrl-C); in-flight calls were cancelled" in stderr
    hang = next(m for m in lines if m.get("params", {}).get("name") == "hang")
    received = [json.loads(line) for line in record.read_text().splitlines()]
    cancels = [m for m in received if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [hang["id"]]
    server_pids = _pids_running(str(record))
    assert server_pids == [], f"server processes left behind: {server_pids}"


def _pids_running(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(entry.name))
    return found


def test_usage_is_summed_over_the_turns_in_json_the_closing_line_and_run_end(workspace: Path) -> None:
    proc = toolrelay("run", "Read the first 5 lines of notes.txt", "--model", "offline", "--json",
                     "--transcript", "t.jsonl", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in (workspace / "t.jsonl").read_text().splitlines()]
    answered = [e["body"]["usage"] for e in events if e["kind"] == "model_response"]
    assert len(answered) == 2  # two turns, each with the stand-in's usage in the Responses shape
    summed = {
        "input_tokens": sum(u["input_tokens"] for u in answered),
        "output_tokens": sum(u["output_tokens"] for u in answered),
        "total_tokens": sum(u["total_tokens"] for u in answered),
        "cached_input_tokens": sum(u["input_tokens_details"]["cached_tokens"] for u in answered),
        "cache_write_tokens": sum(u["input_tokens_details"]["cache_write_tokens"] for u in answered),
        "reasoning_tokens": sum(u["output_tokens_details"]["reasoning_tokens"] for u in answered),
    }
    assert json.loads(proc.stdout)["usage"] == summed
    assert [e["usage"] for e in events if e["kind"] == "run_end"] == [summed]
    closing = ("run completed after 2 turns: the model answered without asking for more tool calls · "
               f"tokens: {summed['input_tokens']} in ({summed['cached_input_tokens']} cached), "
               f"{summed['output_tokens']} out ({summed['reasoning_tokens']} reasoning), "
               f"{summed['total_tokens']} total\n")
    assert proc.stderr.endswith(closing)


def test_usage_counts_an_endpoint_does_not_give_are_left_out_not_claimed_as_0(workspace: Path) -> None:
    call = wire.function_call_item("fc_1", "call_1", "fs__read_text_file", '{"path": "notes.txt", "head": 1}')
    asked = {"model": "gpt-test"}
    first = wire.response_object(response_id="resp_1", created_at=0, request=asked, output=[call],
                                 token_usage={"input_tokens": 40, "output_tokens": 7, "total_tokens": 47})
    final = wire.response_object(response_id="resp_2", created_at=0, request=asked,  # usage: null
                                 output=[wire.message_item("msg_1", "line 1")])
    with CannedEndpoint(Canned(200, first), Canned(200, final)) as endpoint:
        proc = toolrelay("run", "Read line 1", "--base-url", endpoint.base_url, "--model", "gpt-test",
                         "--no-stream", "--json", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["usage"] == {"input_tokens": 40, "output_tokens": 7, "total_tokens": 47}
    assert proc.stderr.endswith("· tokens: 40 in, 7 out, 47 total\n")
