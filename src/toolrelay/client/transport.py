"""The one contract every client transport keeps (stdio, Streamable HTTP, in-process).

A transport carries JSON-RPC messages between toolrelay and one server and nothing
more: ids, pairing, timeouts, events and restarts belong to the connection above it.
One transport object serves one configured server for the connection's whole life;
each ``open`` starts a fresh channel (a new process, a new HTTP session) and the
connection numbers them.

Sending is ``send(message)``: it never waits; a failure that belongs to one request
reaches the inbox later. Receiving is the ``Inbox`` handed to ``open``: the transport
calls it for everything that comes back, and tells it, in the same words for every
transport, that one request can get no answer, that the channel ended (and why), or
that the server forgot the session. The transport never reaches into the connection.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..errors import ToolrelayError, TransportError
from ..events import Event
from ..protocol.framing import Oversized
from ..protocol.jsonrpc import JSONObject, RequestId
from ..protocol.param_headers import Annotations

if TYPE_CHECKING:
    from .stderr_log import ServerLog

__all__ = ["ChannelEnd", "ClientTransport", "Inbox", "MessagePeer", "PeerFactory"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelEnd:
    """How a channel ended, as its transport tells it."""

    error: TransportError
    """What every request still waiting (and any sent later) fails with."""
    reason: str
    """The words for the notice when the next channel starts: ``exited (code 1)``."""
    returncode: int | None = None
    """A process transport's exit code (None if unknown or not a process)."""
    stderr_tail: str = ""
    """A process transport's last stderr lines, secrets redacted."""


class Inbox(Protocol):
    """What a transport hands what it receives to (the connection implements it)."""

    def received(self, data: bytes | Oversized, *, carrier: RequestId | None = None) -> None:
        """One framed message from the server: JSON text, or the marker of one above the size cap.

        ``carrier``: our request whose response stream carried it (Streamable HTTP: a log
        message there belongs to that call); None on stdio and outside any request's stream."""

    def awaiting(self, mcp_id: RequestId) -> bool:
        """Whether our request ``mcp_id`` still waits for its answer (a stream may stop then)."""

    def failed(self, mcp_id: RequestId, error: ToolrelayError) -> None:
        """Our request ``mcp_id`` can get no answer (its POST failed, its answer was too large)."""

    def notice(self, text: str, *, level: str = "warning") -> None:
        """Something the user should hear of that no request's answer will say: a failure
        that belongs to no request (``warning``), or what the transport did about one
        (``info``: it reconnected to resume a stream)."""

    def ended(self, end: ChannelEnd) -> None:
        """The channel is over (the process exited). Told at most once per ``open``; a
        channel that ends only because ``close`` was called need not tell it."""

    def emit(self, event: Event) -> None:
        """An event of the transport's own (an OAuth sign-in's exchanges and outcome)."""

    async def session_forgotten(self) -> None:
        """The server no longer knows our session: run a fresh handshake on this channel,
        raising ToolrelayError if that failed. Only session-keeping transports (HTTP) ask."""


class ClientTransport(Protocol):
    """One server's channel: open, send, close; what comes back goes to the Inbox."""

    @property
    def pid(self) -> int | None:
        """The server's process id, for transports that run a process (else None)."""

    @property
    def log(self) -> ServerLog | None:
        """The server's stderr log, for transports that run a process (else None)."""

    async def open(self, inbox: Inbox, *, connection: int) -> None:
        """Start channel number ``connection`` (the handshake is the connection's);
        TransportError naming the command or URL if it cannot start."""

    def send(self, message: JSONObject) -> None:
        """Send one message; TransportError if the channel is not open."""

    def initialized(self, protocol_version: str) -> None:
        """The handshake agreed on ``protocol_version`` (HTTP sends it as a header)."""

    def tool_headers(self, marked: Mapping[str, Annotations]) -> None:
        """2026-07-28: each listed tool's ``x-mcp-header`` parameters (HTTP mirrors them into
        its calls' ``Mcp-Param-*`` headers; the others carry no headers)."""

    async def close(self) -> None:
        """End the channel and release what it holds; safe to call twice."""


class MessagePeer(Protocol):
    """The server half of an in-process session (``inprocess.py``; built by
    ``toolrelay.inprocess_servers``)."""

    def receive(self, line: bytes) -> None:
        """One message line from the client (JSON text, no newline)."""

    def close(self) -> None:
        """The client left: fail what is pending, cancel what runs."""


PeerFactory = Callable[[Callable[[bytes], None]], MessagePeer]
"""Starts the server half of a session, given the function that carries its lines to us."""
