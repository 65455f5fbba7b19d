"""The Responses API HTTP client: one request body out, one Response object back, whole or
streamed.

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
(``http_choice.py``); their failures become ``errors.py`` errors at one boundary,
``MapHttpFailures`` around the post (``ModelUnreachable`` is retried; an unreadable
answer or an unsendable request is not).

**Streaming.** A body with ``stream: true`` is answered with server-sent events, read as
they arrive (``streaming.py``): each is recorded (a ``ModelStreamEvent``), assembled
(``protocol.stream``), and its updates go to ``create``'s ``on_update`` at once; the
reply's body is the Response the stream made (``ModelReply.streamed``, ``.assembled``),
and one ``ModelResponseEvent`` per attempt follows the stream. An endpoint that answers
JSON anyway gets a normal reply (``streamed`` false); one whose error names ``stream``
raises ``ModelFeatureUnsupported`` with ``feature == "stream"``. A stream cut before it
said anything (only created / in_progress / queued) is asked again like a 5xx; one cut
later raises ``ModelStreamCut``: text may be on screen and calls may have run, so it is
never repeated blindly.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final, Self, cast
from urllib.parse import unquote, urlsplit

from .. import redaction
from ..errors import ModelError, ModelFeatureUnsupported, ModelStreamCut, ModelTimeout, ModelUnreachable
from ..events import EventStream, ModelRequestEvent, ModelResponseEvent, Notice
from ..protocol import json_depth
from ..protocol.responses import DIALECT
from ..protocol.sse import DEFAULT_MAX_EVENT_BYTES
from ..protocol.stream import StreamAssembler
from ._http_failures import MapHttpFailures
from .endpoint import ModelEndpoint
from .failures import check_reply, classify_failure
from .http import Target
from .http_choice import AnswerStream, open_transport
from .reply import ModelReply, OnUpdate
from .retry import RETRY_STATUSES, backoff_delay, retry_wait
from .streaming import MAX_STREAM_BYTES, StreamAssembling, StreamRead, StreamReader, one_piece

__all__ = ["ModelEndpoint", "ModelReply", "ResponsesClient"]

REDACTED: Final = redaction.REDACTED.encode()
CONNECT_TIMEOUT: Final = 15.0
EVENT_STREAM: Final = "text/event-stream"
_SSE_STARTS: Final = (b"event:", b"data:", b":")
"""How an SSE body sent without its content type begins."""
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""The request bodies' encoder, made once (``json.dumps`` with options builds one per call)."""


@dataclass(slots=True)
class _Answer:
    status: int
    headers: dict[str, str]
    """Names lower-case."""
    raw: bytes
    body: Any
    """Parsed JSON, or the text when it is not JSON (secrets redacted)."""
    elapsed: float
    stream: StreamRead | None = None
    """The stream it was, when it was one."""


class ResponsesClient:
    """The Responses adapter of the model seam (``reply.ModelClient``): posts request
    bodies to ``{base_url}/responses``; use as ``async with``."""

    dialect: str = DIALECT

    def __init__(
        self,
        endpoint: ModelEndpoint,
        *,
        events: EventStream,
        timeout: float = 120.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        max_stream_bytes: int = MAX_STREAM_BYTES,
    ) -> None:
        self.endpoint = endpoint
        self.url = self._shown_url(endpoint)
        """The URL as recorded and printed (no secrets)."""
        self._events = events
        self._timeout = timeout
        self._max_retries = max(max_retries, 0)
        self._backoff = backoff
        self._max_event_bytes = max_event_bytes
        self._max_stream_bytes = max_stream_bytes
        self._target = Target.parse(self._post_url(endpoint))
        self._map_failures = MapHttpFailures(self.url)
        self._headers = _request_headers(endpoint)
        self._stream_headers = [(name, value) for name, value in self._headers if name.lower() != "accept"]
        self._stream_headers.append(("Accept", f"{EVENT_STREAM}, application/json"))
        key = endpoint.api_key
        # a key too short to be a secret ("x" for a local endpoint) would blank out its letters
        # in the answer the loop reads, a call's arguments included (redaction.MIN_SECRET_LENGTH)
        self._shown_key = key if key and redaction.worth_redacting(key) else None
        self._secret = self._shown_key.encode() if self._shown_key else None
        self._warned = False
        self._answered = False
        """Whether this URL has answered a 2xx: a later 404 is then never a missing endpoint."""
        self._paused_until = 0.0
        """Until when (loop time) every request of this client waits: a rate limit or an
        overload said to one request holds back all that share the client (a batch's)."""
        self._http = open_transport(
            self._post_url(endpoint), timeout=timeout, connect_timeout=min(timeout, CONNECT_TIMEOUT)
        )

    async def __aenter__(self) -> Self:
        return self

    def _post_url(self, endpoint: ModelEndpoint) -> str:
        """Where this dialect posts (an adapter of another dialect overrides it)."""
        return endpoint.responses_url

    def _shown_url(self, endpoint: ModelEndpoint) -> str:
        return endpoint.shown_url

    def _wire_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body as this dialect sends it (the loop's Responses body, unchanged here)."""
        return body

    def _assembler(self) -> StreamAssembling:
        return StreamAssembler()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def create(
        self, body: dict[str, Any], *, turn: int, on_update: OnUpdate | None = None
    ) -> ModelReply:
        """POST ``body`` (serialised once); the Response object, or ``ModelError``.

        With ``stream: true`` in ``body``, ``on_update`` gets each update of the stream as
        it arrives (see the module docstring); it is called inside the read loop, so it
        must not block."""
        body = self._wire_body(body)
        content = _ENCODER.encode(body).encode()
        digest = ""
        streaming = body.get("stream") is True
        self._warn_about_cleartext_key()
        attempt = 0
        while True:
            attempt += 1
            if self._paused_until:
                await self._wait_out_pause()
            if self._events.active:  # the record is built only for someone who listens
                digest = digest or hashlib.sha256(content).hexdigest()  # a rebuilt body is checked by it
                self._events.emit(ModelRequestEvent(turn=turn, url=self.url, body=body, attempt=attempt,
                                                   dialect=self.dialect, body_sha256=digest))
            try:
                if streaming:
                    answer = await self._send_streaming(content, turn, attempt, on_update)
                else:
                    answer = await self._send(content)
            except ModelUnreachable as unreachable:  # other ModelErrors would fail again: raised
                if attempt > self._max_retries:
                    raise _tried(unreachable, attempt) from unreachable.__cause__
                await self._pause(backoff_delay(attempt, self._backoff), attempt, unreachable.reason)
                continue
            if answer.stream is None and self._events.active:
                self._events.emit(ModelResponseEvent(turn=turn, status=answer.status, body=answer.body,
                                                     elapsed=round(answer.elapsed, 6), attempt=attempt,
                                                     dialect=self.dialect))
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
        return self._answer(response.status, response.headers, response.body, started)

    async def _send_streaming(
        self, content: bytes, turn: int, attempt: int, on_update: OnUpdate | None
    ) -> _Answer:
        """Post a streamed request: the stream read as it arrives, or the answer read whole
        when it is no stream (an error, or an endpoint that answers JSON anyway)."""
        started = time.perf_counter()
        with self._map_failures:
            async with self._http.open(self._target, self._stream_headers, content) as http:
                if 200 <= http.status < 300 and EVENT_STREAM in http.headers.get("content-type", ""):
                    read = await self._reader(turn, attempt, on_update).read(http.chunks())
                    return self._streamed(http, read, turn, attempt, started)
                raw = await http.read()
            if 200 <= http.status < 300 and raw.lstrip().startswith(_SSE_STARTS):  # no content type said so
                read = await self._reader(turn, attempt, on_update).read(one_piece(raw))
                return self._streamed(http, read, turn, attempt, started)
        return self._answer(http.status, http.headers, raw, started)

    def _reader(self, turn: int, attempt: int, on_update: OnUpdate | None) -> StreamReader:
        return StreamReader(
            events=self._events, turn=turn, attempt=attempt, on_update=on_update,
            secret=self._shown_key, replacement=redaction.REDACTED,
            max_event_bytes=self._max_event_bytes, max_stream_bytes=self._max_stream_bytes,
            assembler=self._assembler(), dialect=self.dialect,
        )

    def _streamed(
        self, http: AnswerStream, read: StreamRead, turn: int, attempt: int, started: float
    ) -> _Answer:
        """The stream's answer, recorded; a cut stream raises (retried when it said nothing)."""
        elapsed = time.perf_counter() - started
        assembled = read.assembled
        self._events.emit(ModelResponseEvent(
            turn=turn, status=http.status, body=assembled.response, elapsed=round(elapsed, 6),
            attempt=attempt, streamed=True, stream_events=read.events,
            differences=list(assembled.differences), cut=read.cut, dialect=self.dialect,
        ))
        if read.cut is not None:
            raise self._cut(read)
        self._warn(turn, "its response differs from the items it streamed", assembled.differences)
        self._warn(turn, "its stream was out of order", assembled.problems)
        return _Answer(http.status, http.headers, read.raw, assembled.response, elapsed, stream=read)

    def _warn(self, turn: int, what: str, findings: list[str]) -> None:
        """One notice per response for what a stream got wrong (each finding is recorded)."""
        if findings:
            more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
            text = f"the model endpoint's answer to turn {turn}: {what}: {findings[0]}{more}"
            self._events.emit(Notice(level="warning", text=text))

    def _cut(self, read: StreamRead) -> ModelError:
        """A stream that ended before its terminal event: retried if it said nothing yet."""
        if read.assembled.retry_safe:
            kind = ModelTimeout if read.cut and read.cut.startswith("no event for") else ModelUnreachable
            said = f"the model endpoint {self.url} cut its stream before it said anything: {read.cut}"
            return kind(said, 200, reason=f"stream cut: {read.cut}")
        events = f"{read.events} event{'s' if read.events != 1 else ''}"
        return ModelStreamCut(
            f"the model endpoint {self.url} cut its stream after {events}: {read.cut}; not asked again, "
            "as part of the answer had arrived (text may have been shown, calls may have started)",
            assembled=read.assembled,
        )

    def _answer(self, status: int, headers: dict[str, str], raw: bytes, started: float) -> _Answer:
        elapsed = time.perf_counter() - started
        shown = raw.replace(self._secret, REDACTED) if self._secret and self._secret in raw else raw
        return _Answer(status, headers, raw, _parse(shown), elapsed)

    def _reply(self, answer: _Answer, body: dict[str, Any], content: bytes, attempt: int) -> ModelReply:
        problem = self._check_reply(answer.body, body)
        if problem is not None:
            raise problem
        body_dict = cast(dict[str, Any], answer.body)
        stream = answer.stream
        return ModelReply(dialect=self.dialect, status=answer.status, body=body_dict, elapsed=answer.elapsed,
                          raw=answer.raw, request_raw=content, attempts=attempt, streamed=stream is not None,
                          stream_events=stream.events if stream is not None else 0,
                          assembled=stream.assembled if stream is not None else None)

    def _check_reply(self, answer: Any, body: dict[str, Any]) -> ModelError | None:
        return check_reply(answer, body)

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
        text = f"{error} ({'; '.join(notes)})"
        if isinstance(error, ModelFeatureUnsupported):
            return ModelFeatureUnsupported(text, error.status, feature=error.feature)
        return type(error)(text, error.status)

    async def _pause(self, seconds: float, attempt: int, why: str) -> None:
        text = f"model request attempt {attempt} failed ({why}); retrying in {seconds:.2f} s"
        self._events.emit(Notice(level="warning", text=text))
        until = asyncio.get_running_loop().time() + seconds
        self._paused_until = max(self._paused_until, until)
        await self._wait_out_pause()

    async def _wait_out_pause(self) -> None:
        """Wait until the latest back-off of any request of this client has passed."""
        wait = self._paused_until - asyncio.get_running_loop().time()
        if wait > 0:
            await asyncio.sleep(wait)
            await self._wait_out_pause()  # another request may have been told to wait longer

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
    """JSON when the answer is JSON, else its text (HTML error pages, plain-text 404s, JSON
    nested too deep to walk)."""
    try:
        return json_depth.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return raw.decode("utf-8", errors="replace")


def _tried(error: ModelUnreachable, attempt: int) -> ModelUnreachable:
    """The last attempt's error, saying how many attempts were made."""
    if attempt == 1:
        return error
    return type(error)(f"{error} (tried {attempt} times)", error.status, reason=error.reason)
