"""server-everything (npm, pinned 2026.8.31) against what toolrelay does with a server's
offer (MCP host, part 2): its resource tools (a resource link the model follows with
``--expose-resources``, an embedded resource), its prompts (``--prompt``), its
structured-output tool (checked against its outputSchema) and its annotated-message tool
(content for the user only is shown to the user, never sent to the model), from
``toolrelay call`` and from one scripted offline run whose transcript verifies. A tool
that needs the network (gzip-file-as-resource fetching a URL, kept off it by its
``GZIP_ALLOWED_DOMAINS``) is a tool error there, never a success.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import PYTHON
from testkit import everything

NEWEST = ["--protocol-version", "2025-11-25"]
TEXT_LINK = "demo://resource/dynamic/text/2"
FAR_AWAY = "https://example.com/x.txt"
"""What gzip-file-as-resource would fetch: its GZIP_ALLOWED_DOMAINS (set below) keeps it
off the network, so the test does not depend on one."""
SCRIPT = {"turns": [
    {"calls": [{"name": "ev__get-resource-links", "arguments": {"count": 2}},
               {"name": "ev__get-structured-content", "arguments": {"location": "New York"}},
               {"name": "ev__get-annotated-message", "arguments": {"messageType": "success"}},
               {"name": "ev__gzip-file-as-resource", "arguments": {"name": "x.gz", "data": FAR_AWAY}}]},
    {"calls": [{"name": "ev__read_resource", "arguments": {"uri": TEXT_LINK}},
               {"name": "ev__get-resource-reference",
                "arguments": {"resourceType": "Text", "resourceId": 1}}]},
    {"message": "Done."},
]}
Done = subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, everything_server: list[str]) -> Path:
    root = tmp_path_factory.mktemp("everything")
    config = everything.stdio_config(everything_server, [str(root)])
    config["mcpServers"]["ev"]["env"] = {"GZIP_ALLOWED_DOMAINS": "allowed.invalid"}
    (root / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    (root / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    return root


def toolrelay(args: list[str], cwd: Path) -> Done:
    return subprocess.run([PYTHON, "-m", "toolrelay", *args, *NEWEST, "--config", "mcp.json"], cwd=cwd,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def scripted(folder: Path) -> tuple[Done, list[dict[str, Any]]]:
    proc = toolrelay(["run", "--prompt", "ev/args-prompt", "--arg", "city=Paris", "--model", "offline",
                      "--script", "script.json", "--expose-resources", "--yes", "--transcript", "run.jsonl"],
                     folder)
    lines = (folder / "run.jsonl").read_text(encoding="utf-8").splitlines()
    return proc, [json.loads(line) for line in lines]


def outputs(events: list[dict[str, Any]]) -> dict[str, str]:
    return {e["call_id"]: json.dumps(e["item"]["output"]) for e in events if e["kind"] == "feedback"}


def test_a_scripted_run_follows_a_resource_link_and_verifies(
    scripted: tuple[Done, Any], folder: Path
) -> None:
    proc, events = scripted
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Done."
    said = outputs(events)
    assert f"[resource link: {TEXT_LINK} (Text Resource 2, text/plain)" in said["call_offline_0001"]
    assert said["call_offline_0005"].startswith('"Resource 2: This is a plaintext resource created at')
    assert "Resource 1: This is a plaintext resource" in said["call_offline_0006"]
    start = next(e for e in events if e["kind"] == "run_start")
    assert "Paris" in json.dumps(start["input"])  # the prompt's messages are the input
    verdict = subprocess.run([PYTHON, "-m", "toolrelay", "verify", "--all", "run.jsonl"], cwd=folder,
                             capture_output=True, text=True, timeout=120)
    assert verdict.returncode == 0, verdict.stdout
    assert "ev__read_resource → ev/resources/read; resources/read mcp id" in verdict.stdout


def test_in_a_run_structured_output_is_checked_and_user_content_stays_with_the_user(
    scripted: tuple[Done, Any]
) -> None:
    proc, events = scripted
    said = outputs(events)
    assert "temperature" in said["call_offline_0002"]
    statuses = {e["call_id"]: e["outcome"]["status"] for e in events if e["kind"] == "call_outcome"}
    assert statuses["call_offline_0002"] == "ok"  # its structuredContent keeps its outputSchema
    assert "» ev__get-annotated-message (for you): Operation completed successfully" in proc.stderr
    assert "Operation completed successfully" not in said["call_offline_0003"]


@pytest.mark.parametrize(("tool", "arguments", "shown"), [
    ("get-resource-links", {"count": 2}, f'"uri": "{TEXT_LINK}"'),
    ("get-structured-content", {"location": "New York"}, "--- structuredContent"),
    # a call is the user's own: content meant only for the user is shown, with its audience
    ("get-annotated-message", {"messageType": "success", "includeImage": True}, '"audience": ["user"]'),
], ids=["resource-links", "structured-content", "annotated-message"])
def test_its_offer_tools_work_from_call(
    folder: Path, tool: str, arguments: dict[str, Any], shown: str
) -> None:
    proc = toolrelay(["call", f"ev__{tool}", json.dumps(arguments)], folder)
    assert proc.returncode == 0, proc.stderr
    assert shown in proc.stdout


def test_in_a_run_a_fetch_it_may_not_make_is_a_failure(scripted: tuple[Done, Any]) -> None:
    _, events = scripted
    outcome = next(e["outcome"] for e in events
                   if e["kind"] == "call_outcome" and e["call_id"] == "call_offline_0004")
    assert outcome["status"] == "tool_error"
    assert "Domain example.com is not in the allowed domains list" in outcome["message"]
