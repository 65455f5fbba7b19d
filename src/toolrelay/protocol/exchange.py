"""One MCP request and its answer, as they crossed the wire: what the live peer settles and
what ``verify`` rebuilds from a transcript (sans-IO, so reading a transcript back needs no
event loop)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import RpcError
from . import request_envelope
from .jsonrpc import ErrorResponse, JSONObject, RequestId, Response

__all__ = ["Exchange", "Sent", "input_required"]


@dataclass(slots=True)
class Exchange:
    """One request and its answer, exactly as they crossed the wire."""

    mcp_id: RequestId
    method: str
    request: JSONObject
    response: JSONObject | None = None
    result: JSONObject | None = None
    error: ErrorResponse | None = None
    started: float = field(default_factory=time.monotonic)
    elapsed: float = 0.0

    def settle(self, message: Response | ErrorResponse) -> None:
        """Record the answer. The live peer and ``verify`` (replaying a transcript) both
        use this one function, so a recorded exchange is read exactly as it was live."""
        self.response = message.raw
        if isinstance(message, Response):
            self.result = message.result
        else:
            self.error = message

    def raise_for_error(self) -> JSONObject:
        """The result, or RpcError for an error response."""
        if self.error is not None:
            raise RpcError(self.error.code, self.error.message, self.error.data)
        assert self.result is not None
        return self.result


Sent = Callable[[Exchange], None]
"""Told a request once it is on the wire (``Peer.call``'s ``on_sent``). A cancellation
carries no value, so this is how a caller cancelled mid-request learns which request it
abandoned (its id, for the record)."""


def input_required(exchange: Exchange) -> JSONObject | None:
    """The exchange's result when it is ``input_required`` (MCP 2026-07-28: the server asks
    the client for input before it answers), else None."""
    result = exchange.result
    kind = result.get(request_envelope.RESULT_TYPE) if isinstance(result, dict) else None
    if kind == request_envelope.INPUT_REQUIRED:
        return result
    return None
