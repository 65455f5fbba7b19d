"""The Streamable HTTP transport (MCP 2025-06-18 and 2025-11-25), client side, on httpx2.

Every message is one POST to the server's endpoint with ``Accept: application/json,
text/event-stream``. A request is answered with a JSON body or an SSE stream; the stream
may carry server requests and notifications before the response, and each is handed to
the inbox as it arrives (our answers to server requests are POSTed back). The server's
``Mcp-Session-Id`` is kept and sent; ``MCP-Protocol-Version`` is sent once negotiated;
a GET stream, when the server offers one, brings what the server sends outside any
request (``tools/list_changed``); the session is DELETEd on close.

Resumption (SEP-1699, ``http_sse``): when a request's stream ends before its answer
after an event with an id (the server closed it early so that we poll, or the network
broke it), the transport waits the server's ``retry:``, resumes the stream with a GET
carrying ``Last-Event-ID``, and takes the answer from there; each reconnection is a
notice. The request is never sent again: the server still runs it. The GET stream is
resumed the same way when it ends.

Session loss: a 404 to a request carrying our session id means the server no longer
knows the session, and, because the session is checked before anything else, that the
request was never processed. So the transport tells its inbox the session was forgotten
(the connection runs a fresh handshake) and re-sends that same request once: this is
not a retry of an executed call, and a second 404 is an error.

OAuth (``auth/session.py``): each request carries the server's Bearer token, and a 401 or a
403 ``insufficient_scope`` is answered (refresh, sign-in, step-up) before the request is
sent again; a config that sets its own Authorization header is left as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Final

import httpx2

from .._version import __version__
from ..errors import HttpStatusError, MessageTooLarge, ToolrelayError, TransportError
from ..protocol import json_depth, jsonrpc
from ..protocol import mcp as m
from ..protocol.jsonrpc import JSONObject, RequestId
from ..protocol.param_headers import Annotations
from ..redaction import redact_wire_bytes
from . import era_probe
from .auth.session import OAuthSession
from .config import ServerConfig
from .environment import redact
from .http_failures import failure_words, unreachable
from .http_pages import HTML, PageKeeper
from .http_sse import BROKEN, FRUITLESS_RESUMES, StreamPosition, read_events
from .refusals import too_large_message
from .transport import Inbox

if TYPE_CHECKING:
    from .stderr_log import ServerLog

__all__ = ["HttpTransport"]

_ERROR_BODY_LIMIT: Final = 64 * 1024
_DELETE_TIMEOUT: Final = 2.0
_NOTIFY_GRACE: Final = 1.0  # on close, how long notifications on their way may take to arrive
# Set inside the task that renews a session, so its own initialize/initialized (and the
# re-listing the catalog does on restart) do not wait for the renewal to finish.
_RENEWING: ContextVar[bool] = ContextVar("toolrelay_http_renewing", default=False)


class _SessionExpired(Exception):
    def __init__(self, session_id: str | None) -> None:
        super().__init__("session expired")
        self.session_id = session_id


class HttpTransport:
    """One server endpoint; each ``open`` starts a new Streamable HTTP session with it."""

    pid: int | None = None  # no process, no stderr log
    log: ServerLog | None = None

    def __init__(self, config: ServerConfig, *, log_dir: Path | None = None) -> None:
        assert config.url is not None
        self.config = config
        self.url = config.url
        self._inbox: Inbox | None = None
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        """Sent as MCP-Protocol-Version once the handshake has negotiated it."""
        self._modern: str | None = None
        """The 2026-07-28 revision our requests carry (none yet: None); our notifications,
        which have no envelope (``notifications/cancelled``), name it in their headers."""
        self._client: httpx2.AsyncClient | None = None
        self._posts: dict[asyncio.Task[None], RequestId | None] = {}
        self._renewal: asyncio.Future[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._initialized_post: asyncio.Task[None] | None = None
        self._closed = False
        self._auth = OAuthSession(config)
        self._pages = PageKeeper(config, log_dir)
        self._marked: Mapping[str, Annotations] = {}
        """2026-07-28: each tool's x-mcp-header parameters, mirrored into its calls' headers."""

    async def open(self, inbox: Inbox, *, connection: int) -> None:
        """A new session: a fresh HTTP client, no session id until initialize answers."""
        self._inbox, self._closed = inbox, False
        self.session_id = self.protocol_version = self._modern = None
        self._posts, self._renewal, self._listener = {}, None, None
        self._initialized_post = None
        headers = {"user-agent": f"toolrelay/{__version__}", **self.config.headers}
        timeout = httpx2.Timeout(None, connect=self.config.request_timeout)  # the peer times requests
        self._client = httpx2.AsyncClient(headers=headers, timeout=timeout, verify=_tls_context())
        # OAuth: the stored sign-in (refreshed), or a sign-in now when one is asked for
        self._auth = OAuthSession(self.config, tls=_tls_context(), emit=inbox.emit, connection=connection)
        await self._auth.prepare()

    @property
    def _receiver(self) -> Inbox:
        assert self._inbox is not None
        return self._inbox

    # -- sending ------------------------------------------------------------------------

    def send(self, message: JSONObject) -> None:
        """POST one message (in the background; what comes back reaches the inbox)."""
        if self._client is None or self._closed:
            raise TransportError(f"connection to server {self.config.name} is closed")
        method = message.get("method")
        mcp_id = message.get("id") if method is not None else None  # our requests only
        task = asyncio.ensure_future(self._exchange(message, method, mcp_id, _RENEWING.get()))
        self._posts[task] = mcp_id
        task.add_done_callback(self._forget)
        if method == m.INITIALIZED:
            self._initialized_post = task
        if method == m.INITIALIZE:  # the probe said nothing modern: this is a 2025 session
            self._modern = None
        if method == m.CANCELLED:  # we gave up on it: stop reading its stream too
            self._drop_stream((message.get("params") or {}).get("requestId"))

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._posts.pop(task, None)

    def _drop_stream(self, mcp_id: object) -> None:
        for task, request_id in list(self._posts.items()):
            if request_id == mcp_id and mcp_id is not None:
                task.cancel()

    async def _exchange(
        self, message: JSONObject, method: str | None, mcp_id: RequestId | None, renewing: bool
    ) -> None:
        try:
            if not renewing and method != m.INITIALIZE:
                await self._renewed()
            if method not in (m.INITIALIZE, m.INITIALIZED):
                await self._after_initialized()
            try:
                await self._post(message, method, mcp_id)
            except _SessionExpired as expired:
                if mcp_id is None:
                    return  # a notification to a dead session has nobody to reach
                await self._renew(expired.session_id)
                await self._post(message, method, mcp_id)  # once: the 404 proved it never ran
        except asyncio.CancelledError:
            return
        except _SessionExpired:
            self._report(method, mcp_id, HttpStatusError(404, self._what(method, mcp_id) + (
                " got HTTP 404 again after a fresh initialize: the server keeps losing the session")))
        except ToolrelayError as exc:
            self._report(method, mcp_id, exc)
        except httpx2.HTTPError as exc:
            self._report(method, mcp_id, self._translate(exc, method, mcp_id))
        except Exception as exc:  # e.g. a failing on_restart hook: the request fails, the task stays quiet
            what, said = self._what(method, mcp_id), redact_wire_bytes(str(exc))
            self._report(method, mcp_id, TransportError(
                f"server {self.config.name}: {what} failed: {type(exc).__name__}: {said}"))

    async def _after_initialized(self) -> None:
        """Two POSTs race: what follows the handshake waits until the server has taken
        notifications/initialized (a server may set the session up only then, e.g. register
        the tools that depend on our capabilities)."""
        posted = self._initialized_post
        if posted is not None and not posted.done():
            await asyncio.wait([posted])

    def _report(self, method: str | None, mcp_id: RequestId | None, error: ToolrelayError) -> None:
        if mcp_id is not None:
            self._receiver.failed(mcp_id, error)
        elif not self._closed:
            self._receiver.notice(f"server {self.config.name}: sending {method or 'a reply'} failed: {error}")

    async def _post(self, message: JSONObject, method: str | None, mcp_id: RequestId | None) -> None:
        assert self._client is not None
        headers = self._session_headers(initialize=method == m.INITIALIZE)
        modern = era_probe.modern_headers(message, self._marked)  # 2026-07-28: revision, method, name, params
        if modern:
            self._modern = modern["mcp-protocol-version"]
        elif mcp_id is None and method is not None and self._modern is not None and not self.protocol_version:
            modern = {"mcp-protocol-version": self._modern, "mcp-method": method}  # no handshake: modern
        headers.update(modern)
        headers["content-type"] = "application/json"
        headers["accept"] = "application/json, text/event-stream"
        body = jsonrpc.encode(message)
        position = StreamPosition()
        try:
            posting = self._auth.stream(self._client, "POST", self.url, headers=headers, content=body)
            async with posting as response:
                if method == m.INITIALIZE:
                    self.session_id = response.headers.get("mcp-session-id")
                status = response.status_code
                if status == 404 and "mcp-session-id" in headers:
                    raise _SessionExpired(headers["mcp-session-id"])
                if status >= 400:
                    answer = None
                    if era_probe.error_body_expected(message, response.headers.get("content-length")):
                        answer = await _body_head(response)  # 2026-07-28: the error is the answer
                        if era_probe.rpc_error_body(message, answer):
                            self._receiver.received(answer, carrier=mcp_id)
                            return
                    raise await self._status_error(response, self._what(method, mcp_id), method, answer)
                if mcp_id is None:
                    return  # notifications and our replies: 202 Accepted, nothing to read
                await self._read_answer(response, method, mcp_id, position)
        except BROKEN:
            if not position.resumable:
                raise
        if mcp_id is not None and self._receiver.awaiting(mcp_id):
            if not position.resumable:
                raise TransportError(f"server {self.config.name} ended the HTTP response to "
                                     f"{self._what(method, mcp_id)} without answering it")
            await self._resume(self._what(method, mcp_id), mcp_id, position)

    def _session_headers(self, *, initialize: bool) -> dict[str, str]:
        headers: dict[str, str] = {}
        if not initialize:  # a new handshake starts without the old session
            if self.session_id is not None:
                headers["mcp-session-id"] = self.session_id
            if self.protocol_version is not None:
                headers["mcp-protocol-version"] = self.protocol_version
        return headers

    # -- reading ------------------------------------------------------------------------

    async def _read_answer(
        self, response: httpx2.Response, method: str | None, mcp_id: RequestId, position: StreamPosition
    ) -> None:
        content_type = _media_type(response)
        if content_type == "application/json":
            self._receiver.received(await self._read_body(response, method, mcp_id), carrier=mcp_id)
        elif content_type == "text/event-stream":
            await self._read_events(response, position, mcp_id, method)
        elif content_type == HTML:
            what = self._what(method, mcp_id)
            page = await _body_head(response)
            raise TransportError(self._pages.said(response.status_code, response.reason_phrase, what, page))
        else:
            shown = content_type or "no body"
            raise TransportError(f"server {self.config.name} answered {self._what(method, mcp_id)} with "
                                 f"HTTP {response.status_code} and {shown}, not JSON or an event stream")

    async def _read_body(self, response: httpx2.Response, method: str | None, mcp_id: RequestId) -> bytes:
        limit = self.config.max_message_bytes
        declared = response.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise MessageTooLarge(too_large_message(method, mcp_id, int(declared), limit))
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                raise MessageTooLarge(too_large_message(method, mcp_id, None, limit))
        return bytes(body)

    async def _read_events(
        self, response: httpx2.Response, position: StreamPosition, mcp_id: RequestId | None,
        method: str | None = None,
    ) -> None:
        limit = self.config.max_message_bytes
        try:
            await read_events(response, self._receiver, position, until=mcp_id, max_event_size=limit)
        except httpx2.SSEError as exc:
            if "limit" not in str(exc):
                raise
            raise MessageTooLarge(too_large_message(method, mcp_id, None, limit)) from None

    # -- resuming -----------------------------------------------------------------------

    async def _resume(self, what: str, mcp_id: RequestId, position: StreamPosition) -> None:
        """Our request's stream ended before its answer: reconnect with GET and
        Last-Event-ID, after the server's retry, until the answer comes (SEP-1699)."""
        fruitless = 0
        while self._receiver.awaiting(mcp_id):
            if fruitless == FRUITLESS_RESUMES:
                raise TransportError(
                    f"server {self.config.name}: the event stream of {what} ended before its answer, "
                    f"and {FRUITLESS_RESUMES} reconnections in a row brought nothing more"
                )
            seen = position.event_id
            self._receiver.notice(
                f"server {self.config.name}: the event stream of {what} ended before its answer; "
                f"resuming it after {position.delay() * 1000:g} ms with GET (Last-Event-ID: {seen})",
                level="info",
            )
            await asyncio.sleep(position.delay())
            with contextlib.suppress(*BROKEN):  # broken again: the next round starts where it stands
                await self._get_stream(position, mcp_id, f"the GET resuming the event stream of {what}")
            fruitless = fruitless + 1 if position.event_id == seen else 0

    async def _get_stream(self, position: StreamPosition, mcp_id: RequestId | None, what: str) -> None:
        """Read one GET event stream, from ``position`` when it has an event id; raise
        HttpStatusError (or TransportError) when the server answers with something else."""
        assert self._client is not None
        headers = self._session_headers(initialize=False)
        headers["accept"] = "text/event-stream"
        if position.event_id is not None:
            headers["last-event-id"] = position.event_id
        async with self._auth.stream(self._client, "GET", self.url, headers=headers) as response:
            if response.status_code >= 400:
                raise await self._status_error(response, what, None)
            if response.status_code != 200 or _media_type(response) != "text/event-stream":
                raise TransportError(f"server {self.config.name} answered {what} with HTTP "
                                     f"{response.status_code} and {_media_type(response) or 'no body'}, "
                                     "not an event stream")
            await self._read_events(response, position, mcp_id)

    async def _status_error(
        self, response: httpx2.Response, what: str, method: str | None, body: bytes | None = None
    ) -> HttpStatusError:
        if body is None:
            body = await _body_head(response)
        status = response.status_code
        if _media_type(response) == HTML:  # a web page: one line, the page in the log
            said = self._pages.said(status, response.reason_phrase, what, body)
            if status in (401, 403):  # a sign-in page: what to check still helps
                said += self._auth.hint(status) or _status_hint(status, method)
            return HttpStatusError(status, said)
        text = f"server {self.config.name} answered HTTP {status} {response.reason_phrase} to {what}"
        detail = _error_detail(body)
        if detail:
            text += f": {redact(detail, self.config.secrets)}"
        return HttpStatusError(status, text + (self._auth.hint(status) or _status_hint(status, method)))

    def _what(self, method: str | None, mcp_id: RequestId | None) -> str:
        if mcp_id is not None:
            return f"{method} request {jsonrpc.id_text(mcp_id)}"
        return f"{method} notification" if method else "our reply"

    def _translate(
        self, exc: httpx2.HTTPError, method: str | None, mcp_id: RequestId | None
    ) -> TransportError:
        refused = unreachable(self.config, exc)
        if refused is not None:
            return refused
        return TransportError(f"server {self.config.name} at {self.config.target} failed during "
                              f"{self._what(method, mcp_id)}: {failure_words(exc)}")

    # -- session ------------------------------------------------------------------------

    async def _renew(self, expired_session: str | None) -> None:
        """Re-initialize once for every request that found the session gone."""
        renewal = self._renewal
        if renewal is None or renewal.done():
            if self.session_id not in (expired_session, None):
                return  # renewed since this request went out: just send it again
            self.session_id = None
            token = _RENEWING.set(True)
            try:
                renewal = self._renewal = asyncio.ensure_future(self._receiver.session_forgotten())
            finally:
                _RENEWING.reset(token)
        await asyncio.shield(renewal)

    async def _renewed(self) -> None:
        """Let a request wait while the session is being renewed."""
        renewal = self._renewal
        if renewal is not None and not renewal.done():
            with contextlib.suppress(ToolrelayError):
                await asyncio.shield(renewal)

    def tool_headers(self, marked: Mapping[str, Annotations]) -> None:
        self._marked = marked

    def initialized(self, protocol_version: str) -> None:
        """Send ``protocol_version`` from now on, and open the GET stream (if offered) for
        server messages outside any request."""
        self.protocol_version = protocol_version
        if self._listener is not None:
            self._listener.cancel()
        self._listener = asyncio.ensure_future(self._listen())

    async def _listen(self) -> None:
        """The GET stream: what the server sends outside any request. A server that offers
        none says so (405); one that ends it after events with ids is reconnected to."""
        position = StreamPosition()
        fruitless = 0
        while not self._closed and fruitless < FRUITLESS_RESUMES:
            seen = position.event_id
            try:
                await self._get_stream(position, None, "the GET stream")
            except BROKEN:
                pass
            except (ToolrelayError, httpx2.HTTPError):
                return  # refused (405: the server offers no such stream, which is allowed)
            if not position.resumable:
                return  # ended, with nothing to resume from
            fruitless = fruitless + 1 if position.event_id == seen else 0
            await asyncio.sleep(position.delay())

    async def close(self) -> None:
        """Let notifications on their way arrive (briefly: a cancellation sent just before),
        stop every other exchange, DELETE the session, release the sockets."""
        if self._closed:
            return
        self._closed = True
        notifying = [task for task, mcp_id in self._posts.items() if mcp_id is None]
        if notifying:
            await asyncio.wait(notifying, timeout=_NOTIFY_GRACE)
        tasks = list(self._posts)
        if self._listener is not None:
            tasks.append(self._listener)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._client is None:
            return
        if self.session_id is not None:
            with contextlib.suppress(httpx2.HTTPError):
                headers = self._session_headers(initialize=False) | self._auth.authorization()
                await self._client.delete(self.url, headers=headers, timeout=_DELETE_TIMEOUT)
        await self._client.aclose()
        await self._auth.aclose()


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx2's default verifying context, built once: loading the CA bundle costs ~0.1 s."""
    return httpx2.create_ssl_context()


def _media_type(response: httpx2.Response) -> str:
    """``text/event-stream; charset=utf-8`` → ``text/event-stream``."""
    return response.headers.get("content-type", "").partition(";")[0].strip().lower()


async def _body_head(response: httpx2.Response) -> bytes:
    """The first 64 KiB or so of an answer that is not MCP (the rest is never read)."""
    body = bytearray()
    with contextlib.suppress(httpx2.HTTPError):
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > _ERROR_BODY_LIMIT:
                break
    return bytes(body)


def _error_detail(body: bytes) -> str:
    """The message in an error body: JSON-RPC error, {"error": ...}, or plain text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json_depth.loads(text)
    except ValueError:
        return text[:300]
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        for key in ("error_description", "error", "message", "detail"):
            if isinstance(data.get(key), str):
                return str(data[key])
    return text[:300]


def _status_hint(status: int, method: str | None) -> str:
    if status in (401, 403):
        return " (check the server's headers or token in the config)"
    if status == 404:  # a GET (no method) goes to the URL that worked: the session is gone
        return " (check the URL)" if method is not None else " (the server has ended the session)"
    if status == 405 and method is not None:
        return (" (is this a Streamable HTTP endpoint? toolrelay does not speak the deprecated "
                "HTTP+SSE transport)")
    return ""
