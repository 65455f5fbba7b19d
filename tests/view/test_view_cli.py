"""``toolrelay view`` on the command line: where it writes, what it says, its exit codes."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

from toolrelay.verify import load_run, verify

from .helpers import read_events, view, write_events


def test_writes_path_with_html_suffix_by_default(seed_transcript: Path, tmp_path: Path) -> None:
    copy = write_events(tmp_path / "run.jsonl", read_events(seed_transcript))
    proc = view(str(copy))
    assert proc.returncode == 0, proc.stderr
    page = tmp_path / "run.html"
    assert page.is_file() and page.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert proc.stderr.startswith(
        f"toolrelay view: wrote {page} (23 events: 13 messages, 2 turn(s), 1 call(s))")
    assert proc.stdout == ""


def test_a_demo_folder_is_drawn_beside_it(seed_demo: Path, tmp_path: Path) -> None:
    folder = Path(shutil.copytree(seed_demo, tmp_path / "seed"))
    proc = view(str(folder))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "seed.html").is_file()
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in seed_demo.iterdir())


def test_output_option_names_the_file(seed_transcript: Path, tmp_path: Path) -> None:
    proc = view(str(seed_transcript), "-o", str(tmp_path / "elsewhere.html"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "elsewhere.html").is_file()
    assert not seed_transcript.with_suffix(".html").exists()


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    proc = view(str(missing))
    assert proc.returncode == 2
    assert proc.stderr == f"toolrelay view: error: {missing}: no such transcript file or demo folder\n"
    assert not (tmp_path / "nope.html").exists()


def test_a_file_that_is_not_a_transcript_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "notes.jsonl"
    bad.write_text("this is not JSON\n", encoding="utf-8")
    proc = view(str(bad))
    assert proc.returncode == 2
    assert f"toolrelay view: error: {bad}:1 is not a JSON line" in proc.stderr


def test_a_file_that_is_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    binary = tmp_path / "run.jsonl"
    binary.write_bytes(b"\xff\xfe\x00binary")
    proc = view(str(binary))
    assert proc.returncode == 2
    assert proc.stderr == f"toolrelay view: error: cannot read transcript {binary}: not UTF-8 text\n"


def test_a_folder_without_a_transcript_is_a_usage_error(tmp_path: Path) -> None:
    proc = view(str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"toolrelay view: error: {tmp_path} has no transcript.jsonl")


def test_an_unwritable_output_is_a_usage_error(seed_transcript: Path, tmp_path: Path) -> None:
    target = tmp_path / "no-such-dir" / "trace.html"
    proc = view(str(seed_transcript), "-o", str(target))
    assert proc.returncode == 2
    assert proc.stderr == f"toolrelay view: error: cannot write {target}: No such file or directory\n"
    (tmp_path / "a.txt").write_text("x")
    under_a_file = view(str(seed_transcript), "-o", str(tmp_path / "a.txt" / "trace.html"))
    assert under_a_file.returncode == 2
    assert under_a_file.stderr == (
        f"toolrelay view: error: cannot write {tmp_path / 'a.txt' / 'trace.html'}: "
        f"{tmp_path / 'a.txt'} is a file, not a folder\n"
    )


def test_a_tampered_transcript_still_renders_and_names_its_broken_link(seed_transcript: Path,
                                                                        tmp_path: Path) -> None:
    events = read_events(seed_transcript)
    next(e for e in events if e["kind"] == "feedback")["item"]["output"] = "made up\n"
    tampered = write_events(tmp_path / "tampered.jsonl", events)
    broken = verify(load_run(tampered)).broken
    assert broken is not None
    proc = view(str(tampered))
    assert proc.returncode == 0, proc.stderr  # the page was drawn: that is this command's job
    assert (tmp_path / "tampered.html").is_file()
    assert f"toolrelay view: verify found a broken link: {broken.link}: {broken.message}" in proc.stderr


def _browser_env(tmp_path: Path, body: str) -> dict[str, str]:
    """An environment whose only browser is ``$BROWSER``, a small script (webbrowser honours
    it); with PATH and DISPLAY gone no real browser can be found instead."""
    script = tmp_path / "bin" / "browser"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\nimport sys, pathlib\n{body}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return {**env, "BROWSER": str(script), "PATH": str(script.parent)}


def test_open_hands_the_file_url_to_the_default_browser(seed_transcript: Path, tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    env = _browser_env(tmp_path, f"pathlib.Path({str(opened)!r}).write_text(sys.argv[1])")
    out = tmp_path / "t.html"
    proc = view(str(seed_transcript), "-o", str(out), "--open", env=env)
    assert proc.returncode == 0, proc.stderr
    assert opened.read_text() == out.resolve().as_uri()


def test_open_without_a_browser_says_where_the_page_is(seed_transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.html"
    proc = view(str(seed_transcript), "-o", str(out), "--open", env=_browser_env(tmp_path, "sys.exit(1)"))
    assert proc.returncode == 0, proc.stderr  # the page is written; only opening it failed
    assert proc.stderr.endswith(f"toolrelay view: could not open a browser; open {out.resolve().as_uri()}\n")
