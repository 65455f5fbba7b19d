"""``POST /v1/responses/input_tokens``: what a request would cost in input tokens, counted
by the endpoint itself (``openai`` ``resources/responses/input_tokens.py``: the body takes
a request's ``model``, ``instructions``, ``tools``, ``input``...; the answer is
``{"object": "response.input_tokens", "input_tokens": N}``). ``toolrelay tools --tokens
exact`` asks it; nothing else does, and nothing here is a run's turn (not recorded).
"""

from __future__ import annotations

import json
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from ..errors import ModelError
from ..protocol import json_depth
from ._http_failures import MapHttpFailures
from .endpoint import ModelEndpoint
from .http import Target
from .http_choice import open_transport

__all__ = ["INPUT_TOKENS_PATH", "count_input_tokens", "input_tokens_url"]

INPUT_TOKENS_PATH: Final = "/input_tokens"
"""Appended to the Responses URL's path (``.../v1/responses/input_tokens``)."""


def input_tokens_url(responses_url: str) -> str:
    parts = urlsplit(responses_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + INPUT_TOKENS_PATH))


async def count_input_tokens(endpoint: ModelEndpoint, body: dict[str, Any], *, timeout: float = 60.0) -> int:
    """The endpoint's count of ``body``'s input tokens; ModelError when it gives none."""
    url = input_tokens_url(endpoint.responses_url)
    content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    http = open_transport(url, timeout=timeout, connect_timeout=min(timeout, 15.0))
    try:
        with MapHttpFailures(url):
            answer = await http.post(Target.parse(url), list(endpoint.request_headers().items()), content)
    finally:
        await http.aclose()
    try:
        said = json_depth.loads(answer.body)
    except (ValueError, UnicodeDecodeError):
        said = None
    count = said.get("input_tokens") if isinstance(said, dict) else None
    if not 200 <= answer.status < 300 or not isinstance(count, int) or isinstance(count, bool):
        shown = answer.body[:200].decode("utf-8", "replace")
        raise ModelError(f"{endpoint.shown_url}{INPUT_TOKENS_PATH} answered HTTP {answer.status} without an "
                         f"input_tokens count: {shown}", status=answer.status)
    return count
