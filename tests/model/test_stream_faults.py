"""The model client against the stand-in's streams: its rate and pauses, the faults it
injects (an error event, a cut, response.failed after a call, no response.completed) and
a terminal event held until a file exists. Every test takes the ``dialect`` fixture: it
runs with ``--api chat``'s client too, against the stand-in's chat stream (its faults,
pacing and pauses: docs/model.md), and asserts that stream's own updates where they differ
(a chat call closes as the next one starts, its text comes in chunks, its error is an
``error`` object)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Final

import pytest
from model_helpers import read_tool, run

from responses_helpers import Recorder
from testkit.dialect import Dialect
from toolrelay.errors import ModelError, ModelStreamCut
from toolrelay.events import EventStream
from toolrelay.model import ModelEndpoint, ModelReply
from toolrelay.model.chat_client import open_client
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.protocol.chat import response_view
from toolrelay.protocol.stream import ItemAdded, ItemDone, StreamEnded, StreamFailed, TextDelta, Update

CALL = {"name": "fs__read_text_file", "arguments": {"path": "a.txt", "head": 1, "tail": None}}
CALL_2 = {"name": "fs__read_text_file", "arguments": {"path": "b.txt", "head": 2, "tail": None}}


def body() -> dict[str, Any]:
    return {"model": "offline", "input": "go", "tools": [read_tool()], "stream": True}


Timed = list[tuple[float, Update]]


def ask(
    turns: list[dict[str, Any]], *, on_update: Any = None, api: str = "responses", **options: Any
) -> tuple[ModelReply | ModelError, Timed, Recorder]:
    """One streamed request to a stand-in playing ``turns``; the reply or error, each update
    with the time it was handed on, and the records."""
    recorder = Recorder()
    timed: Timed = []

    def record(update: Update) -> None:
        timed.append((time.monotonic(), update))
        if on_update is not None:
            on_update(update)

    async def scenario() -> ModelReply | ModelError:
        async with OfflineModel(parse_script({"turns": turns})) as model:
            endpoint = ModelEndpoint(base_url=model.base_url)
            async with open_client(api, endpoint, events=recorder.attach(EventStream()), backoff=0.01,
                                   **options) as client:
                try:
                    return await client.create(body(), turn=1, on_update=record)
                except ModelError as error:
                    return error

    return run(scenario()), timed, recorder


def answered(reply: ModelReply) -> dict[str, Any]:
    """The reply's body as a Responses object (a chat completion read by ``response_view``)."""
    return response_view(reply.body) if "choices" in reply.body else reply.body


def of(timed: Timed, kind: type) -> list[Any]:
    return [update for _, update in timed if isinstance(update, kind)]


def test_an_error_event_ends_the_reply_as_a_failed_response(dialect: Dialect) -> None:
    reply, timed, recorder = ask([{"calls": [CALL], "stream_fault": {"error_after": 3}}], api=dialect.api)
    assert isinstance(reply, ModelReply) and reply.streamed
    assert answered(reply)["status"] == "failed" and answered(reply)["error"]["code"] == "server_error"
    assert reply.assembled is not None and reply.assembled.terminal == "error"
    assert of(timed, StreamFailed)[0].message.startswith("The server had an error")
    last = json.loads(recorder.records("model_stream")[-1]["data"])
    assert last.get("type") == "error" or set(last) == {"error"}  # chat's: an error object, no event name


FIRST_ARGUMENTS: Final = '{"path":"a.txt","head":1,"tail":null}'


def test_response_failed_right_after_a_call_closed(dialect: Dialect) -> None:
    reply, timed, recorder = ask([{"preamble": "Reading both.", "calls": [CALL, CALL_2],
                                   "stream_fault": {"failed_after_call": True}}], api=dialect.api)
    assert isinstance(reply, ModelReply)
    assert answered(reply)["status"] == "failed"
    assert "".join(u.delta for u in of(timed, TextDelta)) == "Reading both."
    if dialect.chat:
        # a chat call closes as the next one starts: that frame came, then the error object; the
        # second call never closed and the message closes only with a finish chunk, which never came
        assert [(u.item["type"], u.item["arguments"]) for u in of(timed, ItemDone)] == [
            ("function_call", FIRST_ARGUMENTS)]
        (failed,) = of(timed, StreamFailed)
        assert failed.message.startswith("The server had an error") and not of(timed, StreamEnded)
        calls = reply.body["choices"][0]["message"]["tool_calls"]
        assert [call["function"]["arguments"] for call in calls] == [FIRST_ARGUMENTS, ""]
        assert reply.body["choices"][0]["finish_reason"] is None
        assert set(json.loads(recorder.records("model_stream")[-1]["data"])) == {"error"}
        return
    assert [u.item["type"] for u in of(timed, ItemDone)] == ["message", "function_call"]
    (ended,) = of(timed, StreamEnded)
    assert ended.status == "failed" and ended.response is not None
    # response.failed carries an empty output: the items that closed are what the reply holds
    assert [item["type"] for item in reply.body["output"]] == ["message", "function_call"]
    assert reply.body["status"] == "failed"
    assert reply.body["output"][1]["arguments"] == FIRST_ARGUMENTS


NO_END: Final = {"responses": "the stream ended without response.completed",
                  "chat": "the stream ended without a finish_reason"}
"""How a stream that ended before the answer's end is told (chat's end is its finish chunk)."""
OPENING: Final = {"responses": 2, "chat": 1}
"""The events that say nothing: response.created and .in_progress; chat's role chunk."""
TEXT_SAID: Final = {"responses": 5, "chat": 2}
"""The events through a message's first text delta (Responses: the item and part added first)."""


def test_a_stream_without_response_completed_is_a_cut(dialect: Dialect) -> None:
    unfinished = {"message": "Hello", "stream_fault": {"no_completed": True}}
    error, timed, recorder = ask([unfinished], api=dialect.api)
    assert isinstance(error, ModelStreamCut)
    assert NO_END[dialect.api] in str(error)
    assert of(timed, TextDelta)
    assert recorder.records("model_response")[0]["cut"].startswith("the stream ended")


def test_a_cut_after_created_and_in_progress_is_asked_again_and_a_later_cut_is_not(dialect: Dialect) -> None:
    # the stand-in answers the retry (the same turn) whole: its stream fault happens once
    opening = {"cut_after": OPENING[dialect.api]}
    reply, timed, recorder = ask([{"message": "Hello again", "stream_fault": opening}], api=dialect.api)
    assert isinstance(reply, ModelReply) and reply.attempts == 2
    assert "".join(u.delta for u in of(timed, TextDelta)) == "Hello again"
    assert [r["cut"] for r in recorder.records("model_response") if "cut" in r] == ["the connection closed"]
    said = TEXT_SAID[dialect.api]
    error, timed, _ = ask([{"message": "Hello", "stream_fault": {"cut_after": said}}, {"message": "never"}],
                          api=dialect.api)
    assert isinstance(error, ModelStreamCut) and f"after {said} events: the connection closed" in str(error)
    assert "".join(u.delta for u in of(timed, TextDelta)) == "Hello"


def test_the_terminal_event_is_held_until_the_file_appears(tmp_path: Path, dialect: Dialect) -> None:
    started = tmp_path / "tools-call-received"

    def on_update(update: Update) -> None:  # a relay that starts the call now creates the file
        if isinstance(update, ItemDone) and update.item["type"] == "function_call":
            started.write_text("called")

    # two calls: a chat call closes as the next one starts (the last one with the finish chunk)
    turn = {"calls": [CALL, CALL_2], "hold_completed_until_file": str(started), "hold_timeout": 20}
    reply, timed, _ = ask([turn], on_update=on_update, api=dialect.api)
    assert isinstance(reply, ModelReply) and answered(reply)["status"] == "completed"
    assert [type(u) for _, u in timed][-2:] == [ItemDone, StreamEnded]


def test_a_hold_that_times_out_ends_with_an_error_event(tmp_path: Path, dialect: Dialect) -> None:
    turn = {"calls": [CALL], "hold_completed_until_file": str(tmp_path / "never"), "hold_timeout": 0.2}
    reply, timed, _ = ask([turn], api=dialect.api)
    assert isinstance(reply, ModelReply) and answered(reply)["status"] == "failed"
    assert answered(reply)["error"]["code"] == "hold_timeout"
    message = answered(reply)["error"]["message"]
    assert f"until {tmp_path / 'never'} existed; it did not appear within 0.2 s" in message
    assert [type(u) for _, u in timed][-1] is StreamFailed


PIECES: Final = {"responses": "one| two| six| ten| red| blue| gold| jade| ruby| opal",
                  "chat": "one two |six ten |red blue| gold ja|de ruby |opal"}
"""The text's deltas: a Responses stream's one a token (about four characters), the stand-in's
chat chunks' eight characters each."""


def test_tokens_arrive_at_the_scripted_rate_with_pauses_between_items(dialect: Dialect) -> None:
    text = "one two six ten red blue gold jade ruby opal"  # 10 tokens (about four characters each)
    # chat pauses before each tool call after the first (its call closes as the next starts): two calls
    turn = {"preamble": text, "calls": [CALL, CALL_2], "tokens_per_second": 50, "pause": 0.3}
    reply, timed, _ = ask([turn], api=dialect.api, timeout=0.5)  # longer in all than the timeout, never idle
    assert isinstance(reply, ModelReply) and answered(reply)["status"] == "completed"
    deltas = [(at, u) for at, u in timed if isinstance(u, TextDelta)]
    assert "|".join(u.delta for _, u in deltas) == PIECES[dialect.api]
    assert deltas[-1][0] - deltas[0][0] >= (len(deltas) - 1) / 50 - 0.02  # an event each 1/50 s
    closed = [(at, u.item) for at, u in timed if isinstance(u, ItemDone)]
    if dialect.chat:
        (first, _), (second, _) = [(at, item) for at, item in closed if item["type"] == "function_call"]
        # the first closed with the second's opening delta, then came the pause
        assert second - first >= 0.3 - 0.02
        assert [item["type"] for _, item in closed] == ["function_call", "function_call", "message"]
        return
    message_done = next(at for at, item in closed if item["type"] == "message")
    call_added = next(at for at, u in timed if isinstance(u, ItemAdded) and u.item["type"] == "function_call")
    assert call_added - message_done >= 0.3 - 0.02


@pytest.mark.parametrize("rate", [None, 1000.0])
def test_a_streamed_answer_is_the_non_streamed_one(rate: float | None, dialect: Dialect) -> None:
    turn: dict[str, Any] = {"reasoning": "Two files.", "preamble": "Reading.", "calls": [CALL, CALL_2],
                            "after_calls": "Both asked for."}
    if rate:
        turn["tokens_per_second"] = rate
    streamed, _, _ = ask([turn], api=dialect.api)
    assert isinstance(streamed, ModelReply)

    async def plain() -> ModelReply:
        async with OfflineModel(parse_script({"turns": [turn]})) as model:
            endpoint = ModelEndpoint(base_url=model.base_url)
            async with open_client(dialect.api, endpoint, events=EventStream()) as client:
                return await client.create({**body(), "stream": False}, turn=1)

    whole = run(plain())
    assert not whole.streamed and streamed.streamed
    if dialect.chat:
        # the chunks assemble to the completion (a whole one adds "logprobs": null to its choice)
        (assembled,), (sent,) = streamed.body["choices"], whole.body["choices"]
        assert assembled["message"] == sent["message"] and assembled["finish_reason"] == sent["finish_reason"]
        assert streamed.body["usage"] == whole.body["usage"]
        assert sent["message"]["content"] == "Reading.Both asked for."  # one message: chat has no phases
        kinds = [item["type"] for item in answered(whole)["output"]]
        assert kinds == ["message", "function_call", "function_call"]  # no reasoning item in chat
        assert answered(streamed) == answered(whole)
        return
    assert streamed.body == whole.body
    kinds = [item["type"] for item in whole.body["output"]]
    assert kinds == ["reasoning", "message", "function_call", "function_call", "message"]
    assert whole.body["output"][1]["phase"] == "commentary"
