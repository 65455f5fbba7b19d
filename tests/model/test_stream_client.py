"""The model client reading streamed answers over loopback: exact bytes from raw servers
(stalls, cuts, caps, encodings, keep-alive, a proxy) and endpoints that do not stream."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from model_helpers import Canned, CannedEndpoint, run, valid_response

from responses_helpers import Recorder, recorded_stream
from testkit.raw_http import RawServer
from toolrelay.errors import (
    ModelAnswerUnreadable,
    ModelError,
    ModelFeatureUnsupported,
    ModelStreamCut,
    ModelTimeout,
    ModelUnreachable,
)
from toolrelay.events import EventStream
from toolrelay.model import ModelEndpoint, ModelReply, ResponsesClient, streaming
from toolrelay.protocol.stream import TextDelta, Update

BODY = {"model": "m", "input": "hi", "stream": True}
SHELL = {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}
MESSAGE = {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": "Hello", "annotations": []}]}
Reader, Writer = asyncio.StreamReader, asyncio.StreamWriter
Handler = Callable[[Reader, Writer, RawServer], Awaitable[None]]


@pytest.fixture(autouse=True)
def _no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def event(number: int, payload: dict[str, Any]) -> bytes:
    data = json.dumps({**payload, "sequence_number": number})
    return f"event: {payload['type']}\ndata: {data}\n\n".encode()


def stream_events(text: str = "Hello") -> list[bytes]:
    """created, in_progress, a message in two deltas, completed: one bytes value each."""
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    message = {**MESSAGE, "content": [{**MESSAGE["content"][0], "text": text}]}
    payloads = [
        {"type": "response.created", "response": SHELL},
        {"type": "response.in_progress", "response": SHELL},
        {"type": "response.output_item.added", "output_index": 0, "item": {**MESSAGE, "content": []}},
        {"type": "response.output_text.delta", **where, "delta": text[:2]},
        {"type": "response.output_text.delta", **where, "delta": text[2:]},
        {"type": "response.output_item.done", "output_index": 0, "item": message},
        {"type": "response.completed", "response": {**SHELL, "status": "completed", "output": [message]}},
    ]
    return [event(n, p) for n, p in enumerate(payloads)]


def head(*headers: str) -> bytes:
    lines = ["HTTP/1.1 200 OK", "Content-Type: text/event-stream", "Transfer-Encoding: chunked", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


END = b"0\r\n\r\n"


def serving(*answers: list[bytes | float | None]) -> Handler:
    """A handler answering the n-th connection's requests with ``answers[n]``: bytes are
    written, a float is a pause, None closes the connection there (the last answer repeats)."""

    async def handle(reader: Reader, writer: Writer, server: RawServer) -> None:
        steps = answers[min(server.accepts, len(answers)) - 1]
        while await server.next_request(reader) is not None:
            for step in steps:
                if step is None:
                    writer.close()
                    return
                if isinstance(step, float):
                    await writer.drain()
                    await asyncio.sleep(step)
                else:
                    writer.write(step)

    return handle


def whole(events: list[bytes]) -> list[bytes | float | None]:
    return [head(), *(chunk(e) for e in events), END]


async def create(
    server: RawServer, *, recorder: Recorder | None = None, base_url: str | None = None,
    updates: list[Update] | None = None, **options: Any,
) -> ModelReply:
    """One streamed request to ``server`` (or through it, as a proxy, to ``base_url``)."""
    events = (recorder or Recorder()).attach(EventStream())
    endpoint = ModelEndpoint(base_url=base_url or server.base_url(), api_key=options.pop("api_key", None))
    async with ResponsesClient(endpoint, events=events, **{"backoff": 0.01, **options}) as client:
        return await client.create(BODY, turn=1, on_update=updates.append if updates is not None else None)


def outcome(handler: Handler, **options: Any) -> tuple[ModelReply | ModelError, int, Recorder]:
    """The reply (or the ModelError) of one streamed request; the connections; the records."""
    recorder = Recorder()

    async def scenario() -> tuple[ModelReply | ModelError, int]:
        async with RawServer(handler) as server:
            try:
                return await create(server, recorder=recorder, **options), server.accepts
            except ModelError as error:
                return error, server.accepts

    result, accepts = run(scenario())
    return result, accepts, recorder


# -- stalls and cuts ---------------------------------------------------------------------------------


def test_a_long_but_live_stream_is_not_timed_out() -> None:
    events = stream_events()
    steps: list[bytes | float | None] = [head()]
    for piece in events:
        steps += [chunk(piece), 0.08]  # 7 x 0.08 s: longer than the timeout, never idle that long
    reply, _, recorder = outcome(serving([*steps, END]), timeout=0.4)
    assert isinstance(reply, ModelReply) and reply.streamed and reply.body["status"] == "completed"
    assert recorder.records("model_response")[0]["elapsed"] > 0.4


def test_a_stream_stalled_before_it_said_anything_is_asked_again_then_reported() -> None:
    stalled = [head(), chunk(stream_events()[0]), 30.0]
    error, accepts, recorder = outcome(serving(stalled), timeout=0.3, max_retries=1)
    assert isinstance(error, ModelTimeout) and accepts == 2
    assert str(error) == (f"the model endpoint {recorder.records('model_request')[0]['url']} cut its stream "
                          "before it said anything: no event for 0.3 s (tried 2 times)")
    notices = [r["text"] for r in recorder.records("notice")]
    assert notices == ["model request attempt 1 failed (stream cut: no event for 0.3 s); retrying in "
                       + notices[0].rsplit("retrying in ", 1)[1]]
    responses = recorder.records("model_response")
    assert [(r["cut"], r["stream_events"], r["body"]["status"]) for r in responses] == [
        ("no event for 0.3 s", 1, "in_progress")] * 2


def test_a_stream_stalled_after_text_is_not_asked_again() -> None:
    events = stream_events()
    error, accepts, recorder = outcome(serving([head(), *(chunk(e) for e in events[:4]), 30.0]), timeout=0.3)
    assert isinstance(error, ModelStreamCut) and accepts == 1 and error.exit_code == 3
    assert "cut its stream after 4 events: no event for 0.3 s; not asked again" in str(error)
    assert error.assembled.response["output"][0]["content"][0]["text"] == "He"
    kinds = [r["kind"] for r in recorder.records()]
    assert kinds == ["model_request", *["model_stream"] * 4, "model_response"]


def test_a_cut_connection_before_anything_is_retried_like_a_5xx() -> None:
    events = stream_events()
    cut_early = [head(), chunk(events[0]), chunk(events[1]), None]
    reply, accepts, recorder = outcome(serving(cut_early, whole(events)))
    assert isinstance(reply, ModelReply) and reply.attempts == 2 and accepts == 2
    assert reply.body["output"] == [MESSAGE]
    assert [r["attempt"] for r in recorder.records("model_stream")] == [1, 1, *[2] * 7]
    first, second = recorder.records("model_response")
    assert first["cut"] == "the connection closed" and "cut" not in second


def test_a_cut_connection_after_text_raises_with_what_had_arrived() -> None:
    events = stream_events()
    error, accepts, _ = outcome(serving([head(), *(chunk(e) for e in events[:5]), None]))
    assert isinstance(error, ModelStreamCut) and accepts == 1
    assert error.assembled.retry_safe is False and error.assembled.terminal is None
    assert error.assembled.response["output"][0]["content"][0]["text"] == "Hello"


def test_a_stream_that_ends_without_its_terminal_event_is_a_cut() -> None:
    events = stream_events()
    error, _, _ = outcome(serving(whole(events[:-1])))
    assert isinstance(error, ModelStreamCut)
    assert str(error).endswith(
        "after 6 events: the stream ended without response.completed, .incomplete or .failed; not asked "
        "again, as part of the answer had arrived (text may have been shown, calls may have started)"
    )


def test_after_the_terminal_event_the_rest_is_not_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "AFTER_END_WAIT", 0.05)
    reply, _, _ = outcome(serving([head(), *(chunk(e) for e in stream_events()), 30.0]), timeout=20)
    assert isinstance(reply, ModelReply) and reply.body["status"] == "completed"


# -- caps -----------------------------------------------------------------------------------------------


def test_an_event_above_its_cap_and_a_stream_above_its_cap_are_refused_once() -> None:
    events = stream_events("x" * 2000)
    error, accepts, _ = outcome(serving(whole(events)), max_event_bytes=1500)
    assert isinstance(error, ModelAnswerUnreadable) and accepts == 1
    assert str(error).endswith(": a server-sent event is larger than 1500 bytes")
    many = [event(0, {"type": "response.created", "response": SHELL})] * 200
    error, accepts, _ = outcome(serving(whole(many)), max_stream_bytes=5000)
    assert isinstance(error, ModelAnswerUnreadable) and accepts == 1
    assert str(error).endswith(": the streamed answer is larger than 5000 bytes")


# -- bytes and connections --------------------------------------------------------------------------


def test_a_gzip_stream_is_decoded_as_it_arrives() -> None:
    packed = gzip.compress(b"".join(stream_events()))
    pieces = [chunk(packed[i:i + 50]) for i in range(0, len(packed), 50)]
    steps = [head("Content-Encoding: gzip"), *pieces, END]
    reply, _, _ = outcome(serving(steps))
    assert isinstance(reply, ModelReply) and reply.body["output"] == [MESSAGE]


def test_sse_sent_without_its_content_type_is_read_as_a_stream() -> None:
    body = b"".join(stream_events())
    plain = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    reply, _, recorder = outcome(serving([plain]))
    assert isinstance(reply, ModelReply) and reply.streamed and reply.body["output"] == [MESSAGE]
    assert len(recorder.records("model_stream")) == 7


def test_streams_read_to_their_end_keep_the_connection_for_the_next_request() -> None:
    async def scenario() -> tuple[list[ModelReply], int, list[str]]:
        async with RawServer(serving(whole(stream_events()))) as server:
            events, _ = recorded_stream()
            async with ResponsesClient(ModelEndpoint(base_url=server.base_url()), events=events) as client:
                replies = [await client.create(BODY, turn=n) for n in (1, 2, 3)]
            accept = [r.headers["accept"] for r in server.requests]
            return replies, server.accepts, accept

    replies, accepts, accept = run(scenario())
    assert [r.streamed for r in replies] == [True] * 3 and accepts == 1
    assert accept == ["text/event-stream, application/json"] * 3


def test_an_api_key_echoed_in_an_event_is_redacted_in_the_records() -> None:
    echoed = {**SHELL, "instructions": "key sk-live-SECRET-1"}
    leaky = event(0, {"type": "response.created", "response": echoed})
    reply, _, recorder = outcome(serving(whole([leaky, *stream_events()[1:]])), api_key="sk-live-SECRET-1")
    assert isinstance(reply, ModelReply)
    dump = recorder.dump()
    assert "sk-live-SECRET-1" not in dump and "key [redacted]" in dump


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_a_key_too_short_to_be_a_secret_leaves_the_answer_as_it_came(streamed: bool) -> None:
    # api_key "x" (a local endpoint's): the answer's text keeps its x's, a call's arguments too
    text = "six boxes"
    body = json.dumps(valid_response(text)).encode()
    plain = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    answer = whole(stream_events(text)) if streamed else [plain.encode() + body]
    reply, _, recorder = outcome(serving(answer), api_key="x")
    assert isinstance(reply, ModelReply), reply
    assert text in json.dumps(reply.body) and "[redacted]" not in recorder.dump()


def test_updates_are_handed_on_in_order_as_they_arrive() -> None:
    updates: list[Update] = []
    reply, _, _ = outcome(serving(whole(stream_events("Hello there"))), updates=updates)
    assert isinstance(reply, ModelReply)
    assert [u.delta for u in updates if isinstance(u, TextDelta)] == ["He", "llo there"]
    kinds = [type(u).__name__ for u in updates]
    assert kinds == ["ItemAdded", "TextDelta", "TextDelta", "ItemDone", "StreamEnded"]


def test_the_proxied_path_streams_and_reports_cuts_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    events = stream_events()

    async def scenario() -> tuple[ModelReply, ModelError, str]:
        async with RawServer(serving(whole(events))) as good, RawServer(
            serving([head(), *(chunk(e) for e in events[:4]), None])
        ) as cutting:
            monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{good.port}")
            updates: list[Update] = []
            reply = await create(good, base_url="http://model.test/v1", updates=updates)
            monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{cutting.port}")
            with pytest.raises(ModelStreamCut) as cut:
                await create(cutting, base_url="http://model.test/v1")
            return reply, cut.value, good.requests[0].request_line

    reply, cut, line = run(scenario())
    assert line == "POST http://model.test/v1/responses HTTP/1.1"
    assert reply.streamed and reply.body["output"] == [MESSAGE]
    assert "cut its stream after 4 events" in str(cut)


# -- endpoints that do not stream --------------------------------------------------------------------------


def test_a_json_answer_to_a_streamed_request_is_a_plain_reply() -> None:
    with CannedEndpoint(Canned(200, valid_response("whole"))) as endpoint:
        updates: list[Update] = []

        async def scenario() -> ModelReply:
            events, _ = recorded_stream()
            async with ResponsesClient(ModelEndpoint(base_url=endpoint.base_url), events=events) as client:
                return await client.create(BODY, turn=1, on_update=updates.append)

        reply = run(scenario())
    assert not reply.streamed and reply.assembled is None and updates == []
    assert reply.body["output"][0]["content"][0]["text"] == "whole"
    assert json.loads(endpoint.seen[0].body)["stream"] is True


@pytest.mark.parametrize(
    ("error", "feature"),
    [
        ({"message": "Streaming is not supported for this model", "param": None}, "stream"),
        ({"message": "Unsupported parameter", "param": "stream"}, "stream"),
        ({"message": "stream: extra inputs are not permitted"}, "stream"),
        ({"message": "Upstream provider rejected the request"}, None),  # "upstream" is not "stream"
    ],
)
def test_an_error_naming_stream_is_the_missing_stream_feature(
    error: dict[str, Any], feature: str | None
) -> None:
    with CannedEndpoint(Canned(400, {"error": {"type": "invalid_request_error", **error}})) as endpoint:
        async def scenario() -> None:
            events, _ = recorded_stream()
            async with ResponsesClient(ModelEndpoint(base_url=endpoint.base_url), events=events) as client:
                await client.create(BODY, turn=1)

        with pytest.raises(ModelError) as failed:
            run(scenario())
    if feature is None:
        assert not isinstance(failed.value, ModelFeatureUnsupported)
        return
    assert isinstance(failed.value, ModelFeatureUnsupported) and failed.value.feature == "stream"
    assert str(failed.value).startswith("this endpoint does not stream responses; run with --no-stream (")
    assert not isinstance(failed.value, ModelUnreachable)


def test_a_stream_that_contradicts_itself_is_recorded_and_warned_about() -> None:
    events = stream_events()
    changed = {**MESSAGE, "content": [{"type": "output_text", "text": "Bye", "annotations": []}]}
    final = event(6, {"type": "response.completed", "response": {**SHELL, "status": "completed",
                                                                  "output": [changed]}})
    swapped = [*events[:3], events[4], events[3], events[5], final]
    reply, _, recorder = outcome(serving(whole(swapped)))
    assert isinstance(reply, ModelReply) and reply.body["output"] == [changed]  # the terminal event's
    (response,) = recorder.records("model_response")
    assert response["differences"] == ["output[0] (message msg_1): content differ from the stream's item"]
    assert [r["text"] for r in recorder.records("notice")] == [
        "the model endpoint's answer to turn 1: its response differs from the items it streamed: output[0] "
        "(message msg_1): content differ from the stream's item",
        "the model endpoint's answer to turn 1: its stream was out of order: event 4 "
        "(response.output_text.delta): sequence_number 3 after 4: out of order (and 1 more)",
    ]
