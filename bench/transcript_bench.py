"""Transcripts that grow with the run: today's delta-recorded transcripts against the
whole-body ones toolrelay wrote when issue 29 was filed.

One script, run by each toolrelay: the offline stand-in follows 100 turns of 20
``fs__read_text_file`` calls each in replay mode (every request carries the whole context
so far), not streamed, and toolrelay's own file server answers every call over stdio.

  before    toolrelay as it was when issue 29 was filed (``BASELINE``, the main branch just
            before the issue's first work landed; taken from this repository's history with
            ``git archive`` into bench/.cache): its own run writes its own transcript, every
            request body whole, and its own ``load_run`` + ``verify`` read it. This is
            "today's" size and verify time in the issue's goals.
  now       this tree: its run writes the transcript as toolrelay writes it today (request
            bodies and messages recorded as changes, ``transcript/delta.py``, ``shared.py``),
            and its ``load_run`` + ``verify`` read it.
  whole     (shown, not a goal) this tree's events written again with
            ``TranscriptWriter(request_bodies="full")``, every line whole, read by this tree:
            what the format alone buys, with today's checks on both sides.

Each tree also draws its run once (``toolrelay view``'s load, verify, build and render in
its first child): the page's size and CPU are printed, not a goal.

Each verify is timed in a child process of its own (``run_child``), the median of a few
passes of that process's CPU time; the rounds alternate the trees, and the table shows the
medians over rounds. Goals (issue 29): ``now`` ≤ 1/10 of ``before``'s size and its verify
≤ 1/5 of ``before``'s time.

    python bench/transcript_bench.py                 # 100 × 20 calls, 3 rounds
    BENCH_QUICK=1 python bench/transcript_bench.py   # smoke: 10 × 5 calls, 1 round
    options: --turns N, --calls N, --passes N, --rounds N, --stream, --keep DIR, --no-before
"""

from __future__ import annotations

import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CACHE, arg_parser, rotated, run_child, scaled
from toolrelay.transcript.reader import read_transcript
from toolrelay.transcript.writer import TranscriptWriter

SIZE_GOAL, TIME_GOAL = 10.0, 5.0
BASELINE = "d945476"
"""main just before issue 29's first work (merge f383945, branch 'longruns') landed."""
HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "src"

CHILD = r'''
import asyncio, json, statistics, sys, time
from pathlib import Path
from toolrelay.verify import load_run, verify
mode, path, passes = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
if mode == "run":  # make the transcript with this tree first
    from toolrelay.client.config import builtin_file_server
    from toolrelay.relay.loop import RunLimits
    from toolrelay.runner import RunOptions, run_async
    turns, calls, stream, root = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6] == "1", path.parent
    script = {"turns": [{"calls": [{"name": "fs__read_text_file",
                                    "arguments": {"path": "notes.txt", "head": 1 + t * calls + c}}
                                   for c in range(calls)]} for t in range(turns)]}
    (root / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 31)), encoding="utf-8")
    (root / "script.json").write_text(json.dumps(script), encoding="utf-8")
    options = RunOptions(model="offline", script=root / "script.json", config=[builtin_file_server(root)],
                         transcript=path, stream=stream,
                         limits=RunLimits(max_turns=turns + 1, concurrency=16))
    result = asyncio.run(run_async("Read notes.txt many times", options))
    if result.status != "completed" or len(result.calls) != turns * calls:
        sys.exit(f"the run ended {result.status} with {len(result.calls)} calls: {result.reason}")
draw = {}
if mode == "run":  # and draw it once, as toolrelay view does: its page's size and CPU
    from toolrelay.view.build import build_trace
    from toolrelay.view.render import render_html
    started = time.process_time()
    record = load_run(path)
    page = render_html(build_trace(record.events, verify(record), source=str(path))).encode("utf-8")
    draw = {"draw_cpu": time.process_time() - started, "page": len(page)}
    del record
times, ok = [], False
for _ in range(passes):
    started = time.process_time()
    verdict = verify(load_run(path))
    times.append(time.process_time() - started)
    ok = verdict.ok and verdict.finished
print(json.dumps({"cpu": statistics.median(times), "ok": ok, "size": path.stat().st_size, **draw}))
'''


def baseline_source() -> Path:
    """The ``src`` folder of toolrelay at ``BASELINE``, extracted once into bench/.cache."""
    target = CACHE / f"toolrelay-{BASELINE}"
    if (target / "src" / "toolrelay").is_dir():
        return target / "src"
    try:
        archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", "--format=tar", BASELINE, "src"],
                                 capture_output=True, check=True, timeout=120).stdout
    except subprocess.CalledProcessError as exc:
        raise SystemExit(_no_baseline(exc.stderr.decode(errors="replace").strip())) from None
    except OSError as exc:
        raise SystemExit(_no_baseline(str(exc))) from None
    partial = target.with_name(target.name + ".partial")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
            tar.extractall(partial, filter="data")
        else:
            tar.extractall(partial)
    partial.rename(target)
    return target / "src"


def _no_baseline(detail: str) -> str:
    return (f"cannot take toolrelay at {BASELINE} from this repository's history ({detail}): "
            "a shallow clone lacks it (git fetch --unshallow), or use --no-before")


def child(source: Path, args: list[str]) -> dict[str, object]:
    """One measuring child importing toolrelay from ``source``; its record."""
    env = {"PYTHONPATH": str(source), "PYTHONDONTWRITEBYTECODE": ""}
    return run_child([sys.executable, "-c", CHILD, *args], timeout=1800, env=env)


def rewrite_full(delta: Path, full: Path) -> None:
    """The same events, every request body whole (the format before deltas)."""
    transcript = read_transcript(delta)
    writer = TranscriptWriter(full, transcript.run_id or "run", request_bodies="full")
    for event in transcript.events:
        writer.write_record({key: value for key, value in event.items() if key != "run"})
    writer.close()


def main() -> int:
    parser = arg_parser(__doc__)
    parser.add_argument("--turns", type=int, default=scaled(100, 10))
    parser.add_argument("--calls", type=int, default=scaled(20, 5))
    parser.add_argument("--passes", type=int, default=scaled(3, 1), help="verify passes in each child")
    parser.add_argument("--rounds", type=int, default=scaled(3, 1), help="children per tree, alternating")
    parser.add_argument("--stream", action="store_true", help="stream the answers (model_stream events too)")
    parser.add_argument("--keep", type=Path, help="write the transcripts into this folder")
    parser.add_argument("--no-before", action="store_true",
                        help=f"leave out toolrelay at {BASELINE} (a shallow clone lacks it): no goal judged")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="transcript-bench-") as workspace:
        root = args.keep or Path(workspace)
        trees = {"now": SOURCE} if args.no_before else {"before": baseline_source(), "now": SOURCE}
        paths = {name: root / name / "transcript.jsonl" for name in (*trees, "whole")}
        print(f"{args.turns} turns × {args.calls} calls (replay mode), one real run per tree…", flush=True)
        first: dict[str, dict[str, object]] = {}
        for name, source in trees.items():
            paths[name].parent.mkdir(parents=True, exist_ok=True)
            first[name] = child(source, ["run", str(paths[name]), str(args.passes), str(args.turns),
                                         str(args.calls), "1" if args.stream else "0"])
        paths["whole"].parent.mkdir(parents=True, exist_ok=True)
        rewrite_full(paths["now"], paths["whole"])
        sources = {**trees, "whole": SOURCE}
        cpus: dict[str, list[float]] = {name: [] for name in sources}
        clean = all(bool(record["ok"]) for record in first.values())
        for number in range(args.rounds):
            for name in rotated(list(sources), number):
                record = child(sources[name], ["verify", str(paths[name]), str(args.passes)])
                cpus[name].append(float(record["cpu"]))
                clean = clean and bool(record["ok"])
        sizes = {name: path.stat().st_size for name, path in paths.items()}
    print(f"{'':8} {'size':>10} {'verify CPU':>12}   (median of {args.rounds} rounds × {args.passes} passes; "
          f"load {os.getloadavg()[0]:.1f})")
    for name in sources:
        print(f"{name:8} {sizes[name] / 1e6:7.2f} MB {statistics.median(cpus[name]):10.3f} s   "
              f"rounds: {', '.join(f'{cpu:.3f}' for cpu in cpus[name])}")
    for name, record in first.items():
        print(f"{name:8} draws (toolrelay view, once): a {float(record['page']) / 1e6:.2f} MB page "
              f"in {float(record['draw_cpu']):.2f} s of CPU")
    now_cpu = statistics.median(cpus["now"])
    print(f"now against whole (same code, format alone): 1/{sizes['whole'] / sizes['now']:.1f} of the size, "
          f"1/{statistics.median(cpus['whole']) / now_cpu:.1f} of the verify time (not a goal)")
    if "before" not in sources:
        print("no goal judged (--no-before)")
        return 0 if clean else 1
    size_ratio, time_ratio = sizes["before"] / sizes["now"], statistics.median(cpus["before"]) / now_cpu
    size_pass, time_pass = size_ratio >= SIZE_GOAL, time_ratio >= TIME_GOAL
    print(f"size: 1/{size_ratio:.1f} of {BASELINE}'s (goal ≤ 1/{SIZE_GOAL:g}) → "
          f"{'PASS' if size_pass else 'FAIL'}")
    print(f"verify: 1/{time_ratio:.1f} of {BASELINE}'s time (goal ≤ 1/{TIME_GOAL:g}) → "
          f"{'PASS' if time_pass else 'FAIL'}")
    if not clean:
        print("a transcript did NOT verify clean")
    return 0 if clean and size_pass and time_pass else 1


if __name__ == "__main__":
    sys.exit(main())
