"""The flood limit on the event stream: what a server sends unasked is recorded up to a
bound per server and time window, the rest counted in one ``mcp_dropped`` event; seq
numbers stay continuous and nothing else (our own messages, answers to our requests,
the run's events) is ever dropped.

The gate is driven with explicit clock values; the real 200,000-notification flood
through ``toolrelay run`` is in tests/loop/test_notification_flood.py.
"""

from __future__ import annotations

from typing import Any

from toolrelay.events import (
    Event,
    EventStream,
    McpDropped,
    McpInvalid,
    McpMessage,
    RunEndEvent,
    ServerExitedEvent,
)
from toolrelay.flood import FloodGate, FloodLimit


def notification(
    server: str = "box", method: str = "notifications/message", direction: str = "in"
) -> McpMessage:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    return McpMessage(role="mcp_notification", direction=direction, server=server, connection=1, mcp_id=None,
                      method=method, message=message)


def answer(mcp_id: int, role: str = "mcp_response") -> McpMessage:
    message = {"jsonrpc": "2.0", "id": mcp_id, "result": {}}
    return McpMessage(role=role, direction="in", server="box", connection=1, mcp_id=mcp_id, method=None,
                      message=message)


def recorded(limit: FloodLimit | None) -> tuple[EventStream, list[Event]]:
    stream = EventStream(flood=limit)
    seen: list[Event] = []
    stream.subscribe(seen.append)
    return stream, seen


def test_a_window_keeps_the_limit_and_counts_the_rest_by_kind() -> None:
    gate = FloodGate(FloodLimit(messages=3, window=10.0))
    kept = [gate.admit("box", 1, "notifications/message", now=100.0 + i / 10)[0] for i in range(5)]
    assert kept == [True, True, True, False, False]
    assert gate.admit("box", 2, "invalid", now=101.0) == (False, None)
    assert gate.admit("other", 1, "notifications/message", now=101.0) == (True, None)  # its own window
    assert gate.due(now=109.9) == []
    [ended] = gate.due(now=110.0)
    assert (ended.server, ended.connection, dict(ended.dropped)) == (
        "box", 2, {"notifications/message": 2, "invalid": 1}
    )
    assert gate.admit("box", 2, "notifications/message", now=110.5) == (True, None)  # a new window
    assert gate.flush() == []  # nothing dropped since: no summary


def test_windows_of_several_servers_end_each_at_its_own_time() -> None:
    gate = FloodGate(FloodLimit(messages=1, window=10.0))
    for server, start in (("a", 0.0), ("b", 4.0)):
        gate.admit(server, 1, "notifications/message", now=start)
        gate.admit(server, 1, "notifications/message", now=start + 1)
    assert [w.server for w in gate.due(now=10.0)] == ["a"]
    assert gate.due(now=13.9) == []
    assert [w.server for w in gate.due(now=14.0)] == ["b"]
    assert gate.due(now=100.0) == []


def test_the_next_message_after_a_window_closes_it() -> None:
    gate = FloodGate(FloodLimit(messages=1, window=5.0))
    gate.admit("box", 1, "notifications/progress", now=0.0)
    gate.admit("box", 1, "notifications/progress", now=1.0)
    admitted, closed = gate.admit("box", 1, "notifications/progress", now=6.0)
    assert admitted and closed is not None and closed.dropped == {"notifications/progress": 1}


def test_the_stream_records_a_flood_as_the_limit_plus_one_count() -> None:
    stream, seen = recorded(FloodLimit(messages=5, window=60.0))
    for _ in range(1000):
        stream.emit(notification())
    stream.emit(McpInvalid(server="box", connection=1, reason="not JSON", preview="debug: hello"))
    stream.emit(answer(99, role="mcp_unpaired"))
    stream.emit(notification(method="notifications/cancelled", direction="out"))  # ours: always kept
    stream.emit(answer(7))  # the answer to a request: always kept
    stream.emit(RunEndEvent(status="completed", reason="done"))
    kinds = [event.event_kind for event in seen]
    assert kinds == ["mcp_notification"] * 6 + ["mcp_response", "mcp_dropped", "run_end"]
    dropped = seen[-2]
    assert isinstance(dropped, McpDropped)
    assert dropped.to_record() | {"time": 0} == {
        "seq": 8, "time": 0, "kind": "mcp_dropped", "server": "box", "connection": 1, "count": 997,
        "methods": {"notifications/message": 995, "invalid": 1, "unpaired": 1}, "limit": 5, "window": 60.0,
    }
    assert [event.seq for event in seen] == list(range(1, 10))  # no gap: verify's event order holds


def test_a_server_exit_ends_its_window_and_no_limit_records_everything() -> None:
    stream, seen = recorded(FloodLimit(messages=1, window=60.0))
    for server in ("a", "b", "a", "b"):
        stream.emit(notification(server))
    stream.emit(ServerExitedEvent(server="a", connection=1, returncode=0, stderr_tail="", expected=True))
    assert [(e.event_kind, getattr(e, "server", None)) for e in seen] == [
        ("mcp_notification", "a"), ("mcp_notification", "b"), ("mcp_dropped", "a"), ("server_exited", "a")
    ]
    unbounded, everything = recorded(None)
    for _ in range(500):
        unbounded.emit(notification())
    assert len(everything) == 500
