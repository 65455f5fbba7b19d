"""The Responses API HTTP client: one request body out, one Response object back.

toolrelay builds the request body itself and serialises it once; those exact bytes are
posted and the exact bytes of the answer are kept (``ModelReply.raw``), so the transcript
shows what went over the wire, not an SDK's idea of it. Every attempt is an event:
``ModelRequestEvent`` before (the body dict that was serialised, the URL without
secrets) and ``ModelResponseEvent`` after (status, parsed body or text). Credentials
travel only in headers, and headers are never recorded.

Retries follow ``retry.py``; the meaning of an error answer follows ``failures.py``. A
failed request raises ``ModelError`` (exit code 3) with the API's own message, or
``ModelFeatureUnsupported`` naming the option that avoids the missing feature. The bytes
travel over ``http.py``'s lean HTTP/1.1 client, or httpx2 when a proxy applies
(``transport.py``); their failures become ``errors.py`` errors at one boundary,
``MapHttpFailures`` around the post (``ModelUnreachable`` is retried; an unreadable
answer or an unsendable request is not).
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final, cast
from urllib.parse import unquote, urlsplit

from .. import redaction
from ..errors import ModelError, ModelUnreachable
from ..events import EventStream, ModelRequestEvent, ModelResponseEvent, Notice
from ._http_failures import MapHttpFailures
from .endpoint import ModelEndpoint
from .failures import check_reply, classify_failure
from .http import Target
from .retry import RETRY_STATUSES, backoff_delay, retry_wait
from .transport import open_transport

__all__ = ["ModelEndpoint", "ModelReply", "ResponsesClient"]

REDACTED: Final = redaction.REDACTED.encode()
CONNECT_TIMEOUT: Final = 15.0


@dataclass(slots=True, kw_only=True)
class ModelReply:
    """A Responses object as received."""

    status: int
    body: dict[str, Any]
    elapsed: float
    """Seconds of the successful attempt, from sending to the last byte of the answer."""
    raw: bytes
    """The answer's exact bytes."""
    request_raw: bytes = b""
    """The exact bytes that were posted."""
    attempts: int = 1


@dataclass(slots=True)
class _Answer:
    status: int
    headers: dict[str, str]
    """Names lower-case."""
    raw: bytes
    body: Any
    """Parsed JSON, or the text when it is not JSON (secrets redacted)."""
    elapsed: float


class ResponsesClient:
    """Posts request bodies to ``{base_url}/responses``; use as ``async with``."""

    def __init__(
        self,
        endpoint: ModelEndpoint,
        *,
        events: EventStream,
        timeout: float = 120.0,
        max_retries: int = 4,
        backoff: float = 0.5,
    ) -> None:
        self.endpoint = endpoint
        self.url = endpoint.shown_url
        """The URL as recorded and printed (no secrets)."""
        self._events = events
        self._timeout = timeout
        self._max_retries = max(max_retries, 0)
        self._backoff = backoff
        self._target = Target.parse(endpoint.responses_url)
        self._map_failures = MapHttpFailures(self.url)
        self._headers = _request_headers(endpoint)
        self._secret = endpoint.api_key.encode() if endpoint.api_key else None
        self._warned = False
        self._answered = False
        """Whether this URL has answered a 2xx: a later 404 is then never a missing endpoint."""
        self._http = open_transport(
            endpoint.responses_url, timeout=timeout, connect_timeout=min(timeout, CONNECT_TIMEOUT)
        )

    async def __aenter__(self) -> ResponsesClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def create(self, body: dict[str, Any], *, turn: int) -> ModelReply:
        """POST ``body`` (serialised once); the Response object, or ``ModelError``."""
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        self._warn_about_cleartext_key()
        attempt = 0
        while True:
            attempt += 1
            self._events.emit(ModelRequestEvent(turn=turn, url=self.url, body=body, attempt=attempt))
            try:
                answer = await self._send(content)
            except ModelUnreachable as unreachable:  # other ModelErrors would fail again: raised
                if attempt > self._max_retries:
                    raise _tried(unreachable, attempt) from unreachable.__cause__
                await self._pause(backoff_delay(attempt, self._backoff), attempt, unreachable.reason)
                continue
            self._events.emit(ModelResponseEvent(turn=turn, status=answer.status, body=answer.body,
                                                 elapsed=round(answer.elapsed, 6), attempt=attempt))
            if 200 <= answer.status < 300:
                self._answered = True
                return self._reply(answer, body, content, attempt)
            if answer.status in RETRY_STATUSES and attempt <= self._max_retries:
                wait = retry_wait(answer.headers, attempt, self._backoff)
                await self._pause(wait, attempt, f"HTTP {answer.status}")
                continue
            raise self._failure(answer, body, attempt)

    async def _send(self, content: bytes) -> _Answer:
        started = time.perf_counter()
        with self._map_failures:
            response = await self._http.post(self._target, self._headers, content)
        elapsed = time.perf_counter() - started
        raw = response.body
        shown = raw.replace(self._secret, REDACTED) if self._secret and self._secret in raw else raw
        return _Answer(response.status, response.headers, raw, _parse(shown), elapsed)

    def _reply(self, answer: _Answer, body: dict[str, Any], content: bytes, attempt: int) -> ModelReply:
        problem = check_reply(answer.body, body)
        if problem is not None:
            raise problem
        body_dict = cast(dict[str, Any], answer.body)
        return ModelReply(status=answer.status, body=body_dict, elapsed=answer.elapsed, raw=answer.raw,
                          request_raw=content, attempts=attempt)

    def _failure(self, answer: _Answer, body: dict[str, Any], attempt: int) -> ModelError:
        error = classify_failure(
            answer.status, answer.body, body, url=self.url, answered_before=self._answered
        )
        notes = []
        if 300 <= answer.status < 400 and answer.headers.get("location"):
            notes.append(f"it redirects to {answer.headers['location']}; use that URL")
        if attempt > 1:
            notes.append(f"tried {attempt} times")
        if not notes:
            return error
        return type(error)(f"{error} ({'; '.join(notes)})", error.status)

    async def _pause(self, seconds: float, attempt: int, why: str) -> None:
        text = f"model request attempt {attempt} failed ({why}); retrying in {seconds:.2f} s"
        self._events.emit(Notice(level="warning", text=text))
        await asyncio.sleep(seconds)

    def _warn_about_cleartext_key(self) -> None:
        if self._warned or not self.endpoint.sends_key_in_clear:
            return
        self._warned = True
        host = urlsplit(self.endpoint.base_url).hostname
        text = f"the API key is sent to {host} over plain http; use https"
        self._events.emit(Notice(level="warning", text=text))


def _request_headers(endpoint: ModelEndpoint) -> list[tuple[str, str]]:
    """The headers of every request, built once; user info in the URL becomes Basic auth."""
    headers = endpoint.request_headers()
    parts = urlsplit(endpoint.base_url)
    if parts.username is not None and not any(name.lower() == "authorization" for name in headers):
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    return list(headers.items())


def _parse(raw: bytes) -> Any:
    """JSON when the answer is JSON, else its text (HTML error pages, plain-text 404s)."""
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return raw.decode("utf-8", errors="replace")


def _tried(error: ModelUnreachable, attempt: int) -> ModelUnreachable:
    """The last attempt's error, saying how many attempts were made."""
    if attempt == 1:
        return error
    return type(error)(f"{error} (tried {attempt} times)", error.status, reason=error.reason)
