"""Which HTTP client carries the model's requests: the lean one, or httpx2 behind a proxy.

Direct connections use ``http.HttpClient`` (asyncio, its own HTTP/1.1 framing). When the
environment names a proxy for the endpoint's URL (``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, minus
``NO_PROXY``, as ``urllib.request`` reads them), the requests go through httpx2 instead,
which speaks HTTP proxies and CONNECT tunnels; its failures are turned into the same
internal ``_http_failures`` kinds, so the model client handles one family of failures.
Loopback endpoints (local servers, the offline model) never go through a proxy.

Both post a request and return the whole answer (``post``), or hand over the answer once
its head has arrived (``open``), so a streamed answer (server-sent events) is read as it
arrives, each piece within the timeout of the one before.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from ..loopback import is_loopback
from ..redaction import redact_wire_bytes
from ._http_failures import (
    AnswerRejected,
    ConnectFailed,
    ConnectionClosed,
    ConnectTimeout,
    HttpFailure,
    ReadTimeout,
    TransportFailure,
    socket_reason,
)
from .http import MAX_ANSWER_BYTES, HttpAnswer, HttpClient, Target, size_text

if TYPE_CHECKING:
    import httpx2

__all__ = ["AnswerStream", "HttpTransport", "ProxiedClient", "open_transport", "proxy_for"]


class AnswerStream(Protocol):
    """An answer whose head has arrived; its body read whole or as it arrives."""

    status: int
    headers: dict[str, str]
    """Names lower-case."""

    async def read(self) -> bytes: ...

    def chunks(self) -> AsyncIterator[bytes]: ...


class HttpTransport(Protocol):
    """What the model client posts through (``HttpClient`` or ``ProxiedClient``)."""

    async def post(
        self, target: Target, headers: Sequence[tuple[str, str]], content: bytes
    ) -> HttpAnswer: ...

    def open(
        self, target: Target, headers: Sequence[tuple[str, str]], content: bytes
    ) -> AbstractAsyncContextManager[AnswerStream]: ...

    async def aclose(self) -> None: ...


def proxy_for(url: str) -> str | None:
    """The proxy URL the environment names for ``url``, or None (direct; always for loopback)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if is_loopback(host):
        return None
    import urllib.request  # with http.client and email: not for a loopback endpoint

    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy:
        return None
    # proxy_bypass reads NO_PROXY ("host:port" matches entries with or without a port)
    checked = host if ":" in host or parts.port is None else f"{host}:{parts.port}"
    if urllib.request.proxy_bypass(checked):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"  # "proxy:3128" means an http proxy


def open_transport(url: str, *, timeout: float, connect_timeout: float) -> HttpTransport:
    """The client for requests to ``url``: direct and lean, unless a proxy applies."""
    proxy = proxy_for(url)
    if proxy is None:
        return HttpClient(timeout=timeout, connect_timeout=connect_timeout)
    return ProxiedClient(proxy, timeout=timeout, connect_timeout=connect_timeout)


class ProxiedClient:
    """httpx2 through ``proxy``; answers and failures shaped like ``HttpClient``'s."""

    def __init__(
        self, proxy: str, *, timeout: float, connect_timeout: float, max_answer_bytes: int = MAX_ANSWER_BYTES
    ) -> None:
        import httpx2  # only here: a direct connection never pays for importing it

        self.proxy = proxy
        self.max_answer_bytes = max_answer_bytes
        self.timeout = timeout
        self._timeout = timeout
        limits = httpx2.Timeout(timeout, connect=connect_timeout)
        self._http = httpx2.AsyncClient(timeout=limits, follow_redirects=False, proxy=proxy)

    async def post(self, target: Target, headers: Sequence[tuple[str, str]], content: bytes) -> HttpAnswer:
        import httpx2

        try:
            request = self._http.build_request("POST", target.url, content=content, headers=list(headers))
            answer = await self._http.send(request, stream=True)
            try:
                body = await self._read(answer)
            finally:
                await answer.aclose()
        except httpx2.RequestError as exc:
            raise _failure(exc, self._timeout) from exc
        return HttpAnswer(status=answer.status_code, headers=dict(answer.headers.items()), body=body)

    @contextlib.asynccontextmanager
    async def open(
        self, target: Target, headers: Sequence[tuple[str, str]], content: bytes
    ) -> AsyncIterator[AnswerStream]:
        """The answer once its head has arrived, as ``HttpClient.open``."""
        import httpx2

        try:
            request = self._http.build_request("POST", target.url, content=content, headers=list(headers))
            answer = await self._http.send(request, stream=True)
        except httpx2.RequestError as exc:
            raise _failure(exc, self._timeout) from exc
        try:
            yield _ProxiedAnswer(self, answer)
        finally:
            await answer.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _read(self, answer: httpx2.Response) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in answer.aiter_bytes():
            size += len(chunk)
            if size > self.max_answer_bytes:
                raise AnswerRejected(f"the answer is larger than {size_text(self.max_answer_bytes)}")
            chunks.append(chunk)
        return b"".join(chunks)


class _ProxiedAnswer:
    """httpx2's streamed answer shaped like ``http.OpenAnswer``; its failures as failure kinds."""

    def __init__(self, client: ProxiedClient, answer: httpx2.Response) -> None:
        self.status = answer.status_code
        self.headers = {name.lower(): value for name, value in answer.headers.items()}
        self._client = client
        self._answer = answer

    async def read(self) -> bytes:
        import httpx2

        try:
            return await self._client._read(self._answer)
        except httpx2.RequestError as exc:
            raise _failure(exc, self._client.timeout) from exc

    async def chunks(self) -> AsyncIterator[bytes]:
        """Decoded pieces as they arrive; httpx2's read timeout bounds the wait for each."""
        import httpx2

        try:
            async for chunk in self._answer.aiter_bytes():
                if chunk:
                    yield chunk
        except httpx2.RequestError as exc:
            raise _failure(exc, self._client.timeout) from exc


def _failure(exc: httpx2.RequestError, timeout: float) -> HttpFailure:
    """httpx2's error as the lean client's failure kind, with the same reasons."""
    import httpx2

    if isinstance(exc, httpx2.ConnectTimeout):
        return ConnectTimeout()
    if isinstance(exc, httpx2.TimeoutException):
        return ReadTimeout(timeout)
    reason = _os_reason(exc) or redact_wire_bytes(str(exc)) or type(exc).__name__  # h11 quotes header values
    if isinstance(exc, httpx2.ConnectError):
        return ConnectFailed(reason)
    if isinstance(exc, httpx2.RemoteProtocolError):
        return ConnectionClosed(reason)
    if isinstance(exc, httpx2.TransportError):
        return TransportFailure(reason)
    return AnswerRejected(reason)  # decoding errors and the like: the answer came, unreadable


def _os_reason(exc: BaseException) -> str | None:
    """The reason of the OS error under an httpx2 error. httpx2 (through httpcore and anyio)
    wraps it up to three levels down; this foreign chain is the only one toolrelay reads."""
    inner = exc.__cause__ or exc.__context__
    for _ in range(4):
        if inner is None:
            return None
        reason = socket_reason(inner)
        if reason is not None:
            return reason
        inner = inner.__cause__ or inner.__context__
    return None
