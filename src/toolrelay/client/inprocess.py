"""The in-process transport: a server that lives in this Python process, no pipe, no socket.

The client half knows the server only as a ``MessagePeer``: it takes our message lines
and gives back its own through the function it was started with. Building one for a
Python ``ToolService`` is ``toolrelay.inprocess_servers``'s job, so this package never imports the
server side. Each direction is handed over on the next event loop turn, as a pipe
would: neither side runs inside the other's send, and the messages are encoded and
decoded like any other transport's, so events and transcripts look the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError, TransportError
from ..protocol import jsonrpc
from ..protocol.framing import LineFramer
from ..protocol.jsonrpc import JSONObject
from ..protocol.param_headers import Annotations
from .config import ServerConfig
from .transport import Inbox, MessagePeer, PeerFactory

if TYPE_CHECKING:
    from .stderr_log import ServerLog

__all__ = ["InProcessTransport", "MessagePeer", "PeerFactory"]  # the two protocols: transport.py


class InProcessTransport:
    """One in-process server; each ``open`` starts a new session with it."""

    pid: int | None = None  # no process, no stderr log
    log: ServerLog | None = None

    def __init__(self, config: ServerConfig, *, log_dir: Path | None = None) -> None:
        if config.peer_factory is None:
            raise ConfigError(f"server {config.name!r}: an in-process server needs a peer_factory")
        self.config = config
        self._start_peer = config.peer_factory
        self._peer: MessagePeer | None = None
        self._inbox: Inbox | None = None
        self._session: object | None = None
        """Stands for the open session: lines still in flight for a closed one are dropped."""
        self._framer = LineFramer(config.max_message_bytes)  # each line is fed whole: no state kept

    async def open(self, inbox: Inbox, *, connection: int) -> None:
        loop = asyncio.get_running_loop()
        session = self._session = object()

        def from_server(line: bytes) -> None:
            loop.call_soon(self._deliver, session, line)

        self._inbox = inbox
        self._peer = self._start_peer(from_server)

    def send(self, message: JSONObject) -> None:
        if self._peer is None:
            raise TransportError(f"connection to server {self.config.name} is closed")
        asyncio.get_running_loop().call_soon(self._hand_over, self._session, jsonrpc.encode(message))

    def _hand_over(self, session: object, line: bytes) -> None:
        if session is self._session and self._peer is not None:
            self._peer.receive(line)

    def _deliver(self, session: object, line: bytes) -> None:
        """A line from the server, through the same size cap as a pipe's."""
        if session is not self._session or self._inbox is None:
            return
        for framed in self._framer.feed(line + b"\n"):
            self._inbox.received(framed)

    def initialized(self, protocol_version: str) -> None:
        """Nothing to do: the session needs no header."""

    def tool_headers(self, marked: Mapping[str, Annotations]) -> None:
        """Nothing to do: no headers in process."""

    async def close(self) -> None:
        peer, self._peer, self._session = self._peer, None, None
        if peer is not None:
            peer.close()
