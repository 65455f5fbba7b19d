"""In-process MCP servers: a Python ``ToolService`` served to the client with no process.

The client's half (``client/inprocess.py``) knows the server only as a ``MessagePeer``;
this module makes one from ``server.app.ServerSession``, so ``client/`` never imports
the server side. It sits beside the runner in the layers: it may import ``client/``,
``server/`` and ``files/``, and nothing below it imports it.

    config = in_process_file_server(Path("docs"))        # like builtin_file_server, no process
    async with toolrelay.connect([config]) as catalog: ...
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .client.config import ServerConfig
from .client.inprocess import MessagePeer, PeerFactory
from .errors import TransportError, UsageError
from .files import FileService, root_from_argument
from .protocol import jsonrpc
from .protocol.framing import DEFAULT_MAX_MESSAGE_BYTES, LineFramer
from .protocol.jsonrpc import JSONObject
from .server.app import ServerSession, ToolService

__all__ = ["in_process_file_server", "in_process_server"]


class _SessionPeer:
    """A ``ServerSession`` as the client's ``MessagePeer``: lines in, lines out."""

    def __init__(
        self, service: ToolService, send_line: Callable[[bytes], None], max_message_bytes: int
    ) -> None:
        self._framer = LineFramer(max_message_bytes)  # the server's own size cap, as over stdio

        def send(message: JSONObject) -> None:
            send_line(jsonrpc.encode(message))

        self._session = ServerSession(service, send)

    def receive(self, line: bytes) -> None:
        for framed in self._framer.feed(line + b"\n"):
            self._session.receive_line(framed)

    def close(self) -> None:
        self._session.close(TransportError("the client closed the session"))


def in_process_server(
    service: ToolService, *, name: str, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, **options: Any
) -> ServerConfig:
    """A server config that runs ``service`` in this process (``options``: other
    ``ServerConfig`` fields, such as ``call_timeout`` or ``deny``)."""

    def start(send_line: Callable[[bytes], None]) -> MessagePeer:
        return _SessionPeer(service, send_line, max_message_bytes)

    factory: PeerFactory = start
    return ServerConfig(name=name, transport="inprocess", peer_factory=factory,
                        max_message_bytes=max_message_bytes, origin=f"in-process server {service.name}",
                        **options)


def in_process_file_server(*roots: Path, name: str = "fs") -> ServerConfig:
    """toolrelay's read-only file server over ``roots``, in this process: what
    ``builtin_file_server`` runs as ``toolrelay files ROOT``, without the process."""
    try:
        service = FileService([root_from_argument(str(root)) for root in roots])
    except ValueError as exc:  # the CLI's words for a ROOT that does not exist
        raise UsageError(str(exc)) from None
    # its roots are the directories it serves: the client's roots narrow nothing
    return in_process_server(service, name=name, roots=tuple(str(root) for root in roots))
