"""head and tail against the real coreutils, on random files (hypothesis).

The reading functions run in-process with tiny, random block sizes so lines, CRLF pairs
and multi-byte characters straddle block edges; a few examples also go end to end
through the server at its real block size.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolrelay.files.reading import FIRST_BLOCK, InvalidText, TooLarge, read_head, read_tail, read_whole

from .helpers import RawClient

# Pieces that make trouble: newlines, CR before LF, empty lines, 2/3/4-byte characters.
_PIECES = st.sampled_from(["a", "bc", " ", "\n", "\r\n", "\r", "é", "€", "😀", "\n\n", "xyz€\n"])
CONTENTS = st.lists(_PIECES, max_size=120).map(lambda parts: "".join(parts).encode())
TOOLS = st.sampled_from(["head", "tail"])
MANY_LINES = st.integers(min_value=0, max_value=200).map(lambda n: b"".join(b"%d\n" % i for i in range(n)))


def coreutils(tool: str, lines: int, path: str) -> bytes:
    binary = shutil.which(tool)
    if binary is None:
        pytest.skip(f"{tool} (coreutils) not found")
    return subprocess.run([binary, "-n", str(lines), path], capture_output=True, check=True).stdout


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


def _ours(path: Path, tool: str, lines: int, cap: int, block: int, max_block: int) -> tuple[str, bool]:
    fd = os.open(path, os.O_RDONLY)
    try:
        if tool == "head":
            excerpt = read_head(fd, lines, cap=cap, block=block, max_block=max_block)
        else:
            excerpt = read_tail(fd, os.fstat(fd).st_size, lines, cap=cap, block=block, max_block=max_block)
    finally:
        os.close(fd)
    return excerpt.text, excerpt.truncated


def _cut(expected: bytes, cap: int, tool: str) -> bytes:
    """What a capped read must return: the head (or tail) of ``expected`` on a character boundary."""
    if len(expected) <= cap:
        return expected
    if tool == "head":
        end = cap
        while expected[end] & 0xC0 == 0x80:
            end -= 1
        return expected[:end]
    begin = len(expected) - cap
    while expected[begin] & 0xC0 == 0x80:
        begin += 1
    return expected[begin:]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(CONTENTS, MANY_LINES), lines=st.integers(0, 250), tool=TOOLS,
       block=st.one_of(st.integers(1, 9), st.just(1 << 16)), grow=st.booleans())
def test_equals_coreutils(
    scratch: Path, content: bytes, lines: int, tool: str, block: int, grow: bool
) -> None:
    path = scratch / "file.txt"
    path.write_bytes(content)
    text, truncated = _ours(path, tool, lines, 1 << 20, block, 1 << 20 if grow else block)
    assert text.encode() == coreutils(tool, lines, str(path))
    assert not truncated


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=CONTENTS, lines=st.integers(1, 40), tool=TOOLS,
       cap=st.integers(4, 60), block=st.integers(1, 9))
def test_capped_reads_cut_on_a_character(
    scratch: Path, content: bytes, lines: int, tool: str, cap: int, block: int
) -> None:
    path = scratch / "capped.txt"
    path.write_bytes(content)
    expected = coreutils(tool, lines, str(path))
    text, truncated = _ours(path, tool, lines, cap, block, block * 4)
    assert text.encode() == _cut(expected, cap, tool)
    assert truncated == (len(expected) > cap)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(good=CONTENTS, bad=st.sampled_from([b"\xff", b"\xc3(", b"\xe2\x82", b"\xed\xa0\x80", b"\x80"]),
       more=CONTENTS)
def test_invalid_utf8_reports_its_offset(scratch: Path, good: bytes, bad: bytes, more: bytes) -> None:
    path = scratch / "bad.txt"
    data = good + bad + more
    path.write_bytes(data)
    try:
        data.decode()
    except UnicodeDecodeError as exc:
        offset = exc.start
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(InvalidText) as raised:
            read_whole(fd, len(data), cap=1 << 20)
        assert raised.value.offset == offset
        with pytest.raises(InvalidText) as raised:
            read_tail(fd, len(data), 1 << 30, cap=1 << 20, block=3)
        assert raised.value.offset == offset
    finally:
        os.close(fd)


def test_whole_read_refuses_above_the_cap(scratch: Path) -> None:
    path = scratch / "ten.txt"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDONLY)
    try:
        assert read_whole(fd, 10, cap=10).text == "0123456789"
        with pytest.raises(TooLarge) as raised:
            read_whole(fd, 10, cap=9)
        assert raised.value.size == 10
        with pytest.raises(TooLarge):  # st_size is only a hint: a file that grew is caught too
            os.lseek(fd, 0, os.SEEK_SET)
            read_whole(fd, 0, cap=9)
    finally:
        os.close(fd)


@pytest.fixture(scope="module")
def served(scratch: Path) -> Iterator[tuple[Path, RawClient]]:
    folder = scratch / "served"
    folder.mkdir()
    with RawClient(str(folder)) as client:
        yield folder, client


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(CONTENTS, MANY_LINES), lines=st.integers(0, 250), tool=TOOLS)
def test_server_equals_coreutils(
    served: tuple[Path, RawClient], content: bytes, lines: int, tool: str
) -> None:
    folder, client = served
    (folder / "f.txt").write_bytes(content)
    text = client.text("read_text_file", {"path": "f.txt", tool: lines})
    assert text.encode() == coreutils(tool, lines, str(folder / "f.txt"))


def test_multibyte_characters_across_the_real_block_edge(served: tuple[Path, RawClient]) -> None:
    """At the server's real first block size, a 4-byte character straddles the edge."""
    folder, client = served
    content = ("x" * (FIRST_BLOCK - 2) + "😀\n" + "é€\n" * 3).encode()
    (folder / "edge.txt").write_bytes(content)
    for tool in ("head", "tail"):
        for lines in (1, 2, 4):
            text = client.text("read_text_file", {"path": "edge.txt", tool: lines})
            assert text.encode() == coreutils(tool, lines, str(folder / "edge.txt"))
