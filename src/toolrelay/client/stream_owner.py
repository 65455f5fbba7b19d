"""Which of our requests the stream a message arrived on answers (Streamable HTTP).

A POST's response stream carries the answer to its request and whatever the server sends
about that request meanwhile (progress, log messages). The HTTP transport sets this while
it reads such a stream, so a log message is recorded with the call whose stream carried
it. On stdio there is one stream; it stays None.
"""

from __future__ import annotations

from contextvars import ContextVar

from ..protocol.jsonrpc import RequestId

__all__ = ["carried_for"]

carried_for: ContextVar[RequestId | None] = ContextVar("toolrelay_carried_for", default=None)
"""The id of our request whose response stream is being read in this task, if any."""
