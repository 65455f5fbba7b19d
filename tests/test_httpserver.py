"""toolrelay's one HTTP server (``httpserver.py``) run by ``ServerThread``, as the offline
stand-in runs it: a handler served from synchronous code, HEAD, a port already taken,
and a stop that ends the connections still open. Raw sockets see the exact bytes."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from toolrelay.errors import TransportError
from toolrelay.httpserver import HttpRequest, HttpResponder, ServerThread


async def echo_path(request: HttpRequest, http: HttpResponder) -> None:
    query = f" ?{request.query}" if request.query else ""
    await http.send(200, [("Content-Type", "text/plain")], f"{request.method} {request.path}{query}".encode())


@pytest.fixture
def port() -> Iterator[int]:
    server = ServerThread(echo_path, max_body_bytes=1024, name="test-httpserver")
    try:
        yield server.start("127.0.0.1", 0)
    finally:
        server.stop()


def exchange(port: int, request: bytes) -> bytes:
    """Send ``request`` and read until the server closes (the requests ask it to)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        return b"".join(iter(lambda: sock.recv(65536), b""))


def test_a_handler_is_served_from_sync_code_in_one_piece(port: int) -> None:
    answer = exchange(port, b"GET /a/b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\ncontent-length: 8\r\nConnection: close\r\n"
    assert answer == head + b"\r\nGET /a/b"


def test_the_query_string_comes_apart_from_the_path_as_sent(port: int) -> None:
    request = b"GET /v1/responses?key=s%20x&d=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    answer = exchange(port, request)
    assert answer.endswith(b"\r\n\r\nGET /v1/responses ?key=s%20x&d=1")


def test_head_gets_the_headers_without_the_body(port: int) -> None:
    answer = exchange(port, b"HEAD /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\ncontent-length: 7\r\nConnection: close\r\n"
    assert answer == head + b"\r\n"  # the length GET would have, and no body


def test_a_port_already_taken_is_a_transport_error(port: int) -> None:
    second = ServerThread(echo_path, max_body_bytes=1024, name="test-httpserver-2")
    taken = rf"^cannot listen on 127\.0\.0\.1:{port}: address already in use"
    with pytest.raises(TransportError, match=taken):
        second.start("127.0.0.1", port)
    second.stop()  # nothing to stop: harmless


def test_stop_closes_idle_keep_alive_connections() -> None:
    server = ServerThread(echo_path, max_body_bytes=1024, name="test-httpserver")
    port = server.start("127.0.0.1", 0)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(65536).endswith(b"GET /x")
        server.stop()
        assert sock.recv(65536) == b""  # the server closed its side
