"""The stand-in's chat streams take the Responses stream keys (docs/model.md): a cut, an
error frame, a failure after a call, no finish chunk, a held finish chunk, and pauses. Every
chunk written is checked against the openai package's ``ChatCompletionChunk``; a fault
happens on a turn's first answer only."""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from openai.types.chat import ChatCompletionChunk

from toolrelay.offline import OfflineModel, parse_script

TOOL = {"type": "function", "function": {"name": "touch__look", "parameters": {
    "type": "object", "properties": {"what": {"type": "string"}}, "required": ["what"]}}}
LOOK = {"name": "touch__look", "arguments": {"what": "the notes"}}
LOOKS = [LOOK, {"name": "touch__look", "arguments": {"what": "the plan"}}]
BODY = {"model": "offline", "messages": [{"role": "user", "content": "look"}], "tools": [TOOL],
        "stream": True, "stream_options": {"include_usage": True}}


@dataclass
class ChatStream:
    """What one streamed chat answer wrote, frame by frame."""

    chunks: list[dict[str, Any]]
    """Every ``data:`` object before the end (chunks, and an ``error`` object if one came)."""
    done: bool
    """It ended with ``data: [DONE]``."""
    cut: bool
    """The connection closed mid-answer."""

    @property
    def error(self) -> dict[str, Any] | None:
        return self.chunks[-1].get("error") if self.chunks else None

    def finishes(self) -> list[str]:
        return [c["finish_reason"] for chunk in self.chunks for c in chunk.get("choices") or []
                if c.get("finish_reason")]

    def arguments(self) -> dict[int, str]:
        """Each tool call's arguments as streamed so far, by index."""
        found: dict[int, str] = {}
        for chunk in self.chunks:
            for choice in chunk.get("choices") or []:
                for call in (choice.get("delta") or {}).get("tool_calls") or []:
                    piece = call["function"].get("arguments", "")
                    found[call["index"]] = found.get(call["index"], "") + piece
        return found


def stream(model: OfflineModel) -> ChatStream:
    """One streamed chat request, read to its end or its cut; every chunk type-checked."""
    where = urlsplit(model.base_url)
    connection = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=30)
    raw, cut = b"", False
    try:
        connection.request("POST", f"{where.path}/chat/completions", json.dumps(BODY),
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        assert response.status == 200 and response.getheader("Content-Type") == "text/event-stream"
        try:
            while piece := response.read1(65536):
                raw += piece
        except (http.client.IncompleteRead, ConnectionError):
            cut = True
    finally:
        connection.close()
    frames = [block.removeprefix("data: ") for block in raw.decode().split("\n\n") if block]
    done = bool(frames) and frames[-1] == "[DONE]"
    chunks = [json.loads(frame) for frame in (frames[:-1] if done else frames)]
    for chunk in chunks:
        if "error" not in chunk:
            ChatCompletionChunk.model_validate(chunk)
    return ChatStream(chunks=chunks, done=done, cut=cut)


def answered(turn: dict[str, Any]) -> ChatStream:
    with OfflineModel(parse_script({"turns": [turn]})) as model:
        return stream(model)


def test_a_whole_chat_stream_sends_each_call_by_index_and_ends_with_done() -> None:
    whole = answered({"calls": LOOKS})
    assert whole.done and not whole.cut and whole.finishes() == ["tool_calls"]
    assert whole.arguments() == {0: '{"what":"the notes"}', 1: '{"what":"the plan"}'}
    assert whole.chunks[-1]["choices"] == [] and whole.chunks[-1]["usage"]["total_tokens"] > 0


def test_cut_after_closes_the_connection_mid_arguments() -> None:
    cut = answered({"calls": LOOKS, "stream_fault": {"cut_after": 7}})
    assert cut.cut and not cut.done and len(cut.chunks) == 7 and not cut.finishes()
    assert cut.arguments() == {0: '{"what":"the notes"}', 1: '{"what":'}  # the second's half sent


def test_error_after_ends_with_an_error_object_never_past_the_finish_chunk() -> None:
    early = answered({"calls": [LOOK], "stream_fault": {"error_after": 4}})
    assert len(early.chunks) == 5 and not early.done and not early.cut
    said = "The server had an error while processing your request. Sorry about that!"
    assert early.error == {"message": said, "type": "server_error", "param": None, "code": "server_error"}
    late = answered({"calls": [LOOK], "stream_fault": {"error_after": 100}})
    assert late.error is not None and not late.finishes()  # the error takes the finish chunk's place


def test_failed_after_call_fails_once_the_first_call_closed() -> None:
    two = answered({"calls": LOOKS, "stream_fault": {"failed_after_call": True}})
    assert two.error is not None and two.error["code"] == "server_error" and not two.finishes()
    assert two.arguments() == {0: '{"what":"the notes"}', 1: ""}  # the second call's opening closed the first
    one = answered({"calls": [LOOK], "stream_fault": {"failed_after_call": True}})
    assert one.finishes() == ["tool_calls"] and one.error is not None  # a lone call closes at the finish


def test_no_completed_ends_the_answer_before_its_finish_chunk() -> None:
    unfinished = answered({"calls": LOOKS, "stream_fault": {"no_completed": True}})
    assert not unfinished.cut and not unfinished.done and unfinished.error is None
    assert not unfinished.finishes() and unfinished.arguments()[1] == '{"what":"the plan"}'


def test_a_fault_happens_on_the_turns_first_answer_only() -> None:
    script = parse_script({"turns": [{"calls": [LOOK], "stream_fault": {"cut_after": 1}}]})
    with OfflineModel(script) as model:
        first, again = stream(model), stream(model)
    assert first.cut and [list(c["choices"][0]["delta"]) for c in first.chunks] == [
        ["role", "content", "refusal"]]
    assert again.done and again.finishes() == ["tool_calls"]


def test_the_finish_chunk_waits_for_the_hold_file(tmp_path: Path) -> None:
    release = tmp_path / "release"
    got: list[ChatStream] = []
    script = parse_script({"turns": [{"calls": LOOKS, "hold_completed_until_file": str(release)}]})
    with OfflineModel(script) as model:
        reader = threading.Thread(target=lambda: got.append(stream(model)))
        reader.start()
        reader.join(0.3)
        assert reader.is_alive()  # held: the finish chunk is not written yet
        release.touch()
        reader.join(30)
    [held] = got
    assert held.done and held.finishes() == ["tool_calls"]


def test_a_hold_that_times_out_ends_with_a_hold_timeout_error(tmp_path: Path) -> None:
    started = time.monotonic()
    never = tmp_path / "never"
    held = answered({"calls": LOOKS, "hold_completed_until_file": str(never), "hold_timeout": 0.2})
    assert time.monotonic() - started >= 0.2
    assert held.error is not None and held.error["code"] == "hold_timeout" and not held.finishes()
    assert held.error["message"] == (f"the stand-in held the finish chunk until {never} existed; "
                                     "it did not appear within 0.2 s")


def test_a_pause_follows_the_frame_that_closed_the_call_before() -> None:
    with OfflineModel(parse_script({"turns": [{"calls": LOOKS, "pause": 0.3}]})) as model:
        started = time.monotonic()
        paused = stream(model)
        elapsed = time.monotonic() - started
    assert paused.done and elapsed >= 0.3
