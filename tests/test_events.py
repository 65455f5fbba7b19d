"""The event stream: subscribers, the active flag producers check, sequence stamps."""

from __future__ import annotations

from toolrelay.events import Event, EventStream, Notice


def test_active_follows_subscribe_and_unsubscribe() -> None:
    stream = EventStream()
    seen: list[Event] = []
    assert not stream.active
    stream.emit(Notice(level="info", text="nobody listens"))
    unsubscribe = stream.subscribe(seen.append)
    assert stream.active
    stream.emit(Notice(level="info", text="heard"))
    unsubscribe()
    unsubscribe()  # twice is harmless
    assert not stream.active
    stream.emit(Notice(level="info", text="gone"))
    assert [(e.seq, e.text) for e in seen] == [(1, "heard")]  # type: ignore[attr-defined]


def test_a_subscriber_added_during_an_emit_hears_from_the_next_event_on() -> None:
    stream = EventStream()
    late: list[str] = []
    early: list[str] = []

    def first(event: Event) -> None:
        early.append(event.text)  # type: ignore[attr-defined]
        if len(early) == 1:
            stream.subscribe(lambda e: late.append(e.text))  # type: ignore[attr-defined]

    stream.subscribe(first)
    stream.emit(Notice(level="info", text="one"))
    stream.emit(Notice(level="info", text="two"))
    assert (early, late) == (["one", "two"], ["two"])
