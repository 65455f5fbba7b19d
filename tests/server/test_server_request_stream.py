"""A 2026-07-28 request's own stream (``server/request_stream.py``) keeps the revision's
rules whatever a service sends on it: progress only for a request with a ``progressToken``
(and with that token), log messages only for a request that named a level, at that level
and above, and nothing else."""

from __future__ import annotations

from typing import Any

from toolrelay.protocol.jsonrpc import Request
from toolrelay.server.request_stream import RequestStream

LOG_LEVEL = "io.modelcontextprotocol/logLevel"


def _stream(meta: dict[str, Any]) -> tuple[RequestStream, list[dict[str, Any]]]:
    params = {"name": "t", "arguments": {}, "_meta": meta}
    request = Request(id=1, method="tools/call", params=params,
                      raw={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    sent: list[dict[str, Any]] = []
    return RequestStream.of(request, sent.append), sent


def test_a_request_that_asks_for_nothing_is_sent_nothing() -> None:
    stream, sent = _stream({})
    assert stream.notify("notifications/progress", {"progressToken": "x", "progress": 1}) is None
    assert stream.notify("notifications/message", {"level": "emergency", "data": "!"}) is None
    assert sent == []


def test_progress_carries_the_requests_token_and_logs_keep_its_level() -> None:
    stream, sent = _stream({"progressToken": 7, LOG_LEVEL: "warning"})
    stream.notify("notifications/progress", {"progressToken": "upstream-1", "progress": 1, "total": 2})
    stream.notify("notifications/message", {"level": "info", "data": "below"})
    stream.notify("notifications/message", {"level": "error", "data": "kept"})
    stream.notify("notifications/tools/list_changed")  # never on a request's stream
    assert sent == [
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 7, "progress": 1,
                                                                          "total": 2}},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "error", "data": "kept"}},
    ]


def test_an_unknown_level_asks_for_no_log_messages() -> None:
    stream, sent = _stream({LOG_LEVEL: "loud", "progressToken": True})  # a bool is no token either
    assert stream.log_level is None and stream.progress_token is None
    stream.notify("notifications/message", {"level": "error", "data": "x"})
    assert sent == []
