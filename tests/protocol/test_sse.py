"""Server-sent events framing: the WHATWG rules, however the bytes are split, and the cap."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrelay.protocol.sse import EventTooLarge, SseParser, StreamEvent


def parse(*chunks: bytes, end: bool = True) -> list[tuple[str | None, str]]:
    parser = SseParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    if end:
        events += parser.end()
    assert [event.index for event in events] == list(range(len(events)))
    return [(event.event, event.data) for event in events]


def test_event_and_data_fields_make_one_event_per_blank_line() -> None:
    body = b'event: response.created\ndata: {"a":1}\n\nevent: response.completed\ndata: {"b":2}\n\n'
    assert parse(body) == [("response.created", '{"a":1}'), ("response.completed", '{"b":2}')]


def test_line_ends_comments_and_fields_follow_the_standard() -> None:
    body = (
        b"\xef\xbb\xbf: a comment, ignored\r\n"  # a byte-order mark first, then CRLF lines
        b"event:typed\r\nid: 7\r\nretry: 100\r\ndata:  two spaces keep one\r\n\r\n"
        b"data: first\rdata: second\r\r"  # CR alone ends lines too
        b"event: no data, not dispatched\n\n"
        b"data\n\n"  # a field without a colon: the name, an empty value
        b"unknown: field\ndata: x\n\n"
    )
    assert parse(body) == [("typed", " two spaces keep one"), (None, "first\nsecond"), (None, ""),
                           (None, "x")]


def test_a_last_event_without_its_blank_line_counts_only_at_the_clean_end() -> None:
    body = b'data: {"a":1}\n\ndata: {"b":2}'
    assert parse(body, end=False) == [(None, '{"a":1}')]
    assert parse(body) == [(None, '{"a":1}'), (None, '{"b":2}')]


def test_utf8_split_across_reads_is_joined() -> None:
    text = "data: “PotatoLand.” 北京\n\n".encode()
    cut = text.index("北".encode()) + 1
    assert parse(text[:cut], text[cut:]) == [(None, "“PotatoLand.” 北京")]


def test_crlf_split_between_reads_ends_one_line() -> None:
    assert parse(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n") == [(None, "a\nb")]


def test_an_event_above_the_cap_is_refused_before_it_is_whole() -> None:
    parser = SseParser(max_event_bytes=100)
    assert parser.feed(b"data: " + b"x" * 50 + b"\n\n")  # under the cap: fine
    with pytest.raises(EventTooLarge) as refused:
        for _ in range(10):
            parser.feed(b"data: " + b"y" * 30 + b"\n")  # many lines of one event add up
    assert refused.value.cap == 100
    with pytest.raises(EventTooLarge):
        SseParser(max_event_bytes=100).feed(b"data: " + b"z" * 200)  # one line, no end yet


def test_payload_and_type_read_the_data_once_and_never_raise() -> None:
    good = StreamEvent(index=0, event="response.created", data='{"type":"response.in_progress","n":1}')
    assert good.payload == {"type": "response.in_progress", "n": 1}
    assert good.payload is good.payload  # parsed once
    assert good.type == "response.in_progress"  # the data's type wins
    for data in ("[DONE]", "not json", "[1,2]", "1" * 5 + "[" * 100_000):
        bad = StreamEvent(index=1, event="error", data=data)
        assert bad.payload is None and bad.type == "error"
    assert StreamEvent(index=2, event=None, data="{}").type is None


BODY = (
    'event: response.created\ndata: {"type":"response.created","sequence_number":0}\n\n'
    ": keep-alive\n\n"
    'event: response.output_text.delta\ndata: {"delta":"“héllo”\\n","sequence_number":1}\n\n'
    "data: line one\r\ndata: line two\r\n\r\n"
    'event: response.completed\ndata: {"type":"response.completed","sequence_number":3}\n\n'
).encode()


@given(st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=12))
def test_any_split_of_the_bytes_gives_the_same_events(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [BODY[a:b] for a, b in zip([0, *points], [*points, len(BODY)], strict=True)]
    assert parse(*chunks) == parse(BODY)
    assert len(parse(BODY)) == 4
