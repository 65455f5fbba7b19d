"""A server's malformed answer to a tools/call is recorded paired with its request, so
``verify`` agrees with what the model got (a protocol error), instead of calling it broken."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from testkit.servers import TOOLBOX_SERVER
from toolrelay.client.config import ServerConfig
from toolrelay.events import MCP_RESPONSE
from toolrelay.relay.loop import RunResult
from toolrelay.relay.stages.consent import approve_all
from toolrelay.relay.stages.feedback import feedback_item
from toolrelay.runner import RunOptions, run_async

from .helpers import read_events, run_cli, tool_call, verdict_of

TOOLBOX = TOOLBOX_SERVER
SHAPES = {  # what the server answers besides jsonrpc and id → why toolrelay refuses it
    "no_result": ({}, "Invalid Request: neither a request nor a response"),
    "both": ({"result": {"content": []}, "error": {"code": -32603, "message": "and an error"}},
             'Invalid Request: both "result" and "error" present'),
    "error_without_code": ({"error": {"message": "no code"}}, "Invalid Request: malformed error object"),
    "result_not_object": ({"result": "not an object"}, "Invalid Request: malformed response"),
    "jsonrpc_1": ({"jsonrpc": "1.0", "result": {"content": []}}, 'Invalid Request: "jsonrpc" must be "2.0"'),
}


def run_toolbox(folder: Path, turns: list[dict]) -> tuple[Path, RunResult]:
    """A real run against the toolbox server (its tools need consent: approved)."""
    script, transcript = folder / "script.json", folder / "run.jsonl"
    script.write_text(json.dumps({"turns": turns}))
    box = ServerConfig(name="box", transport="stdio", command=sys.executable, args=(str(TOOLBOX),))
    options = RunOptions(model="offline", script=script, config=[box], transcript=transcript,
                         approve=approve_all)
    return transcript, asyncio.run(run_async("x", options))


@pytest.mark.parametrize("shape", SHAPES)
def test_a_malformed_answer_verifies_as_the_protocol_error_the_model_got(tmp_path: Path, shape: str) -> None:
    calls = [{"name": "box__malformed", "arguments": {"shape": shape}}]
    transcript, result = run_toolbox(tmp_path, [{"calls": calls}, {"message": "noted"}])
    [call] = result.calls
    answered, reason = SHAPES[shape]
    said = f"server box sent a malformed answer to tools/call request 4: {reason}"
    assert (call.status, call.message) == ("protocol_error", said)

    events = read_events(transcript)
    request, answer = tool_call(events), tool_call(events, role=MCP_RESPONSE)
    assert (answer["mcp_id"], answer["call_id"], answer["server"]) == (4, call.call_id, "box")
    assert request["message"]["id"] == 4
    assert answer["message"] == {"jsonrpc": "2.0", "id": 4, **answered}  # exactly as received
    assert not [e for e in events if e["kind"] == "mcp_invalid"]
    [output] = [i for i in model_input(events, turn=2) if i.get("type") == "function_call_output"]
    assert output == feedback_item(call.call_id, f"Error (protocol): {said}")

    verdict = verdict_of(transcript)
    assert verdict.broken is None, verdict.broken
    [server_check] = [f for f in verdict.findings if f.link == "server_check"]
    assert server_check.ok and "malformed" in server_check.message
    checked = run_cli("verify", str(transcript))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def model_input(events: list[dict], turn: int) -> list[dict]:
    [body] = [e["body"] for e in events if e["kind"] == "model_request" and e["turn"] == turn][-1:]
    return [i for i in body["input"] if isinstance(i, dict)]

