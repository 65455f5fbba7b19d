"""``CuttingProxy``: a TCP proxy on loopback that breaks one event stream the way a network
failure would: right after the stream's priming event, before anything else of it.

It forwards bytes both ways unchanged, except that the first time the server's side of a
connection carries a priming event (an SSE event with ``retry:``) in its answer to a
request of the method it watches (POST: a request's stream; GET: the standalone one), it
forwards that event up to the end of its HTTP chunk, holds back whatever follows, and
closes both sockets. The client has then seen an event id and nothing more, and must resume the
stream (GET + ``Last-Event-ID``) through the proxy again, which now passes everything.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Final

__all__ = ["CuttingProxy"]

_PRIMING: Final = b"retry:"
_EVENT_END: Final = b"\n\n\r\n"  # an SSE event's end, then its chunk's (toolrelay writes one per chunk)


class CuttingProxy:
    """``with CuttingProxy(port) as proxy``: ``proxy.port`` forwards to ``127.0.0.1:port``."""

    def __init__(self, target_port: int, *, method: str = "POST") -> None:
        self._target = ("127.0.0.1", target_port)
        self._method = method.encode() + b" "
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.connections = 0
        self.cuts = 0
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []

    def __enter__(self) -> CuttingProxy:
        threading.Thread(target=self._accept, name="cutting-proxy", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                _close(sock)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            upstream = socket.create_connection(self._target)
            with self._lock:
                self.connections += 1
                self._sockets += [client, upstream]
            latest = [b""]  # the start of the latest request on this connection
            threading.Thread(target=self._forward, args=(client, upstream, latest), daemon=True).start()
            threading.Thread(target=self._watch, args=(upstream, client, latest), daemon=True).start()

    def _forward(self, source: socket.socket, target: socket.socket, latest: list[bytes]) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                if data[:7].split(b" ", 1)[0].isupper():  # a request line (bodies here are JSON)
                    latest[0] = data[:16]
                target.sendall(data)
        _close(target)

    def _watch(self, server: socket.socket, client: socket.socket, latest: list[bytes]) -> None:
        """Server to client: forward, but cut after the first priming event."""
        pending = b""
        with contextlib.suppress(OSError):
            while data := server.recv(65536):
                if self.cuts or not latest[0].startswith(self._method):
                    client.sendall(pending + data)
                    pending = b""
                    continue
                pending += data
                start = pending.find(_PRIMING)
                if start < 0:  # hold back only a tail that may be the start of "retry:"
                    held = _partial_marker(pending)
                    client.sendall(pending[:len(pending) - held])
                    pending = pending[len(pending) - held:]
                    continue
                end = pending.find(_EVENT_END, start)
                if end >= 0:
                    client.sendall(pending[:end + len(_EVENT_END)])
                    with self._lock:
                        self.cuts += 1
                    break
        _close(client)
        _close(server)


def _partial_marker(data: bytes) -> int:
    """How many bytes at the end of ``data`` may begin the marker ``retry:``."""
    return next((n for n in range(len(_PRIMING) - 1, 0, -1) if data.endswith(_PRIMING[:n])), 0)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
