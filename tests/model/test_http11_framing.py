"""The lean client's own HTTP/1.1 framing (model/_http11.py): request heads, answer heads and
bodies however the bytes are split, and what a malformed answer is called.

The framing is sans I/O, so most cases feed it bytes directly (every split point of an
answer gives the same result); the error messages a user reads are checked end to end
against a raw loopback server (``testkit.raw_http``), as test_http_client.py does.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from model_helpers import run, valid_response

from responses_helpers import recorded_stream
from testkit.raw_http import RawServer, answer
from toolrelay.errors import ModelError
from toolrelay.model import ModelEndpoint, ResponsesClient
from toolrelay.model._http11 import AnswerParser, RequestHead
from toolrelay.model._http_failures import ConnectionClosed, NotHttp, ReadTimeout, RequestRejected
from toolrelay.model.http import HttpClient, Target
from toolrelay.redaction import REDACTED

ANSWER = json.dumps(valid_response("done")).encode()
CHUNKED = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Multi: a\r\nX-Multi: b\r\n"
    b"X-Folded: one\r\n  two\r\n\r\n"
    b"5;ext=1\r\nhello\r\n7 \r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n"
)


def read_whole(parser: AnswerParser, pieces: list[bytes]) -> tuple[int, dict[str, str], bytes]:
    """Feed ``pieces`` one by one; the answer's status, headers and body."""
    head = None
    body = b""
    for piece in pieces:
        parser.feed(piece)
        if head is None:
            head = parser.head()
            if head is None:
                continue
        body += parser.body()
    assert head is not None and parser.ended
    return head.status, head.headers, body


def splits(data: bytes) -> list[list[bytes]]:
    """``data`` whole, byte by byte, and cut in two at every point."""
    bytewise = [data[i:i + 1] for i in range(len(data))]
    return [[data], bytewise] + [[data[:i], data[i:]] for i in range(1, len(data))]


def test_a_chunked_answer_reads_the_same_however_it_is_split() -> None:
    for pieces in splits(CHUNKED):
        parser = AnswerParser()
        status, headers, body = read_whole(parser, pieces)
        assert (status, body) == (200, b"hello, world")
        assert headers["x-multi"] == "a, b" and headers["x-folded"] == "one two"
        assert parser.keep_alive and not parser.pending


def test_a_sized_answer_and_the_next_one_on_the_connection() -> None:
    first = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
    parser = AnswerParser()
    assert read_whole(parser, [first]) == (200, {"content-length": "5"}, b"hello")
    parser.next_answer()
    assert read_whole(parser, [b"HTTP/1.1 204 No Content\r\n\r\n"])[0] == 204  # no body
    parser.next_answer()
    assert read_whole(parser, [b"HTTP/1.1 200\nContent-Length: 2\n\nok"])[2] == b"ok"  # LF, no reason


@pytest.mark.parametrize(
    ("head", "keep_alive"),
    [(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", True),
     (b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n", False),
     (b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", False)],
    ids=["1.1", "connection-close", "1.0"],
)
def test_which_answers_leave_the_connection_reusable(head: bytes, keep_alive: bool) -> None:
    parser = AnswerParser()
    read_whole(parser, [head])
    assert parser.keep_alive is keep_alive


def test_a_close_delimited_body_ends_with_the_connection_and_a_sized_one_must_not() -> None:
    parser = AnswerParser()
    parser.feed(b"HTTP/1.1 200 OK\r\n\r\npart")
    assert parser.head() is not None and parser.body() == b"part" and not parser.keep_alive
    parser.feed(b" two")
    assert parser.end_of_input() == b" two" and parser.ended

    cut = AnswerParser()
    cut.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
    assert cut.head() is not None and cut.body() == b"abc"
    with pytest.raises(ConnectionClosed, match="the server closed the connection without a valid answer"):
        cut.end_of_input()


@pytest.mark.parametrize(
    ("answer", "said"),
    [(b"SSH-2.0-OpenSSH_9.6\r\n", f"illegal status line: {REDACTED}"),
     (b"HTTP/1.1 200 OK\r\nX-Token sk-secret-value\r\n\r\n", f"illegal header line: {REDACTED}"),
     (b"HTTP/1.1 200 OK\r\n folded first\r\n\r\n", "continuation line at start of headers"),
     (b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "bad Content-Length"),
     (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "bad Content-Length"),
     (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "Transfer-Encoding other than chunked"),
     (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "illegal chunk header"),
     (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", "malformed chunk footer"),
     (b"HTTP/1.1 200 OK\r\nX: " + b"y" * (70 * 1024), "the answer's headers are larger than 64 KiB")],
    ids=["not-http", "header-line", "fold-first", "two-lengths", "negative-length", "gzip-te",
         "chunk-header", "chunk-footer", "huge-head"],
)
def test_what_a_malformed_answer_is_called(answer: bytes, said: str) -> None:
    parser = AnswerParser()
    parser.feed(answer)
    with pytest.raises(NotHttp) as failed:
        parser.head()
        parser.body()
    assert str(failed.value) == f"the answer is not valid HTTP/1.1 ({said})"
    assert b"secret" not in str(failed.value).encode()


def test_the_request_head_is_exact_and_built_for_each_length() -> None:
    head = RequestHead("/v1/responses?x=1", "127.0.0.1:8080", [("Content-Type", "application/json"),
                                                                ("Authorization", "Bearer sk-1")])
    assert head.request(b"{}") == (
        b"POST /v1/responses?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer sk-1\r\nContent-Length: 2\r\n\r\n{}"
    )
    assert head.request(b"").endswith(b"Content-Length: 0\r\n\r\n")


FORBIDDEN = "a request header has a name or value HTTP/1.1 forbids"


@pytest.mark.parametrize(
    ("path", "headers", "said"),
    [("/v1", [("X-Key", "sk-SECRET\r\nX-Injected: 1")], FORBIDDEN),
     ("/v1", [("X Key", "v")], FORBIDDEN),
     ("/v1", [("X-Key", "caf\u00e9")], FORBIDDEN),
     ("/v1", [("Content-Length", "3")], FORBIDDEN),
     ("/v 1", [], "the URL's path has a character HTTP/1.1 forbids")],
    ids=["line-break", "name-space", "non-ascii", "own-length", "path-space"],
)
def test_a_request_http_forbids_is_refused_without_its_value(
    path: str, headers: list[tuple[str, str]], said: str
) -> None:
    with pytest.raises(RequestRejected) as refused:
        RequestHead(path, "h", headers)
    assert str(refused.value) == said


def test_a_malformed_answer_reaches_the_user_as_unreachable_without_the_header() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.next_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nX-Token sk-secret-value\r\nContent-Length: 2\r\n\r\n{}")

    async def scenario() -> str:
        async with RawServer(handle) as server:
            events, _ = recorded_stream()
            endpoint = ModelEndpoint(base_url=server.base_url())
            with pytest.raises(ModelError) as failed:
                async with ResponsesClient(endpoint, events=events, max_retries=0) as client:
                    await client.create({"model": "m", "input": "hi"}, turn=1)
            return str(failed.value).replace(server.base_url(), "URL")

    assert run(scenario()) == (
        f"cannot reach the model endpoint URL/responses: the answer is not valid HTTP/1.1 "
        f"(illegal header line: {REDACTED})"
    )


def test_a_chunked_answer_over_the_wire_keeps_its_connection() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        while await server.next_request(reader) is not None:
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for start in range(0, len(ANSWER), 7):
                piece = ANSWER[start:start + 7]
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            writer.write(b"0\r\n\r\n")

    async def scenario() -> tuple[list[bytes], int]:
        async with RawServer(handle) as server:
            events, _ = recorded_stream()
            async with ResponsesClient(ModelEndpoint(base_url=server.base_url()), events=events) as client:
                replies = [await client.create({"model": "m", "input": "hi"}, turn=n) for n in (1, 2, 3)]
            return [reply.raw for reply in replies], server.accepts

    raws, accepts = run(scenario())
    assert raws == [ANSWER] * 3 and accepts == 1


def test_one_timer_times_out_a_later_exchange_on_its_own_deadline() -> None:
    """The pool's one deadline timer, armed for the first request, re-arms for the second:
    a second request to a server that stops answering times out ``timeout`` after it began."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: RawServer) -> None:
        await server.next_request(reader)
        writer.write(answer(ANSWER))
        await server.next_request(reader)
        await asyncio.sleep(30)  # never answers the second

    async def scenario() -> tuple[float, str]:
        async with RawServer(handle) as server, HttpClient(timeout=0.4, connect_timeout=5) as http:
            target = Target.parse(server.base_url())
            assert (await http.post(target, [], b"{}")).body == ANSWER
            await asyncio.sleep(0.2)
            started = asyncio.get_running_loop().time()
            with pytest.raises(ReadTimeout) as timed_out:
                await http.post(target, [], b"{}")
            return asyncio.get_running_loop().time() - started, str(timed_out.value)

    waited, said = run(scenario())
    assert said == "timed out" and 0.35 <= waited < 2.0
