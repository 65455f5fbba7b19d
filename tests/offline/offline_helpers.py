"""Helpers for the offline stand-in's tests: plain HTTP to it (urllib, blocking), so its
exact status lines, headers and error bodies are what the test sees."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit


def post_json(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:
    """POST ``body`` as JSON (bytes are sent as they are); (status, parsed body or text, headers)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method="POST", headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, _decode(answer.read()), dict(answer.headers)
    except urllib.error.HTTPError as error:
        with error:
            return error.code, _decode(error.read()), dict(error.headers)


def after_turns(count: int, task: str = "go") -> list[dict[str, Any]]:
    """An input that has reached turn ``count + 1``: the task, then ``count`` calls each
    followed by its output (the stand-in reads a request's turn from its context)."""
    items: list[dict[str, Any]] = [{"role": "user", "content": task}]
    for number in range(1, count + 1):
        call_id = f"call_earlier_{number}"
        items.append({"type": "function_call", "call_id": call_id, "name": "fs__read_text_file",
                      "arguments": "{}"})
        items.append({"type": "function_call_output", "call_id": call_id, "output": f"output {number}"})
    return items


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return _decode(answer.read())


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode()


def raw_exchange(base_url: str, request: bytes) -> bytes:
    """Send ``request`` as bytes to the stand-in at ``base_url``; every byte of the answer,
    read until the server closes (the request should say ``Connection: close``)."""
    port = urlsplit(base_url).port
    assert port is not None
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        return b"".join(iter(lambda: sock.recv(65536), b""))
