"""The CLI's shared behaviour: help, usage errors, exit codes, a closed pipe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from testkit.processes import run, spawned


def toolrelay(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "toolrelay", *args], text=True, timeout=60, cwd=cwd)


def test_help_lists_every_verb_and_the_exit_codes() -> None:
    proc = toolrelay("--help")
    assert proc.returncode == 0
    for verb in ("files", "tools", "call", "run", "demo", "verify", "explain", "view"):
        assert f"    {verb} " in proc.stdout
    assert "exit codes: 0 success · 1 the command ran and reports a failure · 2 usage error" in proc.stdout


def test_no_verb_and_unknown_options_are_usage_errors() -> None:
    assert toolrelay().returncode == 2
    proc = toolrelay("tools", "--no-such-flag")
    assert proc.returncode == 2
    assert "toolrelay tools: error: unrecognized arguments: --no-such-flag" in proc.stderr


@pytest.mark.parametrize(("args", "usage", "error"), [
    (["run", "x", "--modle", "offline"], "toolrelay run [-h] [options] [TASK]",
     "unrecognized arguments: --modle offline (did you mean --model?)"),
    (["tools", "--jsno"], "toolrelay tools [-h] [options]",
     "unrecognized arguments: --jsno (did you mean --json?)"),
    (["call", "fs__x", "--wier"], "toolrelay call [-h] [options] ALIAS [ARGUMENTS]",
     "unrecognized arguments: --wier (did you mean --wire?)"),
    (["auth", "login", "notes", "--no-browsr"], "toolrelay auth login [-h] [options] SERVER",
     "unrecognized arguments: --no-browsr (did you mean --no-browser?)"),
    (["verify", "run.jsonl", "--al", "--jsn"], "toolrelay verify [-h] [options] PATH",
     "unrecognized arguments: --al --jsn (did you mean --all for --al, --json for --jsn?)"),
])
def test_a_mistyped_flag_gets_the_usage_line_and_the_flag_it_resembles(
    args: list[str], usage: str, error: str
) -> None:
    proc = toolrelay(*args)
    assert proc.returncode == 2
    prog = usage.split(" [")[0]
    assert proc.stderr == f"usage: {usage} (see {prog} --help)\n{prog}: error: {error}\n"


@pytest.mark.parametrize(("args", "meant"), [
    (["run", "x", "--mod", "offline"], "--model"),  # taken for --model before, silently
    (["tools", "--js"], "--json"),
    (["batch", "t.jsonl", "--out", "o", "--concur", "2"], "--concurrency"),
])
def test_an_abbreviated_flag_is_refused(args: list[str], meant: str) -> None:
    proc = toolrelay(*args)
    assert proc.returncode == 2
    assert proc.stderr.endswith(f"(did you mean {meant}?)\n")
    assert "Traceback" not in proc.stderr


def test_a_reader_that_goes_away_is_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("line\n" * 200_000)
    command = [sys.executable, "-m", "toolrelay", "call", "fs__read_text_file",
               '{"path": "big.txt", "head": 150000}']
    with spawned(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline() == b"line\n"
        proc.stdout.close()
        stderr = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
