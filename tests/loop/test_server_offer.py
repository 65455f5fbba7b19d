"""What a server offers beyond plain text, end to end (MCP host, part 2): its instructions
reach the model, a result that breaks its outputSchema is an error and never a success,
content for the user only is shown to the user and not sent, a resource_link keeps what it
says about itself. A real stdio server (testkit offer_server.py) and the offline model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testkit.openai_wire import check_body
from testkit.processes import run
from testkit.servers import OFFER_SERVER
from testkit.servers.offer_server import WEATHER_OUT
from testkit.transcripts import transcript_events

CALLS = [
    {"name": "offer__weather", "arguments": {"city": "Atlantis"}},
    {"name": "offer__report", "arguments": {}},
    {"name": "offer__link", "arguments": {}},
]


def toolrelay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    return run([sys.executable, "-m", "toolrelay", *args], cwd=cwd, text=True, timeout=60, env=env)


def setup(tmp_path: Path) -> Path:
    config = {"mcpServers": {"offer": {"command": sys.executable, "args": [str(OFFER_SERVER)]}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    (tmp_path / "script.json").write_text(json.dumps({"turns": [{"calls": CALLS}]}))
    return tmp_path / "mcp.json"


def offline_run(tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    setup(tmp_path)
    proc = toolrelay(
        "run", "What is the weather in Atlantis?", "--model", "offline", "--script", "script.json",
        "--config", "mcp.json", "--transcript", "run.jsonl", *extra, cwd=tmp_path,
    )
    events = transcript_events(tmp_path / "run.jsonl")
    return proc, events


def outputs(events: list[dict[str, Any]]) -> dict[str, Any]:
    second = [e for e in events if e["kind"] == "model_request"][1]
    items = second["body"]["input"]
    calls = {item["call_id"]: item["name"] for item in items if item.get("type") == "function_call"}
    fed = [item for item in items if item.get("type") == "function_call_output"]
    return {calls[item["call_id"]]: item["output"] for item in fed}


def test_a_run_passes_on_what_the_server_offers_and_verifies(tmp_path: Path) -> None:
    proc, events = offline_run(tmp_path)
    assert proc.returncode == 0, proc.stderr
    fed = outputs(events)
    assert fed["offer__weather"] == (
        "Error (invalid output): structuredContent does not match the tool's outputSchema: "
        'temperature: expected number, got "warm" (string)'
    )
    assert fed["offer__report"] == "Internal: the cache was warm.\nAll 4 checks passed."
    assert fed["offer__link"] == (
        "[resource link: file:///srv/manual.pdf (manual.pdf, application/pdf): "
        "Operator's manual, chapter 3 covers resets]"
    )
    assert "» offer__report (for you): Heads up: this report cost 3 credits." in proc.stderr.splitlines()
    assert "credits" not in json.dumps([e for e in events if e["kind"] == "model_request"])
    outcomes = [e["outcome"] for e in events if e["kind"] == "call_outcome"]
    [weather] = [outcome for outcome in outcomes if outcome["alias"] == "offer__weather"]
    assert weather["status"] == "invalid_output"
    first = next(e for e in events if e["kind"] == "model_request")
    assert first["body"]["instructions"] == (
        'Instructions from the MCP server "offer" (about its tools):\n'
        "Call weather before you talk about the weather."
    )
    verified = toolrelay("verify", "run.jsonl", cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout


def test_instructions_follow_the_users_own_and_can_be_left_out(tmp_path: Path) -> None:
    _, events = offline_run(tmp_path, "--instructions", "Answer in French.")
    first = next(e for e in events if e["kind"] == "model_request")
    said = first["body"]["instructions"]
    assert said.startswith('Answer in French.\n\nInstructions from the MCP server "offer"')
    _, events = offline_run(tmp_path, "--instructions", "Answer in French.", "--no-server-instructions")
    first = next(e for e in events if e["kind"] == "model_request")
    assert first["body"]["instructions"] == "Answer in French."


def rewrite(path: Path, change: Any) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(change(event)) + "\n" for event in lines))


def test_verify_catches_an_invalid_output_recorded_or_fed_back_as_a_success(tmp_path: Path) -> None:
    offline_run(tmp_path)
    original = (tmp_path / "run.jsonl").read_text()

    def as_ok(event: dict[str, Any]) -> dict[str, Any]:
        if event["kind"] == "call_outcome" and event["outcome"]["status"] == "invalid_output":
            event["outcome"] = {**event["outcome"], "status": "ok", "message": ""}
        return event

    rewrite(tmp_path / "run.jsonl", as_ok)
    verified = toolrelay("verify", "run.jsonl", cwd=tmp_path)
    assert verified.returncode == 1
    assert "call_outcome records ok, but the recorded answer is invalid output" in verified.stdout
    (tmp_path / "run.jsonl").write_text(original.replace("Error (invalid output): structuredContent", "warm"))
    verified = toolrelay("verify", "run.jsonl", cwd=tmp_path)
    assert verified.returncode == 1, verified.stdout


def test_call_says_an_output_breaking_its_schema_is_invalid_and_exits_1(tmp_path: Path) -> None:
    setup(tmp_path)
    broken = toolrelay("call", "offer__weather", '{"city": "Atlantis"}', "--config", "mcp.json", cwd=tmp_path)
    assert broken.returncode == 1
    said = broken.stderr.splitlines()[-1]
    assert said.startswith("toolrelay call: the output is invalid (mcp id ")
    assert said.endswith(
        "): structuredContent does not match the tool's outputSchema: "
        'temperature: expected number, got "warm" (string)'
    )
    assert '"temperature": "warm"' in broken.stdout  # what it said is shown, so the user can see why
    missing = toolrelay("call", "offer__weather", '{"city": "Nowhere"}', "--config", "mcp.json", cwd=tmp_path)
    assert missing.returncode == 1
    assert "but its result has no structuredContent" in missing.stderr
    fine = toolrelay("call", "offer__weather", '{"city": "Paris"}', "--config", "mcp.json", cwd=tmp_path)
    assert (fine.returncode, fine.stderr) == (0, "")


def test_tools_shows_titles_icons_and_the_servers_instructions(tmp_path: Path) -> None:
    setup(tmp_path)
    proc = toolrelay("tools", "--config", "mcp.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    [weather] = [line for line in proc.stdout.splitlines() if line.startswith("offer__weather")]
    assert weather.endswith("Weather now — The temperature in a city.")
    assert "icons: offer__report (image/svg+xml), offer__weather (image/svg+xml)" in proc.stdout
    assert proc.stdout.endswith(
        "instructions from offer (passed on to the model):\n"
        "  Call weather before you talk about the weather.\n"
    )


@pytest.mark.parametrize(("mode", "fed_back"), [
    ("auto", '{"temperature": 21.5, "unit": "C"}'),  # the valid structuredContent, as JSON text
    ("off", "It is 21.5 C in Lyon."),                 # the content, as before
])
def test_structured_output_sends_the_valid_structured_content_where_declared(
    tmp_path: Path, mode: str, fed_back: str
) -> None:
    setup(tmp_path)
    lyon = [{"name": "offer__weather", "arguments": {"city": "Lyon"}},
            {"name": "offer__weather", "arguments": {"city": "Atlantis"}}]
    (tmp_path / "script.json").write_text(json.dumps({"turns": [{"calls": lyon}]}))
    proc = toolrelay(
        "run", "Weather in Lyon?", "--model", "offline", "--script", "script.json", "--config", "mcp.json",
        "--transcript", "run.jsonl", "--structured-output", mode, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    events = transcript_events(tmp_path / "run.jsonl")
    requests = [e["body"] for e in events if e["kind"] == "model_request"]
    declared = {t["name"]: t for t in requests[0]["tools"]}["offer__weather"]
    assert declared.get("output_schema") == (WEATHER_OUT if mode == "auto" else None)
    for body in requests:
        check_body(body)  # output_schema is a FunctionToolParam field in the openai types
    fed = [i["output"] for i in requests[1]["input"] if i.get("type") == "function_call_output"]
    lyon_out, atlantis_out = fed
    assert lyon_out == fed_back
    # an invalid structuredContent stays a tool-side failure, never sent as if valid
    assert atlantis_out.startswith("Error (invalid output): structuredContent does not match")
    verified = toolrelay("verify", "run.jsonl", cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout
    # the output must be what the declaration promised: the other rendering is a broken feedback link
    swapped = "It is 21.5 C in Lyon." if mode == "auto" else '{"temperature": 21.5, "unit": "C"}'
    for event in events:
        items = event["body"]["input"] if event["kind"] == "model_request" else [event.get("item", {})]
        for item in items:
            if item.get("type") == "function_call_output" and item["output"] == fed_back:
                item["output"] = swapped
    (tmp_path / "tampered.jsonl").write_text("".join(json.dumps(event) + "\n" for event in events))
    broken = toolrelay("verify", "tampered.jsonl", cwd=tmp_path)
    assert broken.returncode == 1 and "BROKEN link: feedback" in broken.stdout, broken.stdout
