"""read_text_file throughput and memory: toolrelay's file server against its peers.

Three stdio servers, set up by this script, driven by the same minimal raw JSON-RPC
client (one request at a time, so each figure is the server's round trip):

  toolrelay   python -m toolrelay files ROOT
  node        the reference @modelcontextprotocol/server-filesystem (npm, into bench/.cache)
  sdk-naive   bench/servers/naive_fs_server.py: the official Python SDK's MCPServer, reading
              the whole file for every call

Workload: head=20 and tail=20 on a 1 MB text file (calls/s, median latency, server CPU per
call), then head=20 and tail=20 on a 1 GB file (latency, server RSS and peak RSS before and
after). Medians over passes, servers in a rotating order; ratios are from this run only.

    python bench/files_bench.py                 # full: 3 passes of 1,000 calls, real 1 GB text
    BENCH_QUICK=1 python bench/files_bench.py   # smoke: 1 pass of 200 calls, sparse 1 GB file
    options: --no-big, --keep-big, --json-out FILE; BENCH_TMP=DIR for the data files
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import cpu_seconds, quick, rss_kb, scaled, summary

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
NODE_PACKAGE = "@modelcontextprotocol/server-filesystem@2026.8.31"
MB = 1 << 20
GB = 1 << 30


class Driver:
    """One stdio MCP server and a blocking JSON-RPC client for it."""

    def __init__(self, command: list[str]) -> None:
        started = time.perf_counter()
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self._next_id = 0
        self._buffer = bytearray()
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "files-bench", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.connect_s = time.perf_counter() - started

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any], timeout: float = 600) -> dict[str, Any]:
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self._line(deadline))
            if message.get("id") == self._next_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result

    def _line(self, deadline: float) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while (end := self._buffer.find(b"\n")) < 0:
            if not select.select([fd], [], [], max(deadline - time.monotonic(), 0))[0]:
                raise TimeoutError("no answer from the server in time")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise EOFError("the server closed its stdout")
            self._buffer += chunk
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return line

    def read(self, path: str, mode: str, lines: int) -> str:
        arguments = {"path": path, mode: lines}
        result = self.request("tools/call", {"name": "read_text_file", "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(f"read_text_file failed: {result['content'][0]['text']}")
        return str(result["content"][0]["text"])

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


# -- set-up -----------------------------------------------------------------------------


def node_server() -> list[str]:
    """Install the reference server into bench/.cache once; the command that starts it."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise SystemExit("node and npm are needed for the reference server")
    prefix = CACHE / "npm"
    index = prefix / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    if not index.exists():
        print(f"# installing {NODE_PACKAGE} into {prefix}", file=sys.stderr)
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                        "--loglevel=error", NODE_PACKAGE], check=True)
    return [node, str(index)]


def server_commands(root: Path) -> dict[str, list[str]]:
    return {
        "toolrelay": [sys.executable, "-m", "toolrelay", "files", str(root)],
        "node": [*node_server(), str(root)],
        "sdk-naive": [sys.executable, str(HERE / "servers" / "naive_fs_server.py"), str(root)],
    }


def _text(first_line: int, size: int) -> bytes:
    """~83-byte numbered lines, whole lines, about ``size`` bytes."""
    out, total, number = [], 0, first_line
    while total < size:
        line = b"%09d the quick brown fox jumps over the lazy dog; lorem ipsum dolor sit amet.\n" % number
        out.append(line)
        total += len(line)
        number += 1
    return b"".join(out)


def make_files(folder: Path, big: bool) -> tuple[Path, Path | None]:
    folder.mkdir(parents=True, exist_ok=True)
    small = folder / "text_1mb.txt"
    small.write_bytes(_text(0, MB))
    if not big:
        return small, None
    large = folder / "text_1gb.txt"
    if large.exists() and large.stat().st_size >= GB:
        return small, large
    started = time.perf_counter()
    with large.open("wb") as handle:
        if quick():  # sparse: real lines at both ends, a hole between (instant to create)
            handle.write(_text(0, 4 * MB))
            handle.truncate(GB - 4 * MB)
            handle.seek(GB - 4 * MB)
            handle.write(_text(10**8, 4 * MB))
        else:
            block = _text(0, 4 * MB)
            for _ in range(GB // len(block) + 1):
                handle.write(block)
    print(f"# 1 GB file ready in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return small, large


# -- measuring --------------------------------------------------------------------------


def measure_small(driver: Driver, path: Path, mode: str, calls: int) -> dict[str, float]:
    for _ in range(50):  # warm up (imports, caches, JIT)
        driver.read(str(path), mode, 20)
    cpu_before = cpu_seconds(driver.proc.pid)
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        driver.read(str(path), mode, 20)
        samples.append(time.perf_counter() - started)
    result = summary(samples)
    result["server_cpu_us"] = (cpu_seconds(driver.proc.pid) - cpu_before) / calls * 1e6
    return result


def measure_big(driver: Driver, path: Path, mode: str, calls: int) -> dict[str, float]:
    before = rss_kb(driver.proc.pid)
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        text = driver.read(str(path), mode, 20)
        samples.append(time.perf_counter() - started)
        assert text.count("\n") >= 19, text[:200]
    after = rss_kb(driver.proc.pid)
    return {
        "median_ms": statistics.median(samples) * 1e3,
        "rss_before_mb": before["VmRSS"] / 1024, "rss_after_mb": after["VmRSS"] / 1024,
        "peak_growth_mb": (after["VmHWM"] - before["VmHWM"]) / 1024,
    }


def run_server(name: str, command: list[str], small: Path, large: Path | None, calls: int) -> dict[str, Any]:
    driver = Driver(command)
    try:
        record: dict[str, Any] = {"server": name, "connect_s": driver.connect_s}
        for mode in ("head", "tail"):
            record[f"1mb_{mode}"] = measure_small(driver, small, mode, calls)
        if large is not None and (name != "sdk-naive" or not quick()):
            big_calls = 1 if name == "sdk-naive" else scaled(3, 2)  # naive: ~10 s and GBs per call
            for mode in ("head", "tail"):
                record[f"1gb_{mode}"] = measure_big(driver, large, mode, big_calls)
        return record
    finally:
        driver.close()


def median_of(records: list[dict[str, Any]], key: str, field: str) -> float | None:
    values = [record[key][field] for record in records if key in record]
    return statistics.median(values) if values else None


# -- report -----------------------------------------------------------------------------


def report(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-server medians over passes, and the ratios against the reference server."""
    names = list(dict.fromkeys(record["server"] for record in records))
    table: dict[str, dict[str, Any]] = {}
    for name in names:
        mine = [record for record in records if record["server"] == name]
        row: dict[str, Any] = {"connect_s": statistics.median(r["connect_s"] for r in mine)}
        for key, fields in (("1mb_head", ("calls_per_s", "median_ms", "server_cpu_us")),
                            ("1mb_tail", ("calls_per_s", "median_ms", "server_cpu_us")),
                            ("1gb_head", ("median_ms", "rss_after_mb", "peak_growth_mb")),
                            ("1gb_tail", ("median_ms", "rss_after_mb", "peak_growth_mb"))):
            for field in fields:
                row[f"{key}.{field}"] = median_of(mine, key, field)
        table[name] = row
    print(f"\n{'':28}" + "".join(f"{name:>14}" for name in names))
    for field in table[names[0]]:
        cells = [table[name][field] for name in names]
        shown = (f"{'-':>14}" if cell is None else f"{cell + 0.0:>14.2f}" for cell in cells)
        print(f"{field:28}" + "".join(shown))
    ratios = _ratios(table)
    print()
    for label, value in ratios.items():
        print(f"{label:52} {value:8.2f}" if value is not None else f"{label:52}        -")
    return {"servers": table, "ratios": ratios}


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return numerator / denominator if numerator and denominator else None


def _ratios(table: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    ours, node, naive = table.get("toolrelay", {}), table.get("node", {}), table.get("sdk-naive", {})
    found: dict[str, float | None] = {}
    for mode in ("head", "tail"):
        key, label = f"1mb_{mode}.calls_per_s", f"1 MB {mode}=20 calls/s, toolrelay"
        found[f"{label} / node (goal >= 1.5)"] = _ratio(ours.get(key), node.get(key))
        found[f"{label} / sdk-naive"] = _ratio(ours.get(key), naive.get(key))
    for mode in ("head", "tail"):
        key, label = f"1gb_{mode}.median_ms", f"1 GB {mode}=20 latency"
        found[f"{label}, node / toolrelay (goal >= 1.0)"] = _ratio(node.get(key), ours.get(key))
        found[f"{label}, sdk-naive / toolrelay"] = _ratio(naive.get(key), ours.get(key))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--no-big", action="store_true", help="skip the 1 GB file")
    parser.add_argument("--keep-big", action="store_true", help="keep the 1 GB file for the next run")
    parser.add_argument("--json-out", help="append the results as one JSON line to this file")
    args = parser.parse_args()
    folder = Path(os.environ.get("BENCH_TMP") or CACHE / "data") / "files-bench"
    small, large = make_files(folder, big=not args.no_big)
    commands = server_commands(folder)
    passes, calls = scaled(3, 1), scaled(1000, 200)
    records = []
    try:
        for number in range(passes):
            order = list(commands)[number % len(commands):] + list(commands)[: number % len(commands)]
            for name in order:
                print(f"# pass {number + 1}/{passes}: {name}", file=sys.stderr)
                records.append(run_server(name, commands[name], small, large if number == 0 else None, calls))
    finally:
        if large is not None and not args.keep_big:
            large.unlink()
    summary_record = {"bench": "files", "quick": quick(), "calls": calls, "passes": passes, **report(records)}
    if args.json_out:
        with open(args.json_out, "a") as handle:
            handle.write(json.dumps(summary_record) + "\n")


if __name__ == "__main__":
    main()
