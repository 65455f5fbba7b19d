"""Start-up: ``toolrelay tools --json`` with its file server, spawn to exit, beside the SDKs.

  toolrelay  ``python -m toolrelay tools --json`` in a folder: it spawns the built-in file
             server (``python -m toolrelay files DIR``), handshakes, lists the tools, prints
             the Responses ``tools`` array and exits
  sdk-peer   this script with ``--peer DIR``: imports openai and mcp, spawns the same file
             server with the mcp SDK's stdio client, initialize, tools/list, converts each
             tool to an openai ``FunctionToolParam`` (alias ``fs__NAME``), prints the JSON
             array and exits -- the same job, as an application on the SDKs would do it

Both must print the same tool names (checked on the first run). The runs alternate between
the two; each figure is the median wall time, spawn to exit, with ``python -c pass`` as the
floor. Goal: toolrelay <= 1/4 of the peer's time. ``-X importtime`` then shows where
toolrelay's own start goes: the CLI process and the file server process separately.

What the era probe costs (``--protocol-version auto``, the default, against a pin of
2025-11-25, which skips it): ``toolrelay tools --json`` against toolrelay's file server (a
2026-07-28 server), a 2025 server that refuses ``server/discover`` (-32601, as it must:
one round trip) and one that ignores it (the probe waits ``PROBE_WAIT``, then the
handshake follows); the same alternation, median per pair, and the difference.

toolrelay's bytecode is written first (``compileall``): with PYTHONDONTWRITEBYTECODE=1 an
editable install would otherwise re-compile the package on every start (+50-80 ms
measured), which a wheel install never does; ``--no-compile`` skips that step.

    python bench/startup_bench.py                  10 runs each
    BENCH_QUICK=1 python bench/startup_bench.py    3 runs each
    options: --runs N, --no-importtime, --no-probe, --no-compile, --json-out FILE
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    BENCH_DIR,
    TEST_SERVERS,
    append_jsonl,
    arg_parser,
    print_ratios,
    print_table,
    quick,
    ratio,
    scaled,
)

RUN_TIMEOUT = 120.0
TOP = 12


# -- the peer: the same job on the openai and mcp SDKs ------------------------------------


async def peer_tools(root: str) -> list[Any]:
    """Spawn toolrelay's file server with the SDK, list its tools, convert them."""
    import openai  # noqa: F401  (an application on the SDKs has the model client loaded)
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from openai.types.responses import FunctionToolParam

    from peer_adapters import null_log

    params = StdioServerParameters(command=sys.executable, args=["-m", "toolrelay", "files", root])
    with contextlib.closing(null_log()) as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as sdk:
            await sdk.initialize()
            listed = await sdk.list_tools()
    return [
        FunctionToolParam(type="function", name=f"fs__{tool.name}", description=tool.description or "",
                          parameters=tool.input_schema, strict=False)
        for tool in listed.tools
    ]


# -- measuring ----------------------------------------------------------------------------


def commands(python: str, folder: Path) -> dict[str, list[str]]:
    return {
        "toolrelay": [python, "-m", "toolrelay", "tools", "--json"],
        "sdk-peer": [python, str(BENCH_DIR / "startup_bench.py"), "--peer", str(folder)],
        "python -c pass": [python, "-c", "pass"],
    }


def timed_run(command: list[str], folder: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, done.stdout


def check_same_tools(outputs: dict[str, str]) -> list[str]:
    names = {label: sorted(t["name"] for t in json.loads(text)) for label, text in outputs.items()}
    first, *others = names.values()
    if any(other != first for other in others):
        raise RuntimeError(f"the runners listed different tools: {names}")
    return first


def measure_walls(python: str, folder: Path, runs: int) -> dict[str, list[float]]:
    """Every command ``runs`` times, interleaved (a, b, c, b, c, a, ...)."""
    named = commands(python, folder)
    walls: dict[str, list[float]] = {label: [] for label in named}
    outputs: dict[str, str] = {}
    labels = list(named)
    for number in range(runs + 1):  # run 0 warms the file cache and checks the outputs
        order = labels[number % len(labels):] + labels[: number % len(labels)]
        for label in order:
            wall, out = timed_run(named[label], folder)
            if number == 0:
                outputs[label] = out
            else:
                walls[label].append(wall)
    tools = check_same_tools({k: v for k, v in outputs.items() if k != "python -c pass"})
    print(f"# both listed {len(tools)} tools: {', '.join(tools)}", file=sys.stderr)
    return walls


# -- what the era probe costs -------------------------------------------------------------


def probe_servers(python: str, folder: Path) -> dict[str, dict[str, Any]]:
    """Config entries: a 2026-07-28 server and two 2025 ones (refusing, ignoring the probe)."""
    echo = str(TEST_SERVERS / "minimal_echo_server.py")
    return {
        "2026 (toolrelay files)": {"command": python, "args": ["-m", "toolrelay", "files", str(folder)]},
        "2025, refuses probe": {"command": python, "args": [echo]},
        "2025, ignores probe": {"command": python, "args": [echo, "--ignore-unknown"]},
    }


def measure_probe(python: str, folder: Path, runs: int) -> Table:
    """``toolrelay tools --json`` per server, probing (auto) and pinned to 2025-11-25."""
    named: dict[str, list[str]] = {}
    for label, entry in probe_servers(python, folder).items():
        config = folder / f"probe-{len(named)}.json"
        config.write_text(json.dumps({"mcpServers": {"fs": entry}}))
        base = [python, "-m", "toolrelay", "tools", "--json", "--config", str(config)]
        named[f"{label} auto"] = base
        named[f"{label} pinned"] = [*base, "--protocol-version", "2025-11-25"]
    walls: dict[str, list[float]] = {label: [] for label in named}
    labels = list(named)
    for number in range(runs + 1):  # run 0 warms up
        for label in labels[number % len(labels):] + labels[: number % len(labels)]:
            wall, _ = timed_run(named[label], folder)
            if number:
                walls[label].append(wall)
    table: Table = {}
    for label in probe_servers(python, folder):
        auto, pinned = (statistics.median(walls[f"{label} {mode}"]) * 1e3 for mode in ("auto", "pinned"))
        table[label] = {"auto_median_ms": auto, "pinned_2025_median_ms": pinned,
                        "probe_cost_ms": auto - pinned}
    print_table(table, title="era probe, spawn to exit")
    return table


# -- where toolrelay's start goes: -X importtime ------------------------------------------


def importtime(command: list[str], folder: Path, stdin: str | None) -> dict[str, tuple[int, int, int]]:
    """module → (self µs, cumulative µs, nesting level) of one process's imports."""
    done = subprocess.run([command[0], "-X", "importtime", *command[1:]], cwd=folder, input=stdin,
                          capture_output=True, text=True, timeout=RUN_TIMEOUT)
    found = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, total, name = line.removeprefix("import time:").split("|", 2)
        level = (len(name) - len(name.lstrip())) // 2
        found[name.strip()] = (int(own), int(total), level)
    return found


def import_profile(command: list[str], folder: Path, stdin: str | None, runs: int) -> dict[str, Any]:
    samples = [importtime(command, folder, stdin) for _ in range(runs)]
    modules = set.intersection(*(set(s) for s in samples))

    def med(name: str, index: int) -> float:
        return statistics.median(s[name][index] for s in samples) / 1e3

    top_level = [m for m in modules if samples[0][m][2] == 0]  # what the entry point imports
    packages: dict[str, float] = {}
    for module in modules:  # each module's own time, summed per top-level package
        package = module.split(".")[0]
        packages[package] = packages.get(package, 0.0) + med(module, 0)
    return {
        "total_ms": round(sum(packages.values()), 1),
        "heaviest_cumulative_ms": {m: round(med(m, 1), 1)
                                   for m in sorted(top_level, key=lambda m: -med(m, 1))[:TOP // 2]},
        "by_package_ms": {p: round(v, 1) for p, v in sorted(packages.items(), key=lambda i: -i[1])[:TOP]},
        "heaviest_self_ms": {m: round(med(m, 0), 1) for m in sorted(modules, key=lambda m: -med(m, 0))[:TOP]},
    }


def import_breakdown(python: str, folder: Path, runs: int) -> dict[str, Any]:
    """The CLI process and the file server process (started on a closed stdin: it exits at once)."""
    cli = import_profile([python, "-m", "toolrelay", "tools", "--json"], folder, None, runs)
    server = import_profile([python, "-m", "toolrelay", "files", str(folder)], folder, "", runs)
    labelled = (("toolrelay tools (CLI process)", cli), ("toolrelay files (server process)", server))
    for label, found in labelled:
        print(f"\n-X importtime, {label}: {found['total_ms']} ms of imports")
        for name, value in found["heaviest_cumulative_ms"].items():
            print(f"  {value:8.1f} ms  import {name} (with what it imports)")
        print("  by package (each module's own time): " + ", ".join(
            f"{name} {value}" for name, value in found["by_package_ms"].items()))
        print("  heaviest single modules: " + ", ".join(
            f"{name} {value}" for name, value in list(found["heaviest_self_ms"].items())[:6]))
    return {"cli": cli, "server": server}


# -- report -------------------------------------------------------------------------------


Table = dict[str, dict[str, float | None]]


def report(walls: dict[str, list[float]]) -> tuple[Table, dict[str, float | None]]:
    table: Table = {
        label: {"median_ms": statistics.median(w) * 1e3, "min_ms": min(w) * 1e3, "max_ms": max(w) * 1e3}
        for label, w in walls.items()
    }
    print_table(table, title="spawn to exit")
    ours, peer = table["toolrelay"]["median_ms"], table["sdk-peer"]["median_ms"]
    floor = table["python -c pass"]["median_ms"] or 0.0
    ratios = {
        "toolrelay tools / sdk-peer, wall (goal <= 0.25)": ratio(ours, peer),
        "the same minus the python -c pass floor": ratio((ours or 0) - floor, (peer or 0) - floor),
    }
    print()
    print_ratios(ratios)
    return table, ratios


def main() -> None:
    parser = arg_parser(__doc__)
    parser.add_argument("--runs", type=int, default=scaled(10, 3))
    parser.add_argument("--no-importtime", action="store_true", help="skip the -X importtime breakdown")
    parser.add_argument("--no-probe", action="store_true", help="skip what the era probe costs")
    parser.add_argument("--no-compile", action="store_true",
                        help="do not write toolrelay's bytecode first (existing .pyc files are still used)")
    parser.add_argument("--json-out", help="append the summary as one JSON line")
    parser.add_argument("--peer", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer:
        print(json.dumps(asyncio.run(peer_tools(args.peer)), indent=2))
        return
    from setup_peers import bench_python, compile_toolrelay

    python = str(bench_python())
    if not args.no_compile:
        compile_toolrelay()
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as folder:
        Path(folder, "notes.txt").write_text("a file for the file server\n")
        table, ratios = report(measure_walls(python, Path(folder), args.runs))
        probe = {} if args.no_probe else measure_probe(python, Path(folder), args.runs)
        imports = {} if args.no_importtime else import_breakdown(python, Path(folder), scaled(5, 2))
    append_jsonl(args.json_out, {"bench": "startup", "quick": quick(), "runs": args.runs,
                                 "compiled": not args.no_compile, "walls_ms": table, "ratios": ratios,
                                 "probe_ms": probe, "importtime": imports})


if __name__ == "__main__":
    main()
