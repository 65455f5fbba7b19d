"""The model client's lean HTTP/1.1 transport (model/http.py) against raw loopback servers.

Each server here writes exact bytes (testkit.raw_http.RawServer), so every case is the case
named: keep-alive, chunked and close-delimited answers, ``Connection: close``, a stale
keep-alive connection, resets, timeouts, the size cap, compressed answers, TLS with a
throwaway CA, concurrency, closing; and the httpx2 path when a proxy applies.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import gzip
import json
import socket
import warnings
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from model_helpers import closed_port, recorded_stream, run, valid_response
from model_http_helpers import make_local_ca

from testkit.raw_http import RawServer, Received, answer, reset
from toolrelay import __version__
from toolrelay.errors import ModelError
from toolrelay.model import ModelEndpoint, ModelReply, ResponsesClient
from toolrelay.model._http_failures import AnswerRejected
from toolrelay.model.http import HttpClient, Target
from toolrelay.model.http_choice import ProxiedClient, open_transport, proxy_for

BODY = {"model": "m", "input": "hi"}
ANSWER = json.dumps(valid_response("done")).encode()
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
Reader, Writer = asyncio.StreamReader, asyncio.StreamWriter
Handler = Callable[[Reader, Writer, RawServer], Awaitable[None]]


@pytest.fixture(autouse=True)
def _no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests decide the proxy variables themselves."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def keep_alive(body: bytes = ANSWER) -> Handler:
    """A handler answering every request on a connection with ``body`` (keep-alive)."""

    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        while await server.next_request(reader) is not None:
            writer.write(answer(body))

    return handle


async def posts(
    server: RawServer, count: int, *, base_url: str | None = None, **options: Any
) -> list[ModelReply]:
    """``count`` requests, one after another, on one ResponsesClient."""
    events, _ = recorded_stream()
    endpoint = ModelEndpoint(base_url=base_url or server.base_url(), api_key=options.pop("api_key", None))
    async with ResponsesClient(endpoint, events=events, **options) as client:
        return [await client.create(BODY, turn=turn) for turn in range(1, count + 1)]


def failure(handler: Handler, **options: Any) -> tuple[str, int]:
    """The ModelError message of one request to a server running ``handler``; and its accepts."""

    async def scenario() -> tuple[str, int]:
        async with RawServer(handler) as server:
            with pytest.raises(ModelError) as failed:
                await posts(server, 1, **{"max_retries": 0, **options})
            return str(failed.value).replace(server.base_url(), "URL"), server.accepts

    return run(scenario())


# -- the exchange ------------------------------------------------------------------------------


def test_the_request_on_the_wire_and_the_exact_answer_bytes() -> None:
    async def scenario() -> tuple[RawServer, ModelReply]:
        async with RawServer(keep_alive()) as server:
            (reply,) = await posts(server, 1, api_key="sk-test")
        return server, reply

    server, reply = run(scenario())
    seen = server.requests[0]
    assert seen.request_line == "POST /v1/responses HTTP/1.1"
    assert seen.headers == {
        "host": f"127.0.0.1:{server.port}",
        "content-type": "application/json",
        "accept": "application/json",
        "user-agent": f"toolrelay/{__version__}",
        "authorization": "Bearer sk-test",
        "content-length": str(len(reply.request_raw)),
    }  # and no Accept-Encoding: answers come uncompressed
    assert seen.body == reply.request_raw and json.loads(seen.body) == BODY
    assert reply.raw == ANSWER and reply.body == valid_response("done")


def test_user_info_in_the_url_is_sent_as_basic_auth() -> None:
    async def scenario() -> Received:
        async with RawServer(keep_alive()) as server:
            await posts(server, 1, base_url=f"http://ann:p%40ss@127.0.0.1:{server.port}/v1")
        return server.requests[0]

    seen = run(scenario())
    assert seen.headers["authorization"] == "Basic YW5uOnBAc3M="  # ann:p@ss
    assert seen.headers["host"].startswith("127.0.0.1:")


def test_keep_alive_one_connection_for_many_requests() -> None:
    async def scenario() -> tuple[RawServer, list[ModelReply]]:
        async with RawServer(keep_alive()) as server:
            replies = await posts(server, 5)
        return server, replies

    server, replies = run(scenario())
    assert server.accepts == 1 and len(server.requests) == 5
    assert [reply.raw for reply in replies] == [ANSWER] * 5


def test_a_large_answer_arrives_whole() -> None:
    large = json.dumps(valid_response("x" * (6 * 1024 * 1024))).encode()

    async def scenario() -> tuple[RawServer, list[ModelReply]]:
        async with RawServer(keep_alive(large)) as server:
            replies = await posts(server, 2)
        return server, replies

    server, replies = run(scenario())
    assert [reply.raw == large for reply in replies] == [True, True] and server.accepts == 1


def test_chunked_answer_after_an_interim_100() -> None:
    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        while await server.next_request(reader) is not None:
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for start in range(0, len(ANSWER), 100):
                piece = ANSWER[start:start + 100]
                writer.write(b"%x;ext=1\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
                await asyncio.sleep(0.001)
            writer.write(b"0\r\nX-Trailer: t\r\n\r\n")

    async def scenario() -> tuple[RawServer, list[ModelReply]]:
        async with RawServer(handle) as server:
            replies = await posts(server, 2)
        return server, replies

    server, replies = run(scenario())
    assert [reply.raw for reply in replies] == [ANSWER, ANSWER]
    assert server.accepts == 1  # a chunked answer leaves the connection reusable


def test_close_delimited_answer() -> None:
    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        await server.next_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + ANSWER[:50])
        await writer.drain()
        writer.write(ANSWER[50:])  # the end of the answer is the end of the connection

    async def scenario() -> tuple[RawServer, list[ModelReply]]:
        async with RawServer(handle) as server:
            replies = await posts(server, 2)
        return server, replies

    server, replies = run(scenario())
    assert [reply.raw for reply in replies] == [ANSWER, ANSWER] and server.accepts == 2


def test_connection_close_from_the_server_is_honoured() -> None:
    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        await server.next_request(reader)
        writer.write(answer(ANSWER, "Connection: close"))
        await server.next_request(reader)  # the server keeps its side open: the client must close

    async def scenario() -> tuple[RawServer, list[ModelReply]]:
        async with RawServer(handle) as server:
            replies = await posts(server, 2)
            await server.client_closed(2)  # the server read EOF on both
        return server, replies

    server, replies = run(scenario())
    assert [reply.raw for reply in replies] == [ANSWER, ANSWER]
    assert server.accepts == 2 and len(server.requests) == 2


# -- stale keep-alive connections ------------------------------------------------------------------


def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        await server.next_request(reader)
        writer.write(answer(ANSWER))  # keep-alive answer, then the server closes anyway

    async def scenario() -> tuple[RawServer, list[ModelReply]]:
        async with RawServer(handle) as server:
            events, recorder = recorded_stream()
            async with ResponsesClient(ModelEndpoint(base_url=server.base_url()), events=events) as client:
                first = await client.create(BODY, turn=1)
                await asyncio.sleep(0.05)  # the FIN arrives while the connection is idle
                second = await client.create(BODY, turn=2)
            assert recorder.records("notice") == []
        return server, [first, second]

    server, replies = run(scenario())
    assert [reply.attempts for reply in replies] == [1, 1] and server.accepts == 2
    assert len(server.requests) == 2


def test_a_connection_the_server_spoke_on_while_idle_is_not_reused() -> None:
    """A server may send 408 on an idle connection before closing it; the next request must
    not read that as its answer."""

    spoke = asyncio.Event()

    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        if server.accepts > 1:
            return await keep_alive()(reader, writer, server)
        await server.next_request(reader)
        writer.write(answer(ANSWER))
        await writer.drain()
        await asyncio.sleep(0.02)
        writer.write(answer(b"", "Connection: close", status="408 Request Timeout"))
        await writer.drain()
        spoke.set()
        await server.next_request(reader)  # a request here would have been sent on a bad connection

    async def scenario() -> tuple[RawServer, list[ModelReply]]:
        async with RawServer(handle) as server:
            events, _ = recorded_stream()
            async with ResponsesClient(ModelEndpoint(base_url=server.base_url()), events=events) as client:
                first = await client.create(BODY, turn=1)
                await spoke.wait()
                await asyncio.sleep(0.02)  # loopback: the 408 reaches the client's socket at once
                second = await client.create(BODY, turn=2)
        return server, [first, second]

    server, replies = run(scenario())
    assert [(reply.status, reply.raw) for reply in replies] == [(200, ANSWER), (200, ANSWER)]
    assert server.accepts == 2 and len(server.requests) == 2


@pytest.mark.parametrize("how", ["close", "reset"])
def test_a_request_on_a_stale_keep_alive_connection_is_resent_once(how: str) -> None:
    """The race of every keep-alive client: the server drops the idle connection as the next
    request goes out, before answering a byte. The request goes once more on a new
    connection, with no notice and no extra attempt."""

    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        if server.accepts == 1:
            await server.next_request(reader)
            writer.write(answer(ANSWER))
            await server.next_request(reader)
            if how == "reset":
                reset(writer)
            return  # closed without a byte of answer
        await keep_alive()(reader, writer, server)

    async def scenario() -> tuple[RawServer, list[ModelReply], list[dict[str, Any]]]:
        async with RawServer(handle) as server:
            events, recorder = recorded_stream()
            async with ResponsesClient(ModelEndpoint(base_url=server.base_url()), events=events) as client:
                replies = [await client.create(BODY, turn=turn) for turn in (1, 2)]
        return server, replies, recorder.records()

    server, replies, records = run(scenario())
    assert [reply.raw for reply in replies] == [ANSWER, ANSWER] and replies[1].attempts == 1
    assert server.accepts == 2 and len(server.requests) == 3
    assert server.requests[1].body == server.requests[2].body == replies[1].request_raw
    assert [r["kind"] for r in records if r["kind"] == "notice"] == []
    assert [r["attempt"] for r in records if r["kind"] == "model_request"] == [1, 1]


def test_a_new_connection_closed_before_answering_is_not_resent_silently() -> None:
    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        await server.next_request(reader)

    message, accepts = failure(handle)
    assert message == (
        "cannot reach the model endpoint URL/responses: "
        "the server closed the connection without a valid answer"
    )
    assert accepts == 1


# -- failures -------------------------------------------------------------------------------------


async def _reset_mid_answer(reader: Reader, writer: Writer, server: RawServer) -> None:
    await server.next_request(reader)
    writer.write(answer(ANSWER)[:-40])
    await writer.drain()
    await asyncio.sleep(0.02)
    reset(writer)


async def _closed_mid_answer(reader: Reader, writer: Writer, server: RawServer) -> None:
    await server.next_request(reader)
    writer.write(answer(ANSWER)[:-40])


@pytest.mark.parametrize(
    ("handler", "why"),
    [
        (_reset_mid_answer, "connection reset by the server"),
        (_closed_mid_answer, "the server closed the connection without a valid answer"),
    ],
    ids=["reset", "eof"],
)
def test_a_connection_lost_mid_answer_is_retried_then_reported(handler: Any, why: str) -> None:
    message, accepts = failure(handler, max_retries=1, backoff=0.01)
    assert message == f"cannot reach the model endpoint URL/responses: {why} (tried 2 times)"
    assert accepts == 2


def test_an_answer_that_is_not_http() -> None:
    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        await server.next_request(reader)
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")

    message, _ = failure(handle)
    assert message.startswith(
        "cannot reach the model endpoint URL/responses: the answer is not valid HTTP/1.1 ("
    )


def test_a_slow_server_times_out() -> None:
    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        await server.next_request(reader)
        await asyncio.sleep(30)

    message, _ = failure(handle, timeout=0.2)
    assert message == "the model endpoint URL/responses did not answer within 0.2 s"


def test_a_connect_that_hangs_times_out() -> None:
    """A listener whose accept queue is full drops new SYNs: the connect hangs."""

    async def scenario() -> str:
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen(0)
            port = listener.getsockname()[1]
            fillers = [socket.socket() for _ in range(4)]
            for filler in fillers:
                filler.setblocking(False)
                with contextlib.suppress(BlockingIOError):
                    filler.connect(("127.0.0.1", port))
            try:
                events, _ = recorded_stream()
                endpoint = ModelEndpoint(base_url=f"http://127.0.0.1:{port}/v1")
                with pytest.raises(ModelError) as failed:
                    async with ResponsesClient(endpoint, events=events, timeout=0.3, max_retries=0) as client:
                        await client.create(BODY, turn=1)
            finally:
                for filler in fillers:
                    filler.close()
        return str(failed.value).replace(str(port), "PORT")

    assert run(scenario()) == "cannot reach the model endpoint http://127.0.0.1:PORT/v1/responses: timed out"


def test_a_refused_port() -> None:
    base = f"http://127.0.0.1:{closed_port()}/v1"

    async def scenario() -> str:
        events, _ = recorded_stream()
        with pytest.raises(ModelError) as failed:
            async with ResponsesClient(ModelEndpoint(base_url=base), events=events, max_retries=0) as client:
                await client.create(BODY, turn=1)
        return str(failed.value)

    assert run(scenario()) == f"cannot reach the model endpoint {base}/responses: connection refused"


def test_an_answer_above_the_cap_is_refused_before_it_is_read() -> None:
    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        await server.next_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 68157440\r\n\r\n{")
        await asyncio.sleep(30)  # never sends the rest: the client must not wait for it

    message, accepts = failure(handle, max_retries=3)
    assert message == (
        "cannot read the model endpoint's answer from URL/responses: "
        "the answer is larger than 64 MiB (Content-Length: 68157440)"
    )
    assert accepts == 1  # not retried: it would be as large again


async def _chunked_forever(reader: Reader, writer: Writer, server: RawServer) -> None:
    await server.next_request(reader)
    writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    while True:
        writer.write(b"100\r\n" + b"x" * 256 + b"\r\n")
        await writer.drain()
        await asyncio.sleep(0)


async def _gzip_bomb(reader: Reader, writer: Writer, server: RawServer) -> None:
    await server.next_request(reader)
    writer.write(answer(gzip.compress(b" " * 100_000), "Content-Encoding: gzip"))


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        (_chunked_forever, "the answer is larger than 4096 bytes"),
        (_gzip_bomb, "the answer is larger than 4096 bytes once decompressed"),
    ],
    ids=["streamed", "decompressed"],
)
def test_the_cap_holds_while_reading_and_decompressing(handler: Any, message: str) -> None:
    async def scenario() -> str:
        async with RawServer(handler) as server, HttpClient(timeout=5, connect_timeout=5,
                                                            max_answer_bytes=4096) as http:
            with pytest.raises(AnswerRejected) as rejected:
                await http.post(Target.parse(server.base_url()), [], b"{}")
        return str(rejected.value)

    assert run(scenario()) == message


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as some servers send it
    ],
    ids=["gzip", "deflate-zlib", "deflate-raw"],
)
def test_a_compressed_answer_is_decoded(encoding: str, encode: Callable[[bytes], bytes]) -> None:
    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        while await server.next_request(reader) is not None:
            writer.write(answer(encode(ANSWER), f"Content-Encoding: {encoding}"))

    async def scenario() -> tuple[RawServer, ModelReply]:
        async with RawServer(handle) as server:
            (reply,) = await posts(server, 1)
        return server, reply

    server, reply = run(scenario())
    assert reply.raw == ANSWER and reply.body["output"][0]["content"][0]["text"] == "done"
    assert "accept-encoding" not in server.requests[0].headers


def test_an_encoding_toolrelay_does_not_decode() -> None:
    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        await server.next_request(reader)
        writer.write(answer(b"\x1b\x00", "Content-Encoding: br"))

    message, _ = failure(handle)
    assert message == (
        "cannot read the model endpoint's answer from URL/responses: "
        "the answer is encoded with 'br', which toolrelay does not decode"
    )


def test_a_header_http_forbids_is_refused_without_echoing_it() -> None:
    async def scenario() -> tuple[RawServer, str]:
        async with RawServer(keep_alive()) as server:
            events, recorder = recorded_stream()
            bad = {"X-Key": "sk-SECRET\r\nX-Injected: 1"}
            endpoint = ModelEndpoint(base_url=server.base_url(), headers=bad)
            with pytest.raises(ModelError) as failed:
                async with ResponsesClient(endpoint, events=events) as client:
                    await client.create(BODY, turn=1)
            assert "SECRET" not in recorder.dump()
        return server, str(failed.value).replace(server.base_url(), "URL")

    server, message = run(scenario())
    assert message == (
        "cannot send the request to the model endpoint URL/responses: "
        "a request header has a name or value HTTP/1.1 forbids"
    )
    assert server.accepts == 0  # refused before connecting, and not retried


# -- TLS -------------------------------------------------------------------------------------------


def test_https_against_a_local_ca_trusted_through_ssl_cert_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = make_local_ca(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(local.ca_file))

    async def scenario() -> tuple[RawServer, list[ModelReply]]:
        async with RawServer(keep_alive(), tls=local.server_context()) as server:
            replies = await posts(server, 2, base_url=server.base_url("https", "localhost"))
            await server.client_closed(1)  # closed by aclose
        return server, replies

    server, replies = run(scenario())
    assert [reply.raw for reply in replies] == [ANSWER, ANSWER]
    assert server.accepts == 1  # keep-alive over TLS
    assert local.sni_seen == ["localhost"] and server.alpn_seen == ["http/1.1"]
    assert server.requests[0].headers["host"] == f"localhost:{server.port}"


def test_https_with_an_untrusted_certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local = make_local_ca(tmp_path)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)

    async def scenario() -> tuple[str, str]:
        async with RawServer(keep_alive(), tls=local.server_context()) as server:
            base = server.base_url("https", "localhost")
            with pytest.raises(ModelError) as failed:
                await posts(server, 1, base_url=base, max_retries=0)
        return str(failed.value), base

    message, base = run(scenario())
    assert message.startswith(
        f"cannot reach the model endpoint {base}/responses: TLS certificate not trusted ("
    )


# -- concurrency and closing -----------------------------------------------------------------------


def test_concurrent_requests_open_a_second_connection_and_aclose_closes_both() -> None:
    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        while await server.next_request(reader) is not None:
            await asyncio.sleep(0.05)
            writer.write(answer(ANSWER))

    async def scenario() -> tuple[RawServer, int, int]:
        async with RawServer(handle) as server:
            events, _ = recorded_stream()
            client = ResponsesClient(ModelEndpoint(base_url=server.base_url()), events=events)
            await asyncio.gather(client.create(BODY, turn=1), client.create(BODY, turn=1))
            after_two = server.accepts
            for turn in (2, 3, 4):
                await client.create(BODY, turn=turn)  # the idle connections are reused
            await client.aclose()
            await server.client_closed(2)  # aclose closed both: the server read EOF
        return server, after_two

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        server, after_two = run(scenario())
        gc.collect()
    assert after_two == 2 and server.accepts == 2 and len(server.requests) == 5
    assert [str(w.message) for w in caught] == []


# -- proxies ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environment", "url", "proxy"),
    [
        ({}, "https://api.openai.com/v1/responses", None),
        ({"HTTPS_PROXY": "http://p:3128"}, "https://api.openai.com/v1/responses", "http://p:3128"),
        ({"HTTPS_PROXY": "http://p:3128"}, "http://model.test/v1/responses", None),
        ({"HTTP_PROXY": "http://p:3128"}, "http://model.test/v1/responses", "http://p:3128"),
        ({"http_proxy": "p:3128"}, "http://model.test/v1/responses", "http://p:3128"),
        ({"ALL_PROXY": "http://p:3128"}, "https://api.openai.com/v1/responses", "http://p:3128"),
        ({"ALL_PROXY": "http://p:3128", "NO_PROXY": "openai.com"}, "https://api.openai.com/v1", None),
        ({"HTTP_PROXY": "http://p:3128", "NO_PROXY": "model.test:8000"}, "http://model.test:8000/v1", None),
        ({"HTTP_PROXY": "http://p:3128", "NO_PROXY": "*"}, "http://model.test/v1/responses", None),
        ({"ALL_PROXY": "http://p:3128"}, "http://127.0.0.1:11434/v1/responses", None),
        ({"ALL_PROXY": "http://p:3128"}, "http://localhost:11434/v1/responses", None),
        ({"ALL_PROXY": "http://p:3128"}, "http://[::1]:11434/v1/responses", None),
    ],
)
def test_which_urls_go_through_a_proxy(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], url: str, proxy: str | None
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert proxy_for(url) == proxy
    transport = open_transport(url, timeout=1, connect_timeout=1)
    assert isinstance(transport, ProxiedClient if proxy else HttpClient)
    run(transport.aclose())


def test_a_proxied_endpoint_is_reached_through_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """model.test does not resolve: only the proxy (a raw server here) can answer for it."""

    async def scenario() -> tuple[RawServer, ModelReply]:
        async with RawServer(keep_alive()) as proxy:
            monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
            (reply,) = await posts(proxy, 1, base_url="http://model.test/v1", api_key="sk-test")
        return proxy, reply

    proxy, reply = run(scenario())
    assert proxy.requests[0].request_line == "POST http://model.test/v1/responses HTTP/1.1"
    assert proxy.requests[0].headers["authorization"] == "Bearer sk-test"
    assert proxy.requests[0].body == reply.request_raw and reply.raw == ANSWER


def test_a_proxy_that_refuses_is_reported_like_a_direct_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port()}")

    async def scenario() -> str:
        events, _ = recorded_stream()
        endpoint = ModelEndpoint(base_url="http://model.test/v1")
        with pytest.raises(ModelError) as failed:
            async with ResponsesClient(endpoint, events=events, max_retries=0) as client:
                await client.create(BODY, turn=1)
        return str(failed.value)

    refused = "cannot reach the model endpoint http://model.test/v1/responses: connection refused"
    assert run(scenario()) == refused


COOKIE = "session=their-cookie-0123456789"


async def _a_header_line_h11_refuses(reader: Reader, writer: Writer, server: RawServer) -> None:
    await server.next_request(reader)
    writer.write(f"HTTP/1.1 200 OK\r\nSet-Cookie: {COOKIE}\x00\r\nContent-Length: 2\r\n\r\n{{}}".encode())


_REACH = "cannot reach the model endpoint URL/responses: "


@pytest.mark.parametrize("proxied", [False, True], ids=["direct", "proxied"])
@pytest.mark.parametrize(
    ("handler", "api_key", "secret", "said"),
    [(keep_alive(), "sk-live-0123456789abcdef\r\nX: y", "sk-live-0123456789abcdef",
      ("cannot send the request to the model endpoint URL/responses: a request header has a name or value "
       "HTTP/1.1 forbids", _REACH + "Illegal header value [redacted]")),
     (_a_header_line_h11_refuses, "sk-test", COOKIE,
      (_REACH + "the answer is not valid HTTP/1.1 (illegal header line: [redacted])",
       _REACH + "illegal header line: [redacted]"))],
    ids=["our-key", "their-header"],
)
def test_no_header_value_shows_in_a_transport_error(
    monkeypatch: pytest.MonkeyPatch, proxied: bool, handler: Handler, api_key: str, secret: str,
    said: tuple[str, str],
) -> None:
    """h11 quotes the header (value or line) it refuses, a key with a line break in it or an
    answer's header: neither way does the value reach the message."""

    async def scenario() -> str:
        async with RawServer(handler) as server:
            base_url = server.base_url()
            if proxied:
                monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.port}")
                base_url = "http://model.test/v1"
            with pytest.raises(ModelError) as failed:
                await posts(server, 1, base_url=base_url, api_key=api_key, max_retries=0)
            return str(failed.value).replace(base_url, "URL")

    message = run(scenario())
    assert secret not in message
    assert message == said[proxied]
