"""What one client may cost the HTTP server (``httpserver.ConnectionLimits``): a request
head that trickles in is cut off at the header deadline, a silent keep-alive connection is
closed at the idle timeout, connections past the cap are refused with a clear 503 while
the open ones keep working, and running out of file descriptors is logged quietly and
recovered from. Raw sockets against real loopback servers; the descriptor limit is set
in a real subprocess."""

from __future__ import annotations

import contextlib
import re
import resource
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolrelay.httpserver import ConnectionLimits, HttpRequest, HttpResponder, ServerThread

REQUEST = b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n"


async def echo_path(request: HttpRequest, http: HttpResponder) -> None:
    await http.send(200, [("Content-Type", "text/plain")], f"{request.method} {request.path}".encode())


@contextlib.contextmanager
def serving(limits: ConnectionLimits) -> Iterator[int]:
    server = ServerThread(echo_path, max_body_bytes=1024, name="test-limits", limits=limits)
    try:
        yield server.start("127.0.0.1", 0)
    finally:
        server.stop()


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def ask(sock: socket.socket) -> bytes:
    """One keep-alive request; its whole answer (the body is ``GET /x``)."""
    sock.sendall(REQUEST)
    answer = b""
    while not answer.endswith(b"GET /x"):
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection after {answer!r}"
        answer += chunk
    return answer


def read_to_end(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (a reset after its answer ends it too)."""
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            data += chunk
    return data


def trickle_until_closed(
    sock: socket.socket, data: bytes, pause: float, give_up: float
) -> tuple[float, bytes]:
    """Send ``data`` one byte at a time, ``pause`` apart (a slowloris client), until the
    server closes the connection; seconds that took, and what the server said."""
    started = time.monotonic()
    for byte in data:
        if time.monotonic() - started > give_up:
            break
        try:
            sock.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            break
        readable, _, _ = select.select([sock], [], [], pause)
        if readable:
            break
    return time.monotonic() - started, read_to_end(sock)


@pytest.mark.parametrize("trickle", [True, False], ids=["trickling", "silent"])
def test_a_request_head_is_cut_off_at_the_header_deadline(trickle: bool) -> None:
    with serving(ConnectionLimits(header_timeout=1.0, idle_timeout=60)) as port, connect(port) as sock:
        endless = b"GET /x HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"z" * 10_000 if trickle else b""
        if trickle:
            took, said = trickle_until_closed(sock, endless, pause=0.05, give_up=15)
        else:
            started = time.monotonic()
            said = read_to_end(sock)
            took = time.monotonic() - started
        assert 0.9 < took < 8, f"closed after {took:.1f} s"
        assert said.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
        assert said.endswith(b"\r\n\r\nrequest timeout: the request head was not complete within 1 s\n")
        with connect(port) as other:  # the server itself is fine
            assert ask(other).startswith(b"HTTP/1.1 200 OK\r\n")


def test_a_body_that_stops_arriving_is_cut_off_at_the_idle_timeout() -> None:
    with serving(ConnectionLimits(header_timeout=30, idle_timeout=1.0)) as port, connect(port) as sock:
        sock.sendall(b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"partial\":")
        started = time.monotonic()
        said = read_to_end(sock)
        assert 0.9 < time.monotonic() - started < 8
        assert said.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
        assert said.endswith(b"request timeout: no part of the request body arrived for 1 s\n")


def test_an_idle_keep_alive_connection_is_closed_and_a_busy_one_is_not() -> None:
    with serving(ConnectionLimits(header_timeout=30, idle_timeout=1.0)) as port, connect(port) as sock:
        assert ask(sock).startswith(b"HTTP/1.1 200 OK\r\n")
        for _ in range(3):  # requests closer together than the idle timeout: still open
            assert ask(sock).startswith(b"HTTP/1.1 200 OK\r\n")
        started = time.monotonic()
        assert read_to_end(sock) == b""  # closed quietly: no 408 a client could mistake for an answer
        assert 0.9 < time.monotonic() - started < 8


def test_the_257th_connection_is_refused_clearly_while_the_open_ones_work() -> None:
    limits = ConnectionLimits()
    assert limits.max_connections == 256
    with serving(limits) as port, contextlib.ExitStack() as stack:
        open_ones = [stack.enter_context(connect(port)) for _ in range(256)]
        for sock in open_ones:  # each one served: each one counted
            assert ask(sock).startswith(b"HTTP/1.1 200 OK\r\n")
        with connect(port) as extra:
            extra.sendall(REQUEST)
            refused = read_to_end(extra)
        assert refused.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
        assert b"\r\nconnection: close\r\n" in refused and b"\r\nretry-after: 1\r\n" in refused
        assert refused.endswith(b"\r\n\r\ntoo many open connections (256); try again later\n")
        for sock in open_ones[::16]:
            assert ask(sock).startswith(b"HTTP/1.1 200 OK\r\n")
        open_ones.pop().close()  # room for one more
        deadline = time.monotonic() + 10
        while True:
            with connect(port) as late:
                late.sendall(REQUEST)
                answer = late.recv(65536)
            if answer.startswith(b"HTTP/1.1 200 OK\r\n") or time.monotonic() > deadline:
                break
        assert answer.startswith(b"HTTP/1.1 200 OK\r\n")


def _limited_server(root: Path, stderr: Path) -> subprocess.Popen[bytes]:
    """``toolrelay files --http 0`` allowed 64 open files."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    with stderr.open("wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "toolrelay", "files", str(root), "--http", "0"],
            stdout=subprocess.DEVNULL, stderr=log, preexec_fn=limit,
        )


def _wait_for(pattern: str, path: Path, timeout: float = 20) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, path.read_text(errors="replace"))
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{pattern!r} never appeared in: {path.read_text(errors='replace')[-2000:]}")


def test_running_out_of_file_descriptors_is_logged_quietly_and_recovered_from(tmp_path: Path) -> None:
    stderr = tmp_path / "stderr.txt"
    proc = _limited_server(tmp_path, stderr)
    try:
        port = int(_wait_for(r"http://127\.0\.0\.1:(\d+)/mcp", stderr).group(1))
        with contextlib.ExitStack() as stack:
            for _ in range(100):  # more than 64 descriptors: accept fails, the rest wait in the backlog
                stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=10))
            _wait_for("cannot accept connections", stderr)
            size_then = stderr.stat().st_size
            time.sleep(3)  # a window to measure: the pressure goes on, the log must not
            flood = stderr.read_text(errors="replace")
            assert stderr.stat().st_size - size_then < 200, flood[-2000:]
            assert "Traceback" not in flood and flood.count("cannot accept connections") == 1, flood
        deadline = time.monotonic() + 15  # the clients left: their descriptors come back
        while True:
            with connect(port) as sock:
                sock.sendall(b"OPTIONS /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                sock.settimeout(2)
                try:
                    answer = sock.recv(65536)
                except TimeoutError:
                    answer = b""
            if answer.startswith(b"HTTP/1.1 204") or time.monotonic() > deadline:
                break
        assert answer.startswith(b"HTTP/1.1 204"), answer
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(10)
