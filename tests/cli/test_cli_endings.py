"""How a run ended is said once, as a sentence: on the progress line when progress is shown,
otherwise on the closing line; ``explain`` and ``demo`` use the same words."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from cli_helpers import make_workspace, toolrelay, write_json

from toolrelay.cli.progress import ProgressPrinter
from toolrelay.events import RunEndEvent, RunStartEvent

AGAIN = {"calls": [{"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 1}}]}
LIMIT_LINE = "stopped at the turn limit (1): reached --max-turns 1; the model has not seen the last outputs"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "workspace")
    write_json(root / "again.json", {"turns": [AGAIN, AGAIN]})
    return root


def test_the_turn_limit_is_said_once_as_a_sentence(workspace: Path) -> None:
    proc = toolrelay("run", "x", "--model", "offline", "--script", "again.json", "--max-turns", "1",
                     cwd=workspace)
    assert proc.returncode == 1
    assert proc.stderr.count("stopped at the turn limit") == 1, proc.stderr
    assert f"run {LIMIT_LINE} · tokens: " in proc.stderr  # the sentence, then the usage
    assert "max_turns" not in proc.stderr and "the run ended" not in proc.stderr


def test_without_progress_the_closing_line_says_it(workspace: Path) -> None:
    proc = toolrelay("run", "x", "--model", "offline", "--script", "again.json", "--max-turns", "1",
                     "--quiet", cwd=workspace)
    assert proc.returncode == 1
    assert proc.stderr == f"toolrelay run: the run {LIMIT_LINE}\n"


def test_an_incomplete_response_is_a_sentence_too(workspace: Path) -> None:
    write_json(workspace / "cut.json", {"turns": [{"status": "incomplete", "reason": "content_filter"}]})
    proc = toolrelay("run", "x", "--model", "offline", "--script", "cut.json", "--quiet", cwd=workspace)
    assert proc.returncode == 1
    assert proc.stderr == (
        "toolrelay run: the run ended after 1 turn with an incomplete response: content_filter\n"
    )


def test_explain_heads_the_run_with_the_same_sentence(workspace: Path) -> None:
    ran = toolrelay("run", "x", "--model", "offline", "--script", "again.json", "--max-turns", "1",
                    "--quiet", "--transcript", "run.jsonl", cwd=workspace)
    assert ran.returncode == 1
    proc = toolrelay("explain", "run.jsonl", cwd=workspace)
    header = proc.stdout.splitlines()[0]
    assert header.endswith(" · stopped at the turn limit (1)"), header


def progress_of(status: str, reason: str, turns: int = 2) -> str:
    stream = io.StringIO()
    printer = ProgressPrinter(stream)
    printer(RunStartEvent(run_id="r", model="m", endpoint="e", context_mode="replay", strict=False, task="t"))
    printer(RunEndEvent(status=status, reason=reason, turns=turns))
    return stream.getvalue()


def test_the_progress_line_of_a_timeout() -> None:
    assert progress_of("timeout", "the run's timeout (1 s) passed") == (
        "run stopped at its time limit during turn 2: the run's timeout (1 s) passed\n"
    )


@pytest.mark.parametrize("status", ["error", "aborted"])
def test_what_the_command_reports_itself_gets_no_progress_line(status: str) -> None:
    """The endpoint's error and Ctrl-C are each said once, by the command's own line."""
    assert progress_of(status, "model endpoint answered 404 Not Found") == ""
