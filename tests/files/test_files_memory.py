"""head and tail on 1 GB files keep the server's memory flat and read only what they return.

The files are sparse (``truncate``) with real text written at the start and at the end,
so they are instant to create; the middle reads as NUL bytes without a newline. Memory is
the server process's VmRSS/VmHWM; the bytes it read come from /proc/PID/io (rchar).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import require_or_skip

from .helpers import RawClient, bytes_read, status_kb

GB = 1 << 30
MB = 1 << 20
LINES = b"".join(b"%09d the quick brown fox jumps over the lazy dog\n" % i for i in range(20_000))


def _sparse(path: Path, start: bytes, end: bytes) -> None:
    with path.open("wb") as handle:
        handle.write(start)
        handle.truncate(GB)
        handle.seek(GB - len(end))
        handle.write(end)


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if not sys.platform.startswith("linux"):
        require_or_skip("VmHWM and rchar come from Linux /proc")
    folder = tmp_path_factory.mktemp("big")
    _sparse(folder / "lines.txt", LINES, LINES)
    _sparse(folder / "one-line.txt", b"a" * (2 * MB), b"b" * (2 * MB))
    try:
        yield folder
    finally:
        for name in ("lines.txt", "one-line.txt"):
            (folder / name).unlink()


@pytest.fixture(scope="module")
def server(big: Path) -> Iterator[RawClient]:
    with RawClient(str(big)) as client:
        client.text("read_text_file", {"path": "lines.txt", "head": 1})  # warm up: imports, buffers
        yield client


def _measured(client: RawClient, arguments: dict[str, object]) -> tuple[dict[str, object], int, int]:
    """The result, the growth of the server's peak RSS (kB) and the bytes it read."""
    pid = client.proc.pid
    before, read_before = status_kb(pid), bytes_read(pid)
    result = client.call("read_text_file", arguments)
    after, read_after = status_kb(pid), bytes_read(pid)
    return result, after["VmHWM"] - before["VmHWM"], read_after - read_before


@pytest.mark.parametrize("mode", ["head", "tail"])
def test_twenty_lines_of_a_1gb_file(server: RawClient, mode: str) -> None:
    result, peak_growth_kb, read = _measured(server, {"path": "lines.txt", mode: 20})
    lines = LINES.split(b"\n")[:20] if mode == "head" else LINES.split(b"\n")[-21:-1]
    assert result["content"][0]["text"] == (b"\n".join(lines) + b"\n").decode()
    assert read < 256 * 1024  # the lines asked for and one block, not the file
    assert peak_growth_kb < 8 * 1024


@pytest.mark.parametrize(("mode", "letter"), [("head", "a"), ("tail", "b")])
def test_a_1gb_line_stops_at_the_cap(server: RawClient, mode: str, letter: str) -> None:
    result, peak_growth_kb, read = _measured(server, {"path": "one-line.txt", mode: 1})
    assert result["structuredContent"] == {"content": letter * MB, "truncated": True}
    assert len(result["content"]) == 2
    assert read < 4 * MB  # the 1 MiB cap plus at most one block
    assert peak_growth_kb < 48 * 1024  # the 1 MiB text, its JSON message (twice), no more


def test_whole_read_of_1gb_is_refused_without_reading(server: RawClient) -> None:
    result, peak_growth_kb, read = _measured(server, {"path": "lines.txt"})
    assert result["content"][0]["text"].startswith(
        "File too large to read whole: lines.txt holds 1,073,741,824 bytes")
    assert read < 64 * 1024 and peak_growth_kb < 1024


def test_rss_stays_flat_over_many_calls(server: RawClient) -> None:
    pid = server.proc.pid
    baseline = status_kb(pid)["VmRSS"]
    for _ in range(5):
        for arguments in ({"path": "lines.txt", "head": 20}, {"path": "lines.txt", "tail": 20},
                          {"path": "one-line.txt", "head": 1}, {"path": "one-line.txt", "tail": 1}):
            server.call("read_text_file", arguments)
    assert status_kb(pid)["VmRSS"] - baseline < 32 * 1024
