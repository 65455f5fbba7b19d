"""Fixtures of the trace view tests: real transcripts (made once) and one Chromium per module."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import require_or_skip
from testkit.servers import late_file_server

from .helpers import TOOLRELAY, chromium_context, demo, real_run, write_notes

EVIL_TEXT = '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> & done\n'

FAILING_SCRIPT: dict[str, Any] = {"turns": [
    {"reasoning": "read several files", "calls": [
        {"name": "fs__read_text_file", "arguments": {"path": "evil.txt"}},
        {"name": "fs__read_text_file", "arguments": {"path": "missing.txt"}},
        {"name": "fs__read_text_file", "arguments_text": "{not json"},
        {"name": "fs__no_such_tool", "arguments": {}},
        {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 1, "tail": 1}},
    ]},
    {"http_status": 500, "retry_after": 0},
    {"message": "Done."},
]}

BIG_TURNS = 10
BIG_CALLS_PER_TURN = 100
LONG_TURNS = 12
WIDE_TEXT = "naïve café 😀 — 𝄞 ünïcödé\n"
"""Characters beyond the BMP (two UTF-16 units in the page) and accented ones."""


@pytest.fixture(scope="session")
def seed_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed's scenario run for real by ``toolrelay demo``: the attachments folder."""
    return demo(tmp_path_factory.mktemp("seed-demo"))


@pytest.fixture(scope="session")
def seed_transcript(seed_demo: Path) -> Path:
    """The demo's transcript: read the first 20 lines of notes.txt."""
    return seed_demo / "transcript.jsonl"


@pytest.fixture(scope="session")
def failing_transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Parallel calls ending every way (ok with markup in the output, tool errors, invalid
    arguments, unknown tool), then an HTTP 500 from the model and its retry."""
    folder = tmp_path_factory.mktemp("failing-run")
    write_notes(folder)
    (folder / "evil.txt").write_text(EVIL_TEXT, encoding="utf-8")
    return real_run(folder, "read the files", script=FAILING_SCRIPT)


@pytest.fixture(scope="session")
def big_transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,000 real tool calls: ten turns of a hundred parallel reads."""
    folder = tmp_path_factory.mktemp("big-run")
    write_notes(folder, 5)
    calls = [{"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": n % 5 + 1}}
             for n in range(BIG_CALLS_PER_TURN)]
    script = {"turns": [{"calls": calls} for _ in range(BIG_TURNS)] + [{"message": "read them all"}]}
    return real_run(folder, "read notes.txt a thousand times", script=script, max_turns=BIG_TURNS + 1)


@pytest.fixture(scope="session")
def long_replay_transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Twelve turns of two reads in replay mode: every request carries the whole context
    so far, and each output holds characters beyond the BMP."""
    folder = tmp_path_factory.mktemp("long-replay-run")
    write_notes(folder)
    (folder / "wide.txt").write_text(WIDE_TEXT * 3, encoding="utf-8")
    calls = [{"name": "fs__read_text_file", "arguments": {"path": "wide.txt"}},
             {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 2}}]
    script = {"turns": [{"calls": calls} for _ in range(LONG_TURNS)] + [{"message": "read them 😀"}]}
    return real_run(folder, "read both files again and again", script=script, max_turns=LONG_TURNS + 1)


@pytest.fixture(scope="session")
def late_start_transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A healthy run whose file server started late: the era probe's fallback
    ``initialize`` went out beside it and was refused (-32022), as a slow start does."""
    folder = tmp_path_factory.mktemp("late-start-run")
    write_notes(folder)
    (folder / "late.json").write_text(json.dumps({"mcpServers": {"fs": late_file_server(folder)}}))
    proc = subprocess.run([*TOOLRELAY, "run", "Read the first 20 lines of notes.txt", "--model", "offline",
                           "--config", "late.json", "--transcript", "run.jsonl", "--quiet"],
                          cwd=folder, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    return folder / "run.jsonl"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the whole module (skips, or fails under
    TOOLRELAY_REQUIRE_ALL=1, when it cannot start)."""
    try:
        context_manager = chromium_context()
        context = context_manager.__enter__()
    except Exception as exc:  # Playwright's errors for a missing or broken browser vary
        require_or_skip(f"cannot launch headless Chromium: {exc}")
        raise
    try:
        yield context
    finally:
        context_manager.__exit__(None, None, None)
