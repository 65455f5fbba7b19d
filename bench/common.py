"""Small, generic helpers shared by the benches: quick mode, statistics, and a process's
RSS and CPU time from Linux /proc. Nothing here knows what is being measured."""

from __future__ import annotations

import os
import statistics
from pathlib import Path

__all__ = ["cpu_seconds", "quick", "rss_kb", "scaled", "summary"]


def quick() -> bool:
    """BENCH_QUICK=1: fewer calls and passes, for a smoke run."""
    return os.environ.get("BENCH_QUICK", "") not in ("", "0")


def scaled(full: int, quick_value: int) -> int:
    return quick_value if quick() else full


def summary(samples_s: list[float]) -> dict[str, float]:
    """Median and p90 in milliseconds, and calls per second over the samples."""
    ordered = sorted(samples_s)
    return {
        "median_ms": statistics.median(ordered) * 1e3,
        "p90_ms": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))] * 1e3,
        "calls_per_s": len(ordered) / sum(ordered),
    }


def rss_kb(pid: int) -> dict[str, int]:
    """VmRSS (now) and VmHWM (peak) of a live process, in kB."""
    found: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0])
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
