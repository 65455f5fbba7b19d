"""2026-07-28 calls answered ``input_required``: a real offline run against toolrelay's
own file server (stdio, pinned to 2026-07-28) whose tools/call asks for the client's
roots, answered and retried, verifies as one call with its rounds; tampered chains (a
dropped requestState, a retry reusing the id, inputResponses for another key, a first
request with inputResponses) fail on server_check, saying what is wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import PYTHON
from testkit.mcp_http import files_http_process
from testkit.servers import MODERN_INPUT_SERVER, SDK_MRTR_SERVER
from toolrelay.client.host.input_required import MAX_ROUNDS

from .helpers import Event, broken_link, modern_files_run, run_cli, tampered

SCRIPT = {"turns": [{"calls": [{"name": "files__read_text_file", "arguments": {"path": "a.txt"}}]},
                    {"message": "Done."}]}


@pytest.fixture(scope="module")
def modern_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return modern_files_run(tmp_path_factory.mktemp("modern"), {"a.txt": "alpha\n"}, "read a.txt", SCRIPT)


def calls(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e["kind"] == kind and e.get("method") == "tools/call"]


def test_the_roots_round_is_recorded_and_the_call_verifies(modern_run: Path) -> None:
    events = [json.loads(line) for line in modern_run.read_text(encoding="utf-8").splitlines()]
    requests, answers = calls(events, "mcp_request"), calls(events, "mcp_response")
    assert len(requests) == 2 and {r["call_id"] for r in requests} == {"call_offline_0001"}
    asked = answers[0]["message"]["result"]
    assert asked["inputRequests"] == {"roots": {"method": "roots/list", "params": {}}}
    retry = requests[1]["message"]
    assert retry["id"] != requests[0]["message"]["id"]
    sent_roots = retry["params"]["inputResponses"]["roots"]["roots"]
    assert [r["uri"] for r in sent_roots] == [(modern_run.parent / "root").as_uri()]
    assert "requestState" not in retry["params"]  # none was given: none is invented
    assert answers[1]["message"]["result"]["content"][0]["text"] == "alpha\n"
    proc = run_cli("verify", str(modern_run), "--all")
    assert proc.returncode == 0, proc.stdout
    assert "after 1 input_required round: a result (ok)" in proc.stdout


def _rounds(events: list[Event]) -> tuple[Event, Event, Event]:
    first, retry = calls(events, "mcp_request")
    return first, calls(events, "mcp_response")[0], retry


def drop_the_request_state(events: list[Event]) -> None:
    _, asked, _ = _rounds(events)
    asked["message"]["result"]["requestState"] = "opaque-1"  # the server gave one; the retry lacks it


def invent_a_request_state(events: list[Event]) -> None:
    _rounds(events)[2]["message"]["params"]["requestState"] = "made-up"


def reuse_the_id(events: list[Event]) -> None:
    first, _, retry = _rounds(events)
    later = [e for e in events if e.get("message", {}).get("id") == retry["message"]["id"]]
    for event in later:
        event["message"]["id"] = first["message"]["id"]
        event["mcp_id"] = first["message"]["id"]
    outcome = next(e for e in events if e["kind"] == "call_outcome")
    outcome["outcome"]["mcp_id"] = first["message"]["id"]


def answer_another_key(events: list[Event]) -> None:
    params: dict[str, Any] = _rounds(events)[2]["message"]["params"]
    params["inputResponses"] = {"elicit": params["inputResponses"]["roots"]}


def first_request_with_responses(events: list[Event]) -> None:
    _rounds(events)[0]["message"]["params"]["inputResponses"] = {"roots": {"roots": []}}


@pytest.mark.parametrize(("change", "said"), [
    (drop_the_request_state, "the retry of round 1 (mcp id 4) dropped the requestState round 1 gave"),
    (invent_a_request_state, "the retry of round 1 (mcp id 4) sends a requestState round 1 never gave"),
    (reuse_the_id, "reuses the id of an earlier round: each retry needs a new JSON-RPC id"),
    (answer_another_key, "answers inputResponses ['elicit'] but round 1 asked for ['roots']"),
    (first_request_with_responses,
     "its first tools/call (mcp id 3) carries inputResponses no server asked for"),
])
def test_a_broken_chain_is_a_broken_link(modern_run: Path, tmp_path: Path, change: Any, said: str) -> None:
    link, message = broken_link(tampered(modern_run, tmp_path / "t.jsonl", change))
    assert link == "server_check" and "input_required chain is broken" in message, message
    assert said in message, message


def test_a_chain_toolrelay_gave_up_on_verifies_as_its_protocol_error(tmp_path: Path) -> None:
    config = {"mcpServers": {"m": {"command": PYTHON, "args": [str(MODERN_INPUT_SERVER), "forever"],
                                   "toolrelay": {"roots": [str(tmp_path)]}}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    script = {"turns": [{"calls": [{"name": "m__t", "arguments": {}}]}, {"message": "Done."}]}
    (tmp_path / "script.json").write_text(json.dumps(script), encoding="utf-8")
    proc = run_cli("run", "go", "--config", "mcp.json", "--model", "offline", "--script", "script.json",
                   "--protocol-version", "2026-07-28", "--yes", "--quiet", "--transcript", "run.jsonl",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    events = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(calls(events, "mcp_request")) == MAX_ROUNDS + 1
    verified = run_cli("verify", str(tmp_path / "run.jsonl"), "--all")
    assert verified.returncode == 0, verified.stdout
    assert (f"after {MAX_ROUNDS} input_required rounds: input_required still, given up on (protocol error): "
            f"\"server m still answered tools/call t input_required after") in verified.stdout


def test_the_official_sdk_server_elicits_and_samples_through_input_required(tmp_path: Path) -> None:
    config = {"mcpServers": {"sdk": {"command": PYTHON, "args": [str(SDK_MRTR_SERVER)]}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    script = {"turns": [{"calls": [{"name": "sdk__survey", "arguments": {}}]}, {"message": "Done."}],
              "sampling": {"message": "Hi there."}}
    (tmp_path / "script.json").write_text(json.dumps(script), encoding="utf-8")
    proc = run_cli("run", "go", "--config", "mcp.json", "--model", "offline", "--script", "script.json",
                   "--yes", "--elicit", "defaults", "--protocol-version", "2026-07-28",
                   "--transcript", "run.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = "server sdk asked for input ('Favourite colour?'); accepted with the form's defaults"
    assert said in proc.stderr
    events = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text(encoding="utf-8").splitlines()]
    asked = calls(events, "mcp_response")[0]["message"]["result"]
    assert sorted(r["method"] for r in asked["inputRequests"].values()) == [
        "elicitation/create", "sampling/createMessage"]
    retry = calls(events, "mcp_request")[1]["message"]["params"]
    assert retry["requestState"] == asked["requestState"]  # echoed unchanged
    answer = calls(events, "mcp_response")[1]["message"]["result"]
    assert answer["content"][0]["text"] == "colour blue; the model said Hi there."
    verified = run_cli("verify", str(tmp_path / "run.jsonl"), "--all")
    assert verified.returncode == 0, verified.stdout
    retried = calls(events, "mcp_request")[1]["mcp_id"]  # its id depends on what went before (listen)
    assert f"answered mcp id {retried} after 1 input_required round: a result (ok)" in verified.stdout


def test_toolrelay_call_over_http_gets_the_answer_after_the_roots_round(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n", encoding="utf-8")
    with files_http_process(root) as url:
        config = {"mcpServers": {"files": {"url": url, "toolrelay": {"roots": [str(root)]}}}}
        (tmp_path / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
        proc = run_cli("call", "files__read_text_file", '{"path": "a.txt"}', "--config", "mcp.json",
                       "--protocol-version", "2026-07-28", "--wire", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '"resultType":"input_required"' in proc.stdout and proc.stdout.count('"method":"tools/call"') == 2
    retry = proc.stdout.split('"inputResponses":{"roots":')[1]
    assert root.as_uri() in retry.split("\n")[0]
    assert "alpha" in proc.stdout.split('"resultType":"input_required"')[1]
