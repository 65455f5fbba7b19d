"""Transcripts that grow with the run: delta-recorded request bodies against whole ones.

One real run, made once per invocation: the offline stand-in follows a script of 100
turns of 20 ``fs__read_text_file`` calls each in replay mode (every request carries the
whole context so far), not streamed, and toolrelay's own file server answers every call
over stdio. Its transcript is written as toolrelay writes it (each request after the
first recorded as what changed, ``transcript/delta.py``); the same events are then written
again with ``TranscriptWriter(request_bodies="full")``, every body whole, as transcripts
were written before. For each: the size on disk and the CPU time of ``load_run`` +
``verify`` (the median of a few passes, in this process). Goals (issue 29): the delta
transcript ≤ 1/10 of the full one's size and its verify ≤ 1/5 of the full one's time.

    python bench/transcript_bench.py                 # 100 × 20 calls
    BENCH_QUICK=1 python bench/transcript_bench.py   # smoke: 10 × 5 calls
    options: --turns N, --calls N, --passes N, --stream, --keep DIR
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import scaled
from toolrelay.client.config import builtin_file_server
from toolrelay.relay.loop import RunLimits
from toolrelay.runner import RunOptions, run_async
from toolrelay.transcript.reader import read_transcript
from toolrelay.transcript.writer import TranscriptWriter
from toolrelay.verify import load_run, verify

SIZE_GOAL, TIME_GOAL = 10.0, 5.0


def script(turns: int, calls: int) -> dict[str, object]:
    """``turns`` responses of ``calls`` parallel reads each, every arguments text different."""
    return {"turns": [
        {"calls": [{"name": "fs__read_text_file",
                    "arguments": {"path": "notes.txt", "head": 1 + t * calls + c}} for c in range(calls)]}
        for t in range(turns)
    ]}


def make_transcript(root: Path, turns: int, calls: int, stream: bool) -> Path:
    """One real run in ``root``; its (delta) transcript."""
    (root / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 31)), encoding="utf-8")
    (root / "script.json").write_text(json.dumps(script(turns, calls)), encoding="utf-8")
    path = root / "delta.jsonl"
    options = RunOptions(model="offline", script=root / "script.json", config=[builtin_file_server(root)],
                         transcript=path, stream=stream,
                         limits=RunLimits(max_turns=turns + 1, concurrency=16))
    result = asyncio.run(run_async("Read notes.txt many times", options))
    if result.status != "completed" or len(result.calls) != turns * calls:
        raise SystemExit(f"the bench run ended {result.status} with {len(result.calls)} calls: "
                         f"{result.reason}")
    return path


def rewrite_full(delta: Path, full: Path) -> None:
    """The same events, every request body whole (the format before deltas)."""
    transcript = read_transcript(delta)
    writer = TranscriptWriter(full, transcript.run_id or "run", request_bodies="full")
    for event in transcript.events:
        writer.write_record({key: value for key, value in event.items() if key != "run"})
    writer.close()


def verify_cpu(path: Path, passes: int) -> tuple[float, bool]:
    """Median CPU seconds of load_run + verify, and whether every link held."""
    times, ok = [], False
    for _ in range(passes):
        started = time.process_time()
        verdict = verify(load_run(path))
        times.append(time.process_time() - started)
        ok = verdict.ok and verdict.finished
    return statistics.median(times), ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=scaled(100, 10))
    parser.add_argument("--calls", type=int, default=scaled(20, 5))
    parser.add_argument("--passes", type=int, default=scaled(3, 1))
    parser.add_argument("--stream", action="store_true", help="stream the answers (model_stream events too)")
    parser.add_argument("--keep", type=Path, help="write both transcripts into this folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="transcript-bench-") as workspace:
        root = args.keep or Path(workspace)
        root.mkdir(parents=True, exist_ok=True)
        print(f"a real run of {args.turns} turns × {args.calls} calls (replay mode)…", flush=True)
        delta = make_transcript(root, args.turns, args.calls, args.stream)
        full = root / "full.jsonl"
        rewrite_full(delta, full)
        rows = []
        for name, path in (("full bodies", full), ("deltas", delta)):
            cpu, ok = verify_cpu(path, args.passes)
            rows.append((name, path.stat().st_size, cpu, ok))
            print(f"  {name:12} {path.stat().st_size / 1e6:8.2f} MB   verify {cpu:6.3f} s CPU (median)   "
                  f"{'all links hold' if ok else 'NOT CLEAN'}")
    size_ratio, time_ratio = rows[0][1] / rows[1][1], rows[0][2] / rows[1][2]
    size_pass, time_pass = size_ratio >= SIZE_GOAL, time_ratio >= TIME_GOAL
    print(f"size: 1/{size_ratio:.1f} of full bodies (goal ≤ 1/{SIZE_GOAL:g}) → "
          f"{'PASS' if size_pass else 'FAIL'}")
    print(f"verify: 1/{time_ratio:.1f} of full bodies' time (goal ≤ 1/{TIME_GOAL:g}) → "
          f"{'PASS' if time_pass else 'FAIL'}")
    clean = all(row[3] for row in rows)
    return 0 if clean and size_pass and time_pass else 1


if __name__ == "__main__":
    sys.exit(main())
