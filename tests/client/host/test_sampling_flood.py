"""A server that floods toolrelay with sampling requests during one tools/call (testkit's
asking_server.py ``sample_many``, a real stdio process): every request is answered, the
ones past the per-call cap (``--max-sampling-per-call``, ``maxSamplingPerCall``, 32 by
default) refused with an error naming the cap; the call completes, its outcome counts the
refusals, and the transcript verifies. Time spent answering a server's request does not
count against the call's timeout."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import PYTHON
from testkit.servers import ASKING_SERVER
from toolrelay.client.config import ServerConfig
from toolrelay.client.connection import Connection
from toolrelay.client.host import Host, SamplingRequest
from toolrelay.events import EventStream

REFUSAL = ("toolrelay answers at most {cap} sampling requests per tool call (--max-sampling-per-call or "
           "the config's maxSamplingPerCall raises the cap)")


def toolrelay(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "toolrelay", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def folder(tmp_path: Path, count: int, **settings: Any) -> Path:
    entry: dict[str, Any] = {"command": PYTHON, "args": [str(ASKING_SERVER)]}
    if settings:
        entry["toolrelay"] = settings
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"ask": entry}}))
    script = {"turns": [{"calls": [{"name": "ask__sample_many", "arguments": {"count": count}}]},
                        {"message": "Done."}], "sampling": {"message": "Hi."}}
    (tmp_path / "script.json").write_text(json.dumps(script))
    return tmp_path


Done = subprocess.CompletedProcess[str]


def flood_run(cwd: Path, *options: str) -> tuple[Done, dict[str, Any], dict[str, Any]]:
    """The run, what the server says it got back, and the call's recorded outcome."""
    proc = toolrelay(cwd, "run", "flood", "--config", "mcp.json", "--model", "offline", "--script",
                     "script.json", "--yes", "--call-timeout", "10", "--transcript", "run.jsonl", *options)
    events = [json.loads(line) for line in (cwd / "run.jsonl").read_text().splitlines()]
    [feedback] = [e for e in events if e["kind"] == "feedback"]
    [outcome] = [e["outcome"] for e in events if e["kind"] == "call_outcome"]
    return proc, json.loads(feedback["item"]["output"]), outcome


@pytest.mark.parametrize(("count", "settings", "options", "cap"), [
    (160, {}, [], 32),
    (40, {}, ["--max-sampling-per-call", "40"], 40),
    (40, {"maxSamplingPerCall": 5}, [], 5),
    (40, {"maxSamplingPerCall": 5}, ["--max-sampling-per-call", "12"], 12),  # the flag wins
], ids=["default cap", "flag", "config", "flag over config"])
def test_a_flood_is_answered_up_to_the_cap_and_the_rest_refused(
    tmp_path: Path, count: int, settings: dict[str, Any], options: list[str], cap: int
) -> None:
    proc, got, outcome = flood_run(folder(tmp_path, count, **settings), *options)
    assert proc.returncode == 0, proc.stderr
    refused = count - cap
    assert got == {"answered": cap, "errors": {REFUSAL.format(cap=cap): refused} if refused else {}}
    assert (outcome["status"], outcome.get("sampling_refused", 0)) == ("ok", refused)
    if refused:
        assert f"· {refused} sampling request(s) refused (over the cap) · ok" in proc.stderr
        assert (f"server ask sent more than {cap} sampling requests during call call_offline_0001; "
                "the rest are refused") in proc.stderr
    verified = toolrelay(tmp_path, "verify", "run.jsonl", "--all")
    assert verified.returncode == 0, verified.stdout
    counted = f"({refused} sampling request(s) refused for the per-call cap)"
    assert (counted in verified.stdout) == bool(refused)


def test_verify_rejects_an_outcome_that_miscounts_the_refusals(tmp_path: Path) -> None:
    flood_run(folder(tmp_path, 40))
    path = tmp_path / "run.jsonl"
    path.write_text(path.read_text().replace('"sampling_refused": 8', '"sampling_refused": 3'))
    verified = toolrelay(tmp_path, "verify", "run.jsonl")
    assert verified.returncode == 1
    assert ("call_offline_0001: its outcome says 3 sampling request(s) were refused for the per-call cap, "
            "but toolrelay's replies refused 8") in verified.stdout


def test_call_caps_its_one_call_too(tmp_path: Path) -> None:
    folder(tmp_path, 40)
    proc = toolrelay(tmp_path, "call", "ask__sample_many", '{"count": 40}', "--config", "mcp.json",
                     "--model", "offline", "--yes", "--max-sampling-per-call", "30", "--json")
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout)
    assert outcome["sampling_refused"] == 10
    assert json.loads(outcome["result"]["content"][0]["text"])["answered"] == 30
    assert "server ask sent more than 30 sampling requests during its tools/call" in proc.stderr


def test_a_cap_that_is_not_a_count_is_refused_naming_it(tmp_path: Path) -> None:
    folder(tmp_path, 1, maxSamplingPerCall=0)
    proc = toolrelay(tmp_path, "tools", "--config", "mcp.json")
    assert proc.returncode == 2
    said = "server 'ask', toolrelay.maxSamplingPerCall: must be a whole number of at least 1, got 0"
    assert said in proc.stderr
    flag = toolrelay(tmp_path, "call", "ask__sample", "--max-sampling-per-call", "none")
    assert flag.returncode == 2
    assert "--max-sampling-per-call: must be a whole number of at least 1, not 'none'" in flag.stderr


def test_time_spent_answering_the_server_does_not_count_against_the_calls_timeout(tmp_path: Path) -> None:
    async def slow_model(request: SamplingRequest) -> dict[str, Any]:
        await asyncio.sleep(0.8)  # longer than the call's whole timeout
        return {"role": "assistant", "content": {"type": "text", "text": "late"}, "model": "m"}

    async def flood(count: int) -> tuple[dict[str, Any], float]:
        config = ServerConfig(name="ask", transport="stdio", command=PYTHON, args=(str(ASKING_SERVER),),
                              call_timeout=0.4)
        connection = Connection(config, EventStream(), log_dir=tmp_path, host=Host(sampler=slow_model))
        await connection.start()
        try:
            started = asyncio.get_running_loop().time()
            exchange = await connection.call_tool("sample_many", {"count": count}, call_id="call_1")
            took = asyncio.get_running_loop().time() - started
            return json.loads(exchange.raise_for_error()["content"][0]["text"]), took
        finally:
            await connection.close()

    got, took = asyncio.run(asyncio.wait_for(flood(20), 60))
    assert got == {"answered": 20, "errors": {}}
    assert took > 0.4  # past the timeout, without running out: its clock stood still meanwhile
