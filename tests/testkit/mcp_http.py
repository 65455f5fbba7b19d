"""toolrelay's own Streamable HTTP MCP endpoint as a test server: in this process (on
``toolrelay.httpserver.ServerThread``, the thread every in-process endpoint runs on), or
as a subprocess (``servers/echo_http_server.py``, ``toolrelay files --http``).

In-process, the test holds the service, so it can wait on what the service saw
(``EchoService.calls``) instead of sleeping.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from toolrelay.httpserver import ServerThread
from toolrelay.protocol.framing import DEFAULT_MAX_MESSAGE_BYTES
from toolrelay.server.app import ToolService
from toolrelay.server.http import McpEndpoint, endpoint_url
from toolrelay.server.http_rules import AccessPolicy
from toolrelay.server.http_streams import StreamOptions

from .processes import spawned
from .servers import ECHO_HTTP_SERVER
from .servers.echo_service import EchoService

__all__ = ["EchoService", "McpHttpThread", "echo_http_process", "files_http_process", "running_server"]


class McpHttpThread:
    """``service`` (default: a new ``EchoService``) on ``http://HOST:PORT/mcp``, served by
    ``McpEndpoint`` on its own event loop in a daemon thread. ``start`` returns the URL.

    ``streams``: resumption limits and polling (``StreamOptions``); ``thread_options`` go to
    ``toolrelay.httpserver.ServerThread`` as they are."""

    def __init__(
        self,
        service: ToolService | None = None,
        *,
        host: str = "127.0.0.1",
        token: str | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        allowed_origins: Sequence[str] = (),
        streams: StreamOptions | None = None,
        **thread_options: Any,
    ) -> None:
        self.service = service if service is not None else EchoService()
        self._host = host.strip("[]")
        policy = AccessPolicy.build(self._host, token, allowed_origins)
        endpoint = McpEndpoint(self.service, policy, max_message_bytes, streams)
        self._thread = ServerThread(
            endpoint.handle, max_body_bytes=max_message_bytes, name="test-mcp-http", **thread_options
        )

    def start(self) -> str:
        return endpoint_url(self._host, self._thread.start(self._host, 0))

    def stop(self) -> None:
        """Close the listener and every connection; calls still running are cancelled."""
        self._thread.stop()


@contextmanager
def running_server(service: ToolService | None = None, **options: Any) -> Iterator[str]:
    """``McpHttpThread(service, **options)`` for the ``with`` block; yields its URL."""
    server = McpHttpThread(service, **options)
    url = server.start()
    try:
        yield url
    finally:
        server.stop()


@contextmanager
def echo_http_process(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``servers/echo_http_server.py ARGS`` as a subprocess; yields (url, process); stops it
    with SIGTERM (and kills what is left)."""
    with spawned([sys.executable, str(ECHO_HTTP_SERVER), *args],
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), f"no URL from the server: {proc.stderr.read()}"
        yield url, proc
        proc.terminate()
        proc.wait(10)


@contextmanager
def files_http_process(root: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``toolrelay files ROOT --http 0 ARGS`` as a subprocess; yields its URL; stops it with SIGINT."""
    command = [sys.executable, "-m", "toolrelay", "files", str(root), "--http", "0", *args]
    with spawned(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env) as proc:
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:  # the URL is announced on stderr
            seen.append(line)
            if found := re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line):
                break
        else:
            raise AssertionError(f"toolrelay files --http printed no URL: {''.join(seen)}")
        yield found.group(1)
        proc.send_signal(signal.SIGINT)  # Ctrl-C, the way a user stops it
        proc.wait(30)  # not what these tests judge: a loaded machine may take a while
