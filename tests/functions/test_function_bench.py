"""bench/function_tool_bench.py answers --help, and its toolrelay runner really runs a
function tool call against the fake Responses endpoint (a real process over loopback
HTTP). The Agents SDK runner needs openai-agents, which only the bench venv has."""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys

from conftest import REPO

BENCH = REPO / "bench"
sys.path.insert(0, str(BENCH))

import function_tool_bench  # noqa: E402
from loop_bench import fake_endpoint  # noqa: E402


def test_the_bench_answers_help() -> None:
    done = subprocess.run([sys.executable, str(BENCH / "function_tool_bench.py"), "--help"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "--runner" in done.stdout and "goal" in done.stdout.lower()


def test_the_toolrelay_runner_measures_a_function_call_and_a_bare_run() -> None:
    args = argparse.Namespace(runs=3, warmup=1)
    with fake_endpoint(sys.executable) as base_url:
        record = asyncio.run(function_tool_bench.measure("toolrelay", base_url, args))
    assert record["call_run_ms"] > record["bare_run_ms"] > 0
    assert set(record) == set(function_tool_bench.FIELDS)
