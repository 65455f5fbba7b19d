"""``--api``: chat and auto from the CLI and the library, and what chat cannot say.

``auto`` asks the Responses API first and, on an endpoint that answers 404 at
``/responses`` (the stand-in with ``chat_only``), asks by chat from then on, with one notice;
an endpoint that has both stays on Responses and says nothing.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from chat_helpers import make_workspace, verified

from toolrelay.errors import UsageError
from toolrelay.events import EventStream, Notice
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.runner import RunOptions, run_async

READ = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 2}}
SCRIPT = {"turns": [{"calls": [READ]}, {"message": "done"}]}


def _auto_run(tmp_path: Path, *, chat_only: bool, stream: bool = True) -> tuple[list[str], list[str], object]:
    workspace = make_workspace(tmp_path / "workspace")
    events = EventStream()
    notices: list[str] = []
    events.subscribe(lambda e: notices.append(e.text) if isinstance(e, Notice) else None)
    with OfflineModel(parse_script(SCRIPT), chat_only=chat_only) as model:
        opts = RunOptions(model="gpt-4.1", base_url=model.base_url, api="auto", stream=stream, environ={},
                          events=events,
                          config=[in_process_file_server(workspace)], transcript=tmp_path / "run.jsonl")
        result = asyncio.run(run_async("Read notes.txt", opts))
        dialects = ["chat" if "messages" in body else "responses" for body in model.requests]
    return notices, dialects, result


@pytest.mark.parametrize("stream", [True, False])
def test_auto_falls_back_to_chat_once_on_an_endpoint_without_responses(tmp_path: Path, stream: bool) -> None:
    notices, dialects, result = _auto_run(tmp_path, chat_only=True, stream=stream)
    assert result.status == "completed" and result.final_text == "done"  # type: ignore[attr-defined]
    auto = [n for n in notices if n.startswith("--api auto")]
    assert len(auto) == 1 and "answered 404" in auto[0] and "/chat/completions" in auto[0]
    assert dialects == ["chat", "chat"]  # the 404 was no request the stand-in answered by a script
    assert verified(tmp_path / "run.jsonl") == ""


def test_auto_stays_on_responses_where_the_endpoint_has_it(tmp_path: Path) -> None:
    notices, dialects, result = _auto_run(tmp_path, chat_only=False)
    assert result.status == "completed"  # type: ignore[attr-defined]
    assert not [n for n in notices if n.startswith("--api auto")]
    assert dialects == ["responses", "responses"]


def test_chat_refuses_chain_and_namespaces_before_anything_starts(tmp_path: Path) -> None:
    chain = "--chain (chain=True) needs the Responses API's previous_response_id"
    for options, said in (({"chain": True}, chain),
                          ({"declare": "namespaces"}, "use --declare flat with --api chat")):
        opts = RunOptions(model="offline", api="chat", config=[], **options)  # type: ignore[arg-type]
        with pytest.raises(UsageError, match=said.replace("(", r"\(").replace(")", r"\)")):
            asyncio.run(run_async("x", opts))


def test_an_unknown_api_is_a_usage_error_naming_the_choices() -> None:
    with pytest.raises(UsageError, match="api must be one of responses, chat, auto, not 'soap'"):
        asyncio.run(run_async("x", RunOptions(model="offline", api="soap", config=[])))  # type: ignore[arg-type]


def test_the_cli_runs_by_chat_and_verify_explain_read_it(tmp_path: Path, toolrelay_cmd: list[str]) -> None:
    make_workspace(tmp_path)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    transcript = tmp_path / "run.jsonl"
    proc = subprocess.run([*toolrelay_cmd, "run", "--model", "offline", "--script", str(script),
                           "--api", "chat", "--transcript", str(transcript), "--quiet", "Read notes.txt"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "done"
    requests = [json.loads(line) for line in transcript.read_text().splitlines() if '"model_request"' in line]
    assert [r["url"].endswith("/v1/chat/completions") for r in requests] == [True, True]
    checked = subprocess.run([*toolrelay_cmd, "verify", str(transcript)], capture_output=True, text=True,
                             timeout=60)
    assert checked.returncode == 0, checked.stdout
    told = subprocess.run([*toolrelay_cmd, "explain", str(transcript)], capture_output=True, text=True,
                          timeout=60)
    assert told.returncode == 0, told.stdout
    assert "tool_calls[0] fs__read_text_file" in told.stdout
    assert "↔ tool_call_id ↔ mcp id" in told.stdout and "tool message in request 2 messages[3]" in told.stdout


def test_the_cli_refuses_an_unknown_api(tmp_path: Path, toolrelay_cmd: list[str]) -> None:
    proc = subprocess.run([*toolrelay_cmd, "run", "--model", "offline", "--api", "soap", "x"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--api: invalid choice: 'soap'" in proc.stderr
