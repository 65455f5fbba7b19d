"""stdio line framing: lines split across chunks, CRLF, oversized lines dropped with a
marker while memory stays bounded, and finding the id of an oversized message."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrelay.protocol.framing import LineFramer, Oversized, find_id


def test_lines_split_across_chunks() -> None:
    framer = LineFramer(1024)
    assert framer.feed(b'{"a"') == []
    assert framer.pending_bytes() == 4
    assert framer.feed(b':1}\n{"b":2}\n{') == [b'{"a":1}', b'{"b":2}']
    assert framer.pending_bytes() == 1
    assert framer.feed(b"}") == []
    assert framer.feed(b"\n") == [b"{}"]
    assert framer.pending_bytes() == 0


def test_byte_by_byte_and_multibyte_utf8_split() -> None:
    framer = LineFramer(1024)
    line = '{"t":"☃ snow"}'.encode()
    out: list[bytes | Oversized] = []
    for byte in line + b"\n":
        out += framer.feed(bytes([byte]))
    assert out == [line]


def test_crlf_and_empty_lines() -> None:
    framer = LineFramer(1024)
    assert framer.feed(b'{"a":1}\r\n\n{"b":2}\r\n') == [b'{"a":1}', b"", b'{"b":2}']


@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=10),
    crlf=st.booleans(),
)
def test_any_chunking_gives_the_same_lines(lines: list[bytes], cuts: list[int], crlf: bool) -> None:
    """Whole lines in one chunk take a shortcut; split ones go through the buffer: both
    must give the same lines, CR stripped, and the same markers for lines over the cap."""
    cap = 24
    ending = b"\r\n" if crlf else b"\n"
    stream = b"".join(line + ending for line in lines)
    framer = LineFramer(cap)
    out: list[bytes | Oversized] = []
    start = 0
    for cut in [*sorted(set(cuts)), len(stream)]:
        out += framer.feed(stream[start:cut])
        start = max(start, cut)
    raw = [line + ending[:-1] for line in lines]  # what stands before each newline
    expected = [r.removesuffix(b"\r") if len(r) <= cap else len(r) for r in raw]
    assert [item if isinstance(item, bytes) else item.size for item in out] == expected


def test_line_at_the_cap_passes_one_byte_more_is_oversized() -> None:
    framer = LineFramer(10)
    assert framer.feed(b"x" * 10 + b"\n") == [b"x" * 10]
    [marker] = framer.feed(b"y" * 11 + b"\n")
    assert isinstance(marker, Oversized) and marker.size == 11


def test_oversized_line_is_dropped_with_a_marker_and_the_next_line_is_intact() -> None:
    framer = LineFramer(16)
    assert framer.feed(b"H" * 600) == []
    assert framer.pending_bytes() == 0  # already over the cap: nothing kept
    assert framer.feed(b"M" * 1000) == []
    out = framer.feed(b"T" * 600 + b'\n{"ok":1}\n')
    assert len(out) == 2 and out[1] == b'{"ok":1}'
    marker = out[0]
    assert isinstance(marker, Oversized)
    assert marker.size == 2200
    assert marker.head == b"H" * 512 and marker.tail == b"T" * 512


def test_memory_stays_bounded_under_a_huge_line() -> None:
    cap = 1024
    framer = LineFramer(cap)
    chunk = b"z" * 65536
    for _ in range(160):  # 10 MiB without a newline
        assert framer.feed(chunk) == []
        assert framer.pending_bytes() <= cap
    [marker] = framer.feed(b"\n")
    assert isinstance(marker, Oversized) and marker.size == 160 * 65536
    assert len(marker.head) == 512 and len(marker.tail) == 512


def _oversized(message: str) -> Oversized:
    framer = LineFramer(64)
    [marker] = framer.feed(message.encode() + b"\n")
    assert isinstance(marker, Oversized)
    return marker


PAD = "p" * 2000


def _padded(template: str) -> str:
    """A message far above the cap: ``$PAD`` becomes 2000 bytes of filler."""
    return template.replace("$PAD", PAD)


@pytest.mark.parametrize(("message", "expected"), [
    # Python SDK / toolrelay order: id right after jsonrpc.
    (_padded('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"x":"$PAD"}}'), 5),
    (_padded('{"jsonrpc": "2.0", "id": "req-9", "method": "m", "params": {"x": "$PAD"}}'), "req-9"),
    (_padded('{"id":-3,"jsonrpc":"2.0","result":{"x":"$PAD"}}'), -3),
    (_padded('{"jsonrpc":"2.0","id":"a\\"b","method":"m","params":{"x":"$PAD"}}'), 'a"b'),
    # Node SDK order: id last.
    (_padded('{"jsonrpc":"2.0","method":"tools/call","params":{"x":"$PAD"},"id":7}'), 7),
    (_padded('{"result":{"x":"$PAD"},"jsonrpc":"2.0","id":"r1"}  '), "r1"),
])
def test_find_id_sdk_and_node_styles(message: str, expected: int | str) -> None:
    assert json.loads(message)["id"] == expected
    assert find_id(_oversized(message)) == expected


@pytest.mark.parametrize("message", [
    # ids nested inside params or result are not the message's id
    _padded('{"jsonrpc":"2.0","method":"m","params":{"id":3,"x":"$PAD"}}'),
    _padded('{"jsonrpc":"2.0","method":"m","params":{"x":"$PAD","id":4}}'),
    _padded('{"jsonrpc":"2.0","result":{"items":[{"id":1}],"x":"$PAD"}}'),
    # no id, or an id that is no valid request id
    _padded('{"jsonrpc":"2.0","method":"m","params":{"x":"$PAD"}}'),
    _padded('{"jsonrpc":"2.0","id":true,"method":"m","params":{"x":"$PAD"}}'),
    _padded('{"jsonrpc":"2.0","id":1.5,"method":"m","params":{"x":"$PAD"}}'),
    _padded('{"jsonrpc":"2.0","method":"m","params":{"x":"$PAD"},"id":2.5}'),
    _padded('{"jsonrpc":"2.0","id":null,"method":"m","params":{"x":"$PAD"}}'),
    "garbage " + PAD,
])
def test_find_id_ignores_nested_and_invalid_ids(message: str) -> None:
    assert find_id(_oversized(message)) is None
