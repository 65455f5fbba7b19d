"""The transcript reader's fast path (each line scanned in place) reads what the line-by-line
path reads, and every line it cannot take goes to that path, which names a bad one.

Also: a record verify has indexed is freed as soon as it is dropped (no cycle holds it), and
the reader's pause of the garbage collector leaves nothing frozen.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from toolrelay.errors import UsageError
from toolrelay.gc_pause import paused_gc
from toolrelay.transcript.reader import read_transcript
from toolrelay.verify import RunRecord, load_run, verify


def _variant(source: Path, target: Path, change: str) -> Path:
    lines = source.read_text(encoding="utf-8").splitlines()
    if change == "crlf":
        text = "\r\n".join(lines) + "\r\n"
    elif change == "blank lines":
        text = "\n\n".join(lines) + "\n\n"
    elif change == "padded":
        text = "".join(f"  {line} \t\n" for line in lines)
    else:
        raise AssertionError(change)
    target.write_text(text, encoding="utf-8")
    return target


@pytest.mark.parametrize("change", ["crlf", "blank lines", "padded"])
def test_lines_the_fast_path_does_not_take_read_the_same(seed_run: Path, tmp_path: Path, change: str) -> None:
    variant = _variant(seed_run, tmp_path / "variant.jsonl", change)
    assert read_transcript(variant).events == read_transcript(seed_run).events
    verdict = verify(load_run(variant))
    assert verdict.ok and verdict.finished


def test_two_values_on_a_line_name_the_line(seed_run: Path, tmp_path: Path) -> None:
    lines = seed_run.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2] + " " + lines[2]
    bad = tmp_path / "two.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"two\.jsonl:3 is not a JSON line: Extra data"):
        read_transcript(bad)


def test_a_line_that_is_no_event_is_named(seed_run: Path, tmp_path: Path) -> None:
    lines = seed_run.read_text(encoding="utf-8").splitlines()
    lines[4] = "[1, 2]"
    bad = tmp_path / "array.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    said = r'array\.jsonl:5 is not a transcript event \(an object with a "kind"\)'
    with pytest.raises(UsageError, match=said):
        read_transcript(bad)


def test_a_dropped_record_is_freed_at_once(seed_run: Path) -> None:
    """No cycle holds a record (the indexer's handlers once did): its reference count frees it."""
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        run = load_run(seed_run)
        assert verify(run).ok
        events = run.events
        del run
        alive = [o for o in gc.get_objects() if isinstance(o, RunRecord) and o.events is events]
        assert alive == []
    finally:
        if was:
            gc.enable()


def test_pausing_the_collector_freezes_nothing() -> None:
    with paused_gc():
        kept = [{"n": [n]} for n in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    assert len(kept) == 1000
