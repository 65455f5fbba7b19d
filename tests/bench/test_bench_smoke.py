"""Smoke checks of the benches: every script answers --help, and the adapters the benches
(and /work/shared/peer-bench's harness) drive really work against real processes.

Real parts: the stdlib echo server as a subprocess, toolrelay's client, the fake Responses
endpoint in its own process over loopback HTTP (a fake, because the hosted model cannot
run here; it speaks the real wire format). Both servers are the tests' own
(tests/testkit/servers/), which the benches run by path. The peers that need openai / openai-agents are
not importable in the test venv and are exercised by the benches themselves.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from testkit.servers import FAKE_RESPONSES, MINIMAL_ECHO_SERVER

BENCH = REPO / "bench"
sys.path.insert(0, str(BENCH))

import peer_adapters  # noqa: E402
from common import endpoint_stats  # noqa: E402
from loop_bench import EXPECTED, PROMPT, fake_endpoint  # noqa: E402

ECHO_SERVER = [sys.executable, str(MINIMAL_ECHO_SERVER)]
FAKE_RESPONSES_SCRIPT = "../tests/testkit/servers/fake_responses.py"


@pytest.mark.parametrize(
    ("script", "mentions"),
    [
        ("client_bench.py", "--client"),
        ("startup_bench.py", "--runs"),
        ("loop_bench.py", "--runner"),
        ("stream_bench.py", "--scale"),
        ("batch_bench.py", "--tasks"),
        ("search_bench.py", "--rounds"),
        ("catalog_startup_bench.py", "--servers"),
        ("proxy_bench.py", "--transcript"),
        ("request_bytes_bench.py", "--no-agents"),
        ("transcript_bench.py", "--no-before"),
        ("run_all.py", "--only"),
        ("setup_peers.py", "--node"),
        (FAKE_RESPONSES_SCRIPT, "--text"),
        ("../tests/testkit/servers/fake_stream.py", "--stamp"),
        ("../tests/testkit/servers/slow_server.py", "--seconds"),
        ("../tests/testkit/servers/catalog_server.py", "--print-config"),
    ],
)
def test_every_bench_script_answers_help(script: str, mentions: str) -> None:
    done = subprocess.run([sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stderr
    assert mentions in done.stdout
    assert "BENCH_QUICK" in done.stdout or script == "setup_peers.py" or script.startswith("../tests/")


async def _one_call(factory_name: str, text: str) -> tuple[list[str], str]:
    async with peer_adapters.CLIENTS[factory_name](ECHO_SERVER, None) as client:
        return await client.list_tools(), await client.call_tool("echo", {"text": text})


@pytest.mark.parametrize("client", ["toolrelay", "toolrelay-catalog", "sdk-session"])
def test_client_adapters_echo_one_call_through_a_real_server(client: str) -> None:
    names, echoed = asyncio.run(_one_call(client, "héllo from the smoke test"))
    assert names == ["echo"]
    assert echoed == "héllo from the smoke test"


async def _unknown_tool() -> None:
    async with peer_adapters.open_client(ECHO_SERVER) as client:
        await client.call_tool("nope", {})


def test_a_tool_error_is_not_a_bench_result() -> None:
    with pytest.raises(RuntimeError, match="tool error: unknown tool"):
        asyncio.run(_unknown_tool())


def test_an_unknown_client_name_says_what_exists() -> None:
    with pytest.raises(SystemExit, match="unknown name 'nope': use one of toolrelay, toolrelay-catalog"):
        peer_adapters.resolve("nope", peer_adapters.CLIENTS)


async def _two_runs(base_url: str) -> list[str]:
    async with peer_adapters.runner(base_url, ECHO_SERVER) as run_once:
        return [await run_once(PROMPT), await run_once(PROMPT)]


def test_the_toolrelay_runner_keeps_its_server_across_runs_against_the_fake_endpoint() -> None:
    with fake_endpoint(sys.executable) as base_url:
        answers = asyncio.run(_two_runs(base_url))
        stats = endpoint_stats(base_url)
    # each run: a function_call to the echo tool, then the final answer quoting its output
    assert answers == [EXPECTED, EXPECTED]
    assert stats["requests"] == 4
    assert stats["handler_s_total"] > 0


def test_the_benches_start_the_test_servers_by_path() -> None:
    from common import TEST_SERVERS, echo_server_command

    assert (TEST_SERVERS / "fake_responses.py").samefile(BENCH / FAKE_RESPONSES_SCRIPT)
    assert (TEST_SERVERS / "fake_responses.py") == FAKE_RESPONSES
    for name in ("minimal", "sdk"):
        command = echo_server_command(sys.executable, name)
        assert Path(command[1]).is_file(), command


def test_the_shared_harness_can_import_the_adapters_by_module_path() -> None:
    found = peer_adapters.resolve("peer_adapters:open_client", {})
    assert found is peer_adapters.open_client
    assert Path(peer_adapters.__file__).parent == BENCH


def test_the_stream_bench_runs_tiny_and_prints_its_ratios_against_the_goals(tmp_path: Path) -> None:
    """The issue's scenario at 1/20 of its times, toolrelay's two runners only (the Agents
    SDK is not in the test venv), through the same parent, children and endpoint."""
    out = tmp_path / "stream.jsonl"
    done = subprocess.run(
        [sys.executable, str(BENCH / "stream_bench.py"), "--python", sys.executable, "--scale", "0.05",
         "--runs", "1", "--runner", "toolrelay-stream", "--runner", "toolrelay-no-stream",
         "--json-out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "goal toolrelay-stream / toolrelay-no-stream <= 0.75: " in done.stdout
    assert "goal delta to stdout, median ms <= 20: " in done.stdout
    record = json.loads(out.read_text().splitlines()[-1])
    assert record["bench"] == "stream"
    assert set(record["records"]) == {"toolrelay-stream", "toolrelay-no-stream"}
    assert record["latency"]["exit"] == 0 and record["latency"]["tokens"] >= 300
    assert all(r["wall_median_s"] > 0.3 for r in record["records"].values())  # 6 s and 3 s tools, scaled


def test_the_batch_bench_runs_tiny_and_prints_its_ratios_against_the_goals(tmp_path: Path) -> None:
    """20 tasks through toolrelay batch's local engine only (the Agents SDK is not in the
    test venv; the Ray runner's start-up costs seconds): the same parent, child and endpoint."""
    out = tmp_path / "batch.jsonl"
    runs = tmp_path / "runs"
    runs.mkdir()
    done = subprocess.run(
        [sys.executable, str(BENCH / "batch_bench.py"), "--python", sys.executable, "--tasks", "20",
         "-j", "4", "--runs", "1", "--runner", "toolrelay-local", "--json-out", str(out),
         "--flat-memory", "60", "--out-dir", str(runs)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"# the batches write under {runs}" in done.stderr
    assert list(runs.iterdir()) == []  # every pass's folder removed at the end
    assert "goal toolrelay-local / agents (tasks/s) >= 10: -" in done.stdout
    assert re.search(r"goal toolrelay-local CPU per task \(ms\) <= 2: (met|MISSED) \([\d.]+\)", done.stdout)
    assert re.search(r"goal toolrelay-local peak RSS at 60 tasks <= 1.1x at 20: (met|MISSED) "
                     r"\([\d.]+ vs [\d.]+ MB\)", done.stdout)
    record = json.loads(out.read_text().splitlines()[-1])
    assert record["bench"] == "batch" and record["tasks"] == 20
    (sample,) = record["samples"]["toolrelay-local"]
    assert sample["tasks_per_s"] > 0 and sample["cpu_ms_per_task"] > 0 and sample["peak_rss_mb"] > 5
    (many,) = record["samples"]["toolrelay-local x60"]
    assert many["peak_rss_mb"] > 5
