"""Every bench in one command: files, client, start-up, loop, stream, verify, batch, tool
search, start-up with the 500-tool catalog, Python function tools, request bytes, tracing's
cost -- each beside its peers.

Sets up bench/.cache/venv first (toolrelay editable + the pinned peers), then runs each
bench script with that venv's python. Every bench appends its summary (medians, ratios,
raw records) to ``bench/results/<timestamp>.jsonl``; their tables go to stdout.

    python bench/run_all.py                   the full run (about 10-15 min on 2 shared cores)
    BENCH_QUICK=1 python bench/run_all.py     a smoke run (about 3 min; fewer calls and passes)
    options: --only NAME (repeatable: files, client, startup, loop, stream, verify, batch, search,
             catalog, function, bytes, otel),
             --json-out FILE
"""

from __future__ import annotations

import subprocess
import sys
import time

from common import BENCH_DIR, arg_parser, quick
from setup_peers import bench_python, compile_toolrelay

BENCHES = {"files": "files_bench.py", "client": "client_bench.py", "startup": "startup_bench.py",
           "loop": "loop_bench.py", "stream": "stream_bench.py", "verify": "verify_bench.py",
           "batch": "batch_bench.py", "search": "search_bench.py", "catalog": "catalog_startup_bench.py",
           "function": "function_tool_bench.py", "compaction": "compaction_bench.py",
           "bytes": "request_bytes_bench.py",
           "otel": "otel_bench.py"}
TIMEOUT = 2400  # seconds per bench; each also bounds its own children


def main() -> int:
    parser = arg_parser(__doc__)
    parser.add_argument("--only", action="append", choices=sorted(BENCHES), help="run only these benches")
    parser.add_argument("--json-out", help="results file (default bench/results/<timestamp>.jsonl)")
    args = parser.parse_args()
    python = str(bench_python())
    compile_toolrelay()
    results = BENCH_DIR / "results"
    results.mkdir(exist_ok=True)
    json_out = args.json_out or str(results / f"{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
    failed = []
    for name in args.only or list(BENCHES):
        script = BENCH_DIR / BENCHES[name]
        if not script.exists():
            continue
        # a bench without --json-out still runs; its tables are in the output only
        takes_json = "--json-out" in script.read_text()
        command = [python, str(script), *(["--json-out", json_out] if takes_json else [])]
        print(f"\n=== {name}{' (quick)' if quick() else ''}: {' '.join(command[1:])}", flush=True)
        started = time.perf_counter()
        try:
            code = subprocess.run(command, timeout=TIMEOUT).returncode
        except subprocess.TimeoutExpired:
            code = -1
        verdict = "ok" if code == 0 else f"FAILED ({code})"
        print(f"=== {name}: {verdict} in {time.perf_counter() - started:.0f} s", flush=True)
        if code != 0:
            failed.append(name)
    print(f"\nresults: {json_out}" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
