"""Compaction's effect on a long run: the same 200-turn run compacted every 50 turns, and not.

One real run per pass and mode: the offline stand-in follows a script of 200 turns of one
``fs__read_text_file`` call each in replay mode (every request carries the context so far),
not streamed, and toolrelay's own file server answers every call over stdio. With
``--compact-at`` asked for (a threshold no context reaches, so only the script compacts),
the responses of turns 50, 100 and 150 start with a ``compaction`` item (``"compact": true``),
and the next request starts from it; without, the context only grows. For each: the input
tokens the stand-in counted over the run (its own estimate: about 4 characters a token of
each request's context), the run's wall time, the CPU time of ``load_run`` + ``verify`` and
the transcript's size on disk; medians over the passes, side by side.

    python bench/compaction_bench.py                 # 200 turns, compacted every 50, 3 passes
    BENCH_QUICK=1 python bench/compaction_bench.py   # smoke: 20 turns, every 5, 1 pass
    options: --turns N, --every N, --passes N, --json-out PATH (append the medians)
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
from common import append_jsonl, print_table, scaled
from toolrelay.client.config import builtin_file_server
from toolrelay.relay.loop import RunLimits
from toolrelay.runner import RunOptions, run_async
from toolrelay.verify import load_run, verify

NEVER = 10**9
"""The ``--compact-at`` threshold: asked for, never reached (the script says when)."""


def script(turns: int, every: int | None) -> dict[str, object]:
    """``turns`` responses of one read each; every ``every``-th starts with a compaction item."""
    entries: list[dict[str, object]] = []
    for turn in range(1, turns + 1):
        call = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 1 + turn % 30}}
        entry: dict[str, object] = {"calls": [call]}
        if every is not None and turn % every == 0:
            entry["compact"] = True
        entries.append(entry)
    return {"turns": [*entries, {"message": "done"}]}


def one_run(root: Path, turns: int, every: int | None) -> dict[str, float]:
    """One real run in ``root`` and its measures."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 31)), encoding="utf-8")
    (root / "script.json").write_text(json.dumps(script(turns, every)), encoding="utf-8")
    transcript = root / "run.jsonl"
    options = RunOptions(model="offline", script=root / "script.json", config=[builtin_file_server(root)],
                         transcript=transcript, stream=False, compact_at=NEVER,
                         limits=RunLimits(max_turns=turns + 2))
    started = time.perf_counter()
    result = asyncio.run(run_async("Read notes.txt many times", options))
    wall = time.perf_counter() - started
    if result.status != "completed" or len(result.calls) != turns:
        raise SystemExit(f"the bench run ended {result.status} with {len(result.calls)} calls: "
                         f"{result.reason}")
    cpu = time.process_time()
    verdict = verify(load_run(transcript))
    verify_cpu = time.process_time() - cpu
    if not (verdict.ok and verdict.finished):
        raise SystemExit(f"the bench transcript does not verify: {verdict.broken}")
    records = sum(1 for line in transcript.read_text(encoding="utf-8").splitlines()
                  if json.loads(line)["kind"] == "compaction")
    if records != (turns // every if every else 0):
        raise SystemExit(f"expected a compaction record every {every} turns, found {records}")
    return {"input tokens": float(result.usage.get("input_tokens", 0)), "run s": wall,
            "verify s (CPU)": verify_cpu, "transcript MB": transcript.stat().st_size / 1e6,
            "compactions": float(records)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=scaled(200, 20))
    parser.add_argument("--every", type=int, default=scaled(50, 5))
    parser.add_argument("--passes", type=int, default=scaled(3, 1))
    parser.add_argument("--json-out", help="append the medians as one JSON line to this file")
    args = parser.parse_args()
    modes = {"not compacted": None, f"compacted every {args.every}": args.every}
    samples: dict[str, list[dict[str, float]]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory(prefix="compaction-bench-") as workspace:
        for n in range(args.passes):
            order = list(modes) if n % 2 == 0 else list(reversed(modes))  # alternate which goes first
            for mode in order:
                print(f"pass {n + 1}: {args.turns} turns, {mode}…", flush=True)
                samples[mode].append(one_run(Path(workspace) / f"{n}-{len(samples[mode])}-{modes[mode]}",
                                             args.turns, modes[mode]))
    table = {mode: {field: statistics.median(s[field] for s in runs) for field in runs[0]}
             for mode, runs in samples.items()}
    print_table(table, title=f"median of {args.passes}")  # type: ignore[arg-type]
    plain, compacted = table.values()
    print(f"\ncompacted / not: input tokens {compacted['input tokens'] / plain['input tokens']:.3f}, "
          f"run {compacted['run s'] / plain['run s']:.3f}, verify "
          f"{compacted['verify s (CPU)'] / plain['verify s (CPU)']:.3f}, "
          f"transcript {compacted['transcript MB'] / plain['transcript MB']:.3f}")
    append_jsonl(args.json_out, {"bench": "compaction", "turns": args.turns, "every": args.every,
                             "passes": args.passes, "medians": table})
    return 0


if __name__ == "__main__":
    sys.exit(main())
