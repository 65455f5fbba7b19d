"""Helpers for the model client's tests: a well-formed answer, a closed port, and the
shared helpers.

``CannedEndpoint`` (``testkit.fake_http``) answers each request with the next canned
answer (status, headers, body) and records what it received, exactly: the hosted
endpoints' failures that cannot be produced here, met by the client over real HTTP.
"""

from __future__ import annotations

import socket
from typing import Any

from responses_helpers import Recorder, read_tool, recorded_stream, run
from testkit.fake_http import Canned, CannedEndpoint, Seen
from toolrelay.offline.wire import message_item, response_object

__all__ = [
    "Canned",
    "CannedEndpoint",
    "Recorder",
    "Seen",
    "closed_port",
    "read_tool",
    "recorded_stream",
    "run",
    "valid_response",
]

def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def valid_response(text: str = "done") -> dict[str, Any]:
    """A well-formed Responses object with one message."""
    return response_object(
        response_id="resp_canned",
        created_at=1,
        request={"model": "m"},
        output=[message_item("msg_canned", text)],
    )
