"""Small things a user reads: no name left unexplained in ``explain`` and the stand-in's
``--help``, a readable message for every typed option, nothing created on a usage error,
and a run's call line worded as ``toolrelay call`` words the same failure."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import config, honest_server, make_workspace, toolrelay, write_json

from toolrelay.cli.main import COMMANDS, build_parser

UNEXPLAINED = re.compile(r"\b(seeds?|attachments?)\b", re.IGNORECASE)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "workspace")


def test_explain_of_a_broken_run_names_nothing_it_does_not_explain(workspace: Path) -> None:
    ran = toolrelay("run", "Read the first 2 lines of notes.txt", "--model", "offline", "--quiet",
                    "--transcript", "run.jsonl", cwd=workspace)
    assert ran.returncode == 0, ran.stderr
    records = [json.loads(line) for line in (workspace / "run.jsonl").read_text().splitlines()]
    answer = next(r for r in records if r["kind"] == "mcp_response" and "result" in r["message"])
    answer["message"]["id"] = 99  # the answer no longer pairs with its request
    (workspace / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    proc = toolrelay("explain", "run.jsonl", cwd=workspace)
    assert "verdict: BROKEN" in proc.stdout, proc.stdout
    assert "check, in this order:" in proc.stdout
    assert UNEXPLAINED.findall(proc.stdout) == []


def test_the_offline_stand_ins_help_names_nothing_it_does_not_explain() -> None:
    proc = subprocess.run([sys.executable, "-m", "toolrelay.offline", "--help"], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0
    assert UNEXPLAINED.findall(proc.stdout) == []
    assert "read_text_file" in proc.stdout


def _command(verb: str) -> argparse.ArgumentParser:
    (verbs,) = (a for a in build_parser(verb)._actions if isinstance(a, argparse._SubParsersAction))
    found: argparse.ArgumentParser = verbs.choices[verb]
    return found


def typed_options() -> list[tuple[str, str, list[str]]]:
    """(verb, option, the positionals the verb needs) for each option with a type function."""
    found = []
    parser = build_parser(None)
    for verb in COMMANDS:
        command = _command(verb)
        needed = [a for a in command._actions if not a.option_strings and a.nargs not in ("?", "*")]
        for action in command._actions:
            if action.option_strings and action.type is not None:
                found.append((verb, action.option_strings[-1], ["x"] * len(needed)))
    assert parser is not None and found
    return found


@pytest.mark.parametrize(("verb", "option", "positionals"), typed_options(),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_every_typed_option_says_what_it_wants(
    verb: str, option: str, positionals: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from toolrelay.cli.main import main

    assert main([verb, *positionals, option, "abc"]) == 2
    said = capsys.readouterr().err.splitlines()[-1]
    (action,) = (a for a in _command(verb)._actions if option in a.option_strings)
    named = "/".join(action.option_strings)  # argparse names an option by all its spellings: -j/--concurrency
    assert said.startswith(f"toolrelay {verb}: error: argument {named}: "), said
    assert not re.search(r"invalid \w+ value", said), said  # argparse's words: the type function's name
    assert "'abc'" in said


def test_the_stand_ins_port_says_what_it_wants() -> None:
    proc = subprocess.run([sys.executable, "-m", "toolrelay.offline", "--port", "abc"], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 2
    assert "argument --port: must be a port number from 0 to 65535, not 'abc'" in proc.stderr


def test_demo_without_a_key_creates_no_folder(workspace: Path) -> None:
    proc = toolrelay("demo", "--model", "gpt-4.1", "--out", "new-folder", cwd=workspace)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "OPENAI_API_KEY" in proc.stderr
    assert not (workspace / "new-folder").exists()


def test_a_runs_call_line_words_a_timeout_as_call_does(workspace: Path) -> None:
    mcp = config(workspace / "mcp.json", honest=honest_server(shutdown_grace=0.2))
    call = toolrelay("call", "honest__sleep", '{"seconds": 30}', "--timeout", "0.5", "--config", str(mcp),
                     cwd=workspace)
    said_by_call = call.stderr.removeprefix("toolrelay call: ").strip()
    assert said_by_call.startswith("timeout: "), call.stderr
    script = write_json(workspace / "sleep.json", {"turns": [
        {"calls": [{"name": "honest__sleep", "arguments": {"seconds": 30}}]}]})
    run = toolrelay("run", "x", "--model", "offline", "--script", str(script), "--config", str(mcp),
                    "--call-timeout", "0.5", cwd=workspace)
    [line] = [line for line in run.stderr.splitlines() if line.startswith("  call honest__sleep →")]
    assert line.endswith(f" · {said_by_call}"), line
    assert "transport_error" not in run.stderr
