"""What servers asked during calls, in the proof: a real run whose server asks for a model
message and a form during its calls verifies, each request paired with toolrelay's reply
and attached to its call; tampered copies fail on the correlation link, saying what is
wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import PYTHON
from testkit.servers import ASKING_SERVER

from .helpers import Event, run_cli, tampered, verdict_of

DEFAULTED_FORM = {  # every required field has a default: --elicit defaults accepts it
    "type": "object",
    "properties": {"age": {"type": "integer", "default": 30}, "color": {"type": "string", "default": "red"}},
    "required": ["age"],
}
SCRIPT = {
    "turns": [
        {"calls": [{"name": "ask__sample", "arguments": {"prompt": "Say hi"}}]},
        {"calls": [{"name": "ask__elicit", "arguments": {"schema": DEFAULTED_FORM}}]},
        {"message": "Done."},
    ],
    "sampling": {"message": "Hi."},
}


@pytest.fixture(scope="module")
def asked_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("asked")
    config = {"mcpServers": {"ask": {"command": PYTHON, "args": [str(ASKING_SERVER)]}}}
    (folder / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    proc = run_cli("run", "ask me", "--config", "mcp.json", "--model", "offline", "--script", "script.json",
                   "--yes", "--elicit", "defaults", "--quiet", "--transcript", "run.jsonl", cwd=folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder / "run.jsonl"


def asked(events: list[Event], method: str, kind: str = "mcp_server_request") -> Event:
    request = next(e for e in events if e["kind"] == "mcp_server_request" and e["method"] == method)
    if kind == "mcp_server_request":
        return request
    return next(e for e in events if e["kind"] == kind and e["mcp_id"] == request["mcp_id"])


def broken(path: Path) -> list[str]:
    return [f.message for f in verdict_of(path).findings if not f.ok]


def test_each_request_is_paired_with_its_reply_inside_its_call(asked_run: Path) -> None:
    proc = run_cli("verify", str(asked_run), "--all")
    assert proc.returncode == 0, proc.stdout
    assert ("  ok     correlation    call_offline_0001: during its tools/call the server asked "
            "sampling/createMessage 'srv-1' → answered") in proc.stdout
    assert ("  ok     correlation    call_offline_0002: during its tools/call the server asked "
            "elicitation/create 'srv-2' → answered (accept)") in proc.stdout


def drop_the_sampling_reply(events: list[Event]) -> None:
    events.remove(asked(events, "sampling/createMessage", "mcp_reply"))
    for seq, event in enumerate(events, 1):
        event["seq"] = seq


def reply_with_another_call_id(events: list[Event]) -> None:
    asked(events, "sampling/createMessage", "mcp_reply")["call_id"] = "call_x"


def move_the_form_into_the_first_call(events: list[Event]) -> None:
    asked(events, "elicitation/create")["call_id"] = "call_offline_0001"
    asked(events, "elicitation/create", "mcp_reply")["call_id"] = "call_offline_0001"


def ask_with_an_id_the_server_used(events: list[Event]) -> None:
    pairs = [asked(events, method, kind) for method in ("sampling/createMessage", "elicitation/create")
             for kind in ("mcp_server_request", "mcp_reply")]
    for event in pairs:
        event["mcp_id"] = event["message"]["id"] = "srv-9"


@pytest.mark.parametrize(("change", "said"), [
    (drop_the_sampling_reply,
     "sampling/createMessage request 'srv-1' from server ask (connection 1) was never answered, "
     "yet the run ended normally"),
    (reply_with_another_call_id,
     "the sampling/createMessage request 'srv-1' is recorded with call_id 'call_offline_0001', "
     "its reply with 'call_x'"),
    (move_the_form_into_the_first_call,
     "call_offline_0001: the server's elicitation/create request 'srv-2' is recorded with this call, "
     "but came after its answer"),
    (ask_with_an_id_the_server_used, "server ask used request id 'srv-9' twice in a session"),
])
def test_a_tampered_copy_breaks_correlation_saying_what(asked_run: Path, tmp_path: Path, change: Any,
                                                        said: str) -> None:
    copy = tampered(asked_run, tmp_path / "t.jsonl", change)
    assert said in broken(copy)
    proc = run_cli("verify", str(copy))
    assert proc.returncode == 1
    assert "BROKEN link: correlation" in proc.stdout or said in proc.stdout, proc.stdout
