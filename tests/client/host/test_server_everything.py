"""server-everything (npm, pinned 2026.8.31), a server no one here wrote, against what
toolrelay offers servers: over stdio and Streamable HTTP it lists all 19 of its tools at
2025-11-25; its roots, sampling, elicitation and async request tools work from
``toolrelay call`` and from a scripted offline ``toolrelay run`` whose transcript
verifies; its task tool (``simulate-research-query``, ``taskSupport: "required"``) runs
as a task, asking its elicitation inside the task. What needs a person (a URL to open) or
a model toolrelay was not given is a decline or a failure, never a success; so is a form
whose required field has no default under ``--elicit defaults`` (its elicitation tools).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import PYTHON
from testkit import everything
from testkit.transcripts import transcript_events

NEWEST = ["--protocol-version", "2025-11-25"]
ALL_TOOLS = {
    "echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
    "get-roots-list", "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
    "simulate-research-query", "toggle-simulated-logging", "toggle-subscriber-updates",
    "trigger-elicitation-request", "trigger-elicitation-request-async", "trigger-long-running-operation",
    "trigger-sampling-request", "trigger-sampling-request-async", "trigger-url-elicitation",
}
"""Its whole list; with ``capabilities: {}`` it shows 13 of them."""
SAMPLED = "Hello from the scripted model."
SCRIPT = {
    "turns": [
        {"calls": [{"name": "ev__get-roots-list", "arguments": {}}]},
        {"calls": [{"name": "ev__trigger-sampling-request",
                    "arguments": {"prompt": "Say hi", "maxTokens": 50}}]},
        {"calls": [{"name": "ev__trigger-elicitation-request", "arguments": {}}]},
        {"calls": [{"name": "ev__trigger-sampling-request-async", "arguments": {"prompt": "Say hi"}}]},
        {"calls": [{"name": "ev__trigger-elicitation-request-async", "arguments": {}}]},
        {"calls": [{"name": "ev__simulate-research-query",
                    "arguments": {"topic": "MCP", "ambiguous": True}}]},
        {"message": "Done."},
    ],
    "sampling": {"message": SAMPLED},
}
"""One call per turn, so each server request arrives during exactly one call."""
ASKED = [  # verify's correlation lines: each call's server requests, paired with their answers
    "call_offline_0001: during its tools/call the server asked roots/list",
    "call_offline_0002: during its tools/call the server asked sampling/createMessage",
    "call_offline_0003: during its tools/call the server asked elicitation/create",
    "call_offline_0004: during its tools/call the server asked sampling/createMessage",
    "call_offline_0005: during its tools/call the server asked elicitation/create",
    "call_offline_0006: during its tools/call the server asked elicitation/create",  # inside its task
]
CALLS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("get-roots-list", {}, []),
    ("trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 50}, ["--model", "offline", "--yes"]),
    ("trigger-elicitation-request", {}, ["--elicit", "defaults"]),
    ("trigger-sampling-request-async", {"prompt": "Say hi"}, ["--model", "offline", "--yes"]),
    ("trigger-elicitation-request-async", {}, ["--elicit", "defaults"]),
]


@pytest.fixture(scope="module")
def server(everything_server: list[str]) -> list[str]:
    return everything_server


def toolrelay(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "toolrelay", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def stdio(server: list[str], tmp_path: Path) -> list[str]:
    """``--config`` naming server-everything over stdio, with ``tmp_path`` as its root."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(everything.stdio_config(server, [str(tmp_path)])), encoding="utf-8")
    return ["--config", str(config)]


def listed(stdout: str) -> set[str]:
    return {tool["name"].removeprefix("ev__") for tool in json.loads(stdout)}


def call_args(tool: str, arguments: dict[str, Any], options: list[str]) -> list[str]:
    return ["call", f"ev__{tool}", json.dumps(arguments), *NEWEST, *options]


REQUIRED_WITHOUT_DEFAULT = "declined: --elicit defaults has no default for the required field(s) name"
"""Its elicitation forms require ``name``, which has no default: --elicit defaults declines them."""


def check_call(tool: str, done: dict[str, Any], root: Path) -> None:
    """What a user checks in each tool's output: the root, the sampled text, the declined forms."""
    assert done["code"] == 0, done["stdout"] + done["stderr"]
    expected = {
        "get-roots-list": root.as_uri(),
        "trigger-sampling-request": '"model": "offline"',
        "trigger-elicitation-request": "User declined to provide the requested information.",
        "trigger-sampling-request-async": "[COMPLETED] Async sampling completed!",
        "trigger-elicitation-request-async": "[DECLINED] User declined to provide the requested information.",
    }[tool]
    assert expected in done["stdout"]
    assert ("elicitation" in tool) == (REQUIRED_WITHOUT_DEFAULT in done["stderr"]), done["stderr"]


def check_run(done: dict[str, Any], transcript: Path, cwd: Path) -> None:
    assert done["code"] == 0, done["stdout"] + done["stderr"]
    assert done["stdout"].strip() == "Done."
    outputs = transcript_events(transcript)
    results = [e["message"]["result"] for e in outputs if e["kind"] == "mcp_response" and e.get("call_id")
               and e["method"] in ("tools/call", "tasks/result") and "task" not in e["message"]["result"]]
    assert len(results) == 6 and not any(result.get("isError") for result in results)
    assert "# Research Report: MCP" in json.dumps(results[5])  # the task's result, from tasks/result
    assert SAMPLED in json.dumps(results[1])  # the script's sampling entry answered the server
    verdict = toolrelay(["verify", str(transcript), "--all"], cwd)
    assert verdict.returncode == 0, verdict.stdout
    for line in ASKED:
        assert any(line in shown for shown in verdict.stdout.splitlines()), (line, verdict.stdout)
    forms = [shown for shown in verdict.stdout.splitlines() if "elicitation/create" in shown]
    assert len(forms) == 3 and all(shown.endswith("answered (decline)") for shown in forms), forms


def run_args(tmp_path: Path, transcript: Path) -> list[str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    return ["run", "use the everything server", *NEWEST, "--model", "offline", "--script", str(script),
            "--yes", "--elicit", "defaults", "--quiet", "--transcript", str(transcript)]


# -- stdio -------------------------------------------------------------------------------


def test_over_stdio_it_lists_all_its_tools(server: list[str], tmp_path: Path) -> None:
    proc = toolrelay(["tools", "--json", *NEWEST, *stdio(server, tmp_path)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert listed(proc.stdout) == ALL_TOOLS


@pytest.mark.parametrize(("tool", "arguments", "options"), CALLS, ids=[c[0] for c in CALLS])
def test_over_stdio_its_asking_tools_work_from_call(
    server: list[str], tmp_path: Path, tool: str, arguments: dict[str, Any], options: list[str]
) -> None:
    proc = toolrelay([*call_args(tool, arguments, options), *stdio(server, tmp_path)], tmp_path)
    check_call(tool, {"code": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}, tmp_path)


def test_elicit_decline_is_reported_by_the_server_as_declined(server: list[str], tmp_path: Path) -> None:
    proc = toolrelay([*call_args("trigger-elicitation-request", {}, ["--elicit", "decline"]),
                      *stdio(server, tmp_path)], tmp_path)
    assert proc.returncode == 0
    assert "User declined to provide the requested information." in proc.stdout
    assert "declined: --elicit decline" in proc.stderr


def test_a_url_to_open_needs_a_person_so_defaults_decline_it(server: list[str], tmp_path: Path) -> None:
    arguments = {"url": "https://example.com/sign-in", "message": "Sign in"}
    proc = toolrelay([*call_args("trigger-url-elicitation", arguments, ["--elicit", "defaults"]),
                      *stdio(server, tmp_path)], tmp_path)
    assert "User declined to open the URL" in proc.stdout
    assert ("asked you to open https://example.com/sign-in (URL elicitation); declined: "
            "--elicit defaults accepts forms only") in proc.stderr


@pytest.mark.parametrize(("options", "message"), [
    ([], "no model given; pass --model (e.g. --model offline) and --yes to let servers sample"),
    (["--model", "offline"],
     "not approved (no terminal to ask on; rerun with --yes to approve sampling requests)"),
])
def test_sampling_without_a_model_or_approval_is_refused_naming_the_option(
    server: list[str], tmp_path: Path, options: list[str], message: str
) -> None:
    proc = toolrelay([*call_args("trigger-sampling-request", {"prompt": "hi"}, options),
                      *stdio(server, tmp_path)], tmp_path)
    assert proc.returncode == 1
    assert "MCP error -1:" in proc.stdout and message in proc.stdout
    assert "toolrelay call: the tool reported an error" in proc.stderr


def test_its_task_tool_runs_as_a_task_from_call(server: list[str], tmp_path: Path) -> None:
    # simulate-research-query has execution.taskSupport "required": a plain call fails
    proc = toolrelay([*call_args("simulate-research-query", {"topic": "MCP"}, ["--wire"]),
                      *stdio(server, tmp_path)], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "# Research Report: MCP" in proc.stdout
    sent = [json.loads(line[line.index("{"):]) for line in proc.stdout.splitlines() if line.startswith(">> ")]
    methods = [message.get("method") for message in sent]
    call = next(message for message in sent if message.get("method") == "tools/call")
    assert call["params"]["task"] == {"ttl": 600000}
    assert "tasks/get" in methods and methods[-1] == "tasks/result"


def test_a_scripted_offline_run_over_stdio_verifies(server: list[str], tmp_path: Path) -> None:
    transcript = tmp_path / "run.jsonl"
    proc = toolrelay([*run_args(tmp_path, transcript), *stdio(server, tmp_path)], tmp_path)
    check_run({"code": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}, transcript, tmp_path)


# -- Streamable HTTP ---------------------------------------------------------------------


def test_over_streamable_http_the_same_works(server: list[str], tmp_path: Path) -> None:
    transcript = tmp_path / "run.jsonl"
    network = ["gzip-file-as-resource", {"name": "x.gz", "data": "https://example.com/x.txt"}, []]
    runs = [
        ["tools", "--json", *NEWEST],
        *[call_args(tool, arguments, options) for tool, arguments, options in CALLS],
        run_args(tmp_path, transcript),
        *([call_args(*network)] if everything.loopback_only() else []),  # type: ignore[arg-type]
    ]
    done = everything.run_over_http(server, [str(tmp_path)], runs, tmp_path)
    assert done[0]["code"] == 0, done[0]["stderr"]
    assert listed(done[0]["stdout"]) == ALL_TOOLS
    for (tool, _, _), result in zip(CALLS, done[1:6], strict=True):
        check_call(tool, result, tmp_path)
    check_run(done[6], transcript, tmp_path)
    if everything.loopback_only():  # no network in the namespace: the fetch fails, reported so
        assert done[7]["code"] == 1, done[7]
        assert "toolrelay call: the tool reported an error" in done[7]["stderr"]
