"""The per-session event store behind resumable streams: ids, and the limits on what it
keeps (events, bytes, seconds). The clock is passed in, so no test waits."""

from __future__ import annotations

import pytest

from toolrelay.server.http_streams import EventStore, StreamOptions, parse_event_id


def test_an_event_id_names_its_stream_and_its_place_in_the_session() -> None:
    store = EventStore(StreamOptions())
    first = store.add(1, None, now=0.0)
    second = store.add(2, b"{}", now=0.0)
    third = store.add(1, b"{}", now=0.0)
    assert [first.event_id, second.event_id, third.event_id] == ["1-1", "2-2", "1-3"]
    assert parse_event_id("1-3") == (1, 3)
    assert store.after(1, 1, now=0.0) == [third]  # only its own stream's later events
    assert store.after(2, 0, now=0.0) == [second]


@pytest.mark.parametrize("text", ["", "3", "a-1", "1-", "-1", "1-2-3", " 1 - 2", "1" * 19 + "-1"])
def test_anything_else_is_not_an_event_id(text: str) -> None:
    assert parse_event_id(text) is None


def test_beyond_events_kept_the_oldest_go_and_their_stream_cannot_resume_from_before_them() -> None:
    store = EventStore(StreamOptions(events_kept=3))
    for stream in (1, 1, 2, 2, 2):
        store.add(stream, b"{}", now=0.0)
    assert store.after(1, 0, now=0.0) is None  # stream 1's events 1 and 2 are gone
    assert store.after(1, 2, now=0.0) == []  # after its last event: nothing missed
    assert [e.number for e in store.after(2, 3, now=0.0) or []] == [4, 5]
    assert not store.holds(1) and store.holds(2)


def test_beyond_bytes_kept_the_oldest_go_but_the_newest_stays_whatever_its_size() -> None:
    store = EventStore(StreamOptions(bytes_kept=100))
    store.add(1, b"x" * 60, now=0.0)
    store.add(1, b"y" * 60, now=0.0)  # 120 bytes: the first goes
    assert [e.number for e in store.after(1, 1, now=0.0) or []] == [2]
    assert store.after(1, 0, now=0.0) is None
    huge = store.add(2, b"z" * 500, now=0.0)
    assert store.after(2, 0, now=0.0) == [huge]
    assert not store.holds(1)


def test_events_older_than_seconds_kept_go() -> None:
    store = EventStore(StreamOptions(seconds_kept=60))
    store.add(1, b"{}", now=0.0)
    late = store.add(1, b"{}", now=50.0)
    assert [e.number for e in store.after(1, 0, now=59.0) or []] == [1, 2]
    assert store.after(1, 0, now=61.0) is None  # the first is past 60 s
    assert store.after(1, 1, now=61.0) == [late]
    assert store.after(1, 1, now=111.0) is None  # and then the second
    assert not store.holds(1)


def test_a_stream_answered_whole_keeps_nothing() -> None:
    store = EventStore(StreamOptions())
    store.add(1, b"{}", now=0.0)
    kept = store.add(2, b"{}", now=0.0)
    store.discard(1)
    assert not store.holds(1)
    assert store.after(2, 0, now=0.0) == [kept]
