"""bench/otel_bench.py runs, small: every mode measured, the traced one's spans really
reach the loopback receiver (four a run: the run, two turns, the call), and so do the
floor's (the SDK alone making the same spans again); the untraced ones import no
OpenTelemetry, the ``absent`` one could not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_the_bench_measures_both_modes_and_counts_the_exported_spans(tmp_path: Path) -> None:
    out = tmp_path / "otel.jsonl"
    done = subprocess.run([sys.executable, str(BENCH / "otel_bench.py"), "--runs", "4", "--warmup", "1",
                           "--passes", "1", "--no-startup", "--json-out", str(out)],
                          capture_output=True, text=True, timeout=120, cwd=BENCH)
    assert done.returncode == 0, done.stderr
    assert "overhead per turn, on / off" in done.stdout and "client CPU per call, on / off" in done.stdout
    [summary] = [json.loads(line) for line in out.read_text().splitlines()]
    by_mode = {record["mode"]: record for record in summary["records"]}
    assert by_mode["on"]["spans_per_run"] == 4 and by_mode["on"]["otel_imported"]
    for untraced in ("off", "absent", "listened"):
        assert by_mode[untraced]["spans_per_run"] == 0 and not by_mode[untraced]["otel_imported"]
        assert by_mode[untraced]["requests_per_run"] == 2
    assert by_mode["on"]["requests_per_run"] == 2
    assert by_mode["off"]["otel_importable"] and not by_mode["absent"]["otel_importable"]
    floor = by_mode["floor"]
    assert (floor["captured_spans"], floor["captured_points"], floor["spans_per_run"]) == (4, 7, 4)
    assert floor["client_cpu_ms_per_call"] > 0 and floor["requests_per_run"] is None
    assert "added: the SDK's floor, floor / off" in done.stdout


def test_the_bench_answers_help() -> None:
    done = subprocess.run([sys.executable, str(BENCH / "otel_bench.py"), "--help"], capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0 and "BENCH_QUICK" in done.stdout and "--no-startup" in done.stdout
