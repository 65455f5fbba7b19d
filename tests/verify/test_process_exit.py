"""``toolrelay verify`` / ``explain`` / ``view`` end their process without freeing the run
one by one (cli/process_exit.py): what a user checks is that the output is whole, however
it is read, and the exit code right, through both entries (``python -m toolrelay`` and the
installed ``toolrelay`` script); ``main`` called inside a Python process keeps nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolrelay.cli import process_exit
from toolrelay.cli.main import main
from toolrelay.cli.verify_cmd import report
from toolrelay.verify import load_run, verify
from toolrelay.verify.explain import explain

from .helpers import Event, find, modern_files_run, tampered

ENTRIES = {
    "python -m toolrelay": [sys.executable, "-m", "toolrelay"],
    "toolrelay script": [str(Path(sys.executable).parent / "toolrelay")],
}

BUFFERED = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
"""The environment of a user's shell: stdout to a file or pipe is block-buffered, so output
not flushed before the process ends would be lost (and a test of it could fail)."""


def _toolrelay(entry: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ENTRIES[entry], *args], capture_output=True, text=True, timeout=120, env=BUFFERED)


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run of 40 reads (its ``--all`` report is longer than stdout's buffer, its plain one shorter)."""
    notes = "".join(f"line {n}\n" for n in range(1, 120))
    calls = [{"name": "files__read_text_file", "arguments": {"path": "notes.txt", "head": n}}
             for n in range(1, 41)]
    return modern_files_run(tmp_path_factory.mktemp("exit"), {"notes.txt": notes}, "Read notes.txt",
                            {"turns": [{"calls": calls}]})


@pytest.mark.parametrize("entry", ENTRIES)
def test_the_whole_report_reaches_a_file(entry: str, transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.txt"
    with out.open("w", encoding="utf-8") as stdout:  # block-buffered: lost unless flushed before the exit
        done = subprocess.run([*ENTRIES[entry], "verify", "--all", str(transcript)], stdout=stdout,
                              stderr=subprocess.PIPE, text=True, timeout=120, env=BUFFERED)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    expected = report(verify(load_run(transcript)), every=True)
    assert out.read_text(encoding="utf-8") == expected


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_broken_link_still_exits_1(entry: str, transcript: Path, tmp_path: Path) -> None:
    def change(events: list[Event]) -> None:
        find(events, "feedback")["item"]["output"] = "not what the server said"

    broken = tampered(transcript, tmp_path / "broken.jsonl", change)
    done = _toolrelay(entry, "verify", str(broken))
    assert done.returncode == 1
    assert done.stdout == report(verify(load_run(broken)))
    assert "BROKEN link: feedback" in done.stdout


def test_explain_and_view_write_all_they_say(transcript: Path, tmp_path: Path) -> None:
    explained = _toolrelay("python -m toolrelay", "explain", str(transcript))
    assert explained.returncode == 0, explained.stderr
    record = load_run(transcript)
    assert explained.stdout == explain(record, verify(record))
    page = tmp_path / "run.html"
    drawn = _toolrelay("python -m toolrelay", "view", "-o", str(page), str(transcript))
    assert drawn.returncode == 0, drawn.stderr
    assert drawn.stderr.startswith(f"toolrelay view: wrote {page} (")
    assert page.read_text(encoding="utf-8").rstrip().endswith("</html>")


def test_a_reader_that_goes_away_is_no_failure(transcript: Path) -> None:
    """``toolrelay verify --all run.jsonl | head -1``: the work was done, exit 0, nothing said."""
    with subprocess.Popen([*ENTRIES["python -m toolrelay"], "verify", "--all", str(transcript)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=BUFFERED) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.stdout.close()
        stderr = proc.stderr.read()
        code = proc.wait(timeout=120)
    assert first.startswith(b"verify ")
    assert (code, stderr) == (0, b"")


def test_main_inside_a_process_keeps_nothing(transcript: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(transcript)]) == 0
    assert "ok: " in capsys.readouterr().out
    assert process_exit._kept == []


EVENT_LOOP_MODULES = ("asyncio", "ssl", "socket", "concurrent.futures")
"""What only a live run needs: importing them is ~40 ms of every short ``verify``."""


@pytest.mark.parametrize("verb", [["verify"], ["explain"], ["view", "-o", "run.html"]])
def test_reading_a_run_back_imports_no_event_loop(verb: list[str], transcript: Path, tmp_path: Path) -> None:
    """``toolrelay verify`` / ``explain`` / ``view`` only read a file: their start-up is the
    most of a short transcript's time, so they import none of the live run's I/O machinery."""
    probe = ("import sys\nfrom toolrelay.cli.main import main\n"
             f"code = main({[*verb, str(transcript)]!r})\n"
             f"print(code, [m for m in {EVENT_LOOP_MODULES!r} if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env=BUFFERED)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "0 []"
