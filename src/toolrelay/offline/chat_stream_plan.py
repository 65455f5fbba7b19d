"""The stand-in's streamed chat answer: its ``chat.completion.chunk`` frames, paced, faulted
and held as a script entry's ``StreamSettings`` say (the chat side of ``stream_plan``).

The same script keys as the Responses stream, read in chat's terms. An "event" is one
``data:`` frame (``[DONE]`` counts, as the client's assembler counts it), and the chat
stream's terminal is its *finish chunk* (the one with ``finish_reason``): it is what closes
the last tool call and ends the answer (a stream may lack ``[DONE]`` or the usage chunk
and still be whole).

- ``cut_after: N``: the first N frames, then the connection closes (no ``[DONE]``);
- ``error_after: N``: the first N frames (never the finish chunk or later), then an
  ``error`` frame (``{"error": {...}}``, as the API writes a mid-stream failure) ends it;
- ``failed_after_call``: the frames through the one that closed the first tool call (the
  next call's opening delta, or the finish chunk), then the ``error`` frame;
- ``no_completed``: every frame before the finish chunk, then the answer ends;
- ``pause``: after the opening delta of each tool call but the first (the frame that closed
  the call before it, as a Responses pause follows an item's ``output_item.done``);
- ``hold_completed_until_file``: the finish chunk waits until the file exists, else an
  ``error`` frame with code ``hold_timeout`` ends the stream. A call closes in chat only
  when the next call starts, so a test proving early execution scripts two calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from .stream_plan import SERVER_ERROR, Step, StreamPlan
from .stream_script import StreamFault, StreamSettings

__all__ = ["DONE_FRAME", "ChatFrames", "chat_frame", "chat_stream_plan"]

DONE_FRAME: Final = b"data: [DONE]\n\n"


def chat_frame(chunk: dict[str, Any]) -> bytes:
    """One ``data:`` frame of a chat stream."""
    return f"data: {json.dumps(chunk, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()


@dataclass(frozen=True, slots=True)
class ChatFrames:
    """A chat stream's frames (``[DONE]`` last) and where its tool calls start and it finishes."""

    frames: tuple[bytes, ...]
    call_starts: tuple[int, ...]
    """The frame index of each tool call's opening delta (the one with its ``id``)."""
    finish: int
    """The frame index of the finish chunk."""

    @classmethod
    def of(cls, chunks: list[dict[str, Any]]) -> ChatFrames:
        starts, finish = [], len(chunks)
        for position, chunk in enumerate(chunks):
            choice = (chunk.get("choices") or [{}])[0]
            delta = choice.get("delta") or {}
            if any("id" in call for call in delta.get("tool_calls") or []):
                starts.append(position)
            if choice.get("finish_reason") is not None and finish == len(chunks):
                finish = position
        frames = (*(chat_frame(chunk) for chunk in chunks), DONE_FRAME)
        return cls(frames=frames, call_starts=tuple(starts), finish=finish)


def _error_frame(code: str, message: str) -> bytes:
    return chat_frame({"error": {"message": message, "type": "server_error", "param": None, "code": code}})


_SERVER_ERROR: Final = _error_frame(SERVER_ERROR["code"], SERVER_ERROR["message"])


def chat_stream_plan(stream: ChatFrames, settings: StreamSettings) -> StreamPlan:
    """The timed writes that stream ``stream`` as ``settings`` say."""
    frames, cut = _with_fault(stream, settings.fault)
    held = stream.finish if settings.hold_file is not None and stream.finish < len(frames) else None
    spacing = 1 / settings.tokens_per_second if settings.tokens_per_second else 0.0
    steps: list[Step] = []
    clock = 0.0
    for position, data in enumerate(frames):
        # one write per frame (never merged): a reader sees each chunk arrive on its own
        steps.append(Step(clock, data, hold=position == held))
        clock += spacing
        if position in stream.call_starts[1:]:
            clock += settings.pause  # the call before closed with this frame: the pause follows
    failure = b""
    if held is not None:
        message = (f"the stand-in held the finish chunk until {settings.hold_file} existed; it did not "
                   f"appear within {settings.hold_timeout:g} s")
        failure = _error_frame("hold_timeout", message)
    return StreamPlan(steps=tuple(steps), cut=cut, hold_file=settings.hold_file if held is not None else None,
                      hold_timeout=settings.hold_timeout, hold_failure=failure,
                      simple=not cut and held is None and not spacing and not settings.pause)


def _with_fault(stream: ChatFrames, fault: StreamFault | None) -> tuple[list[bytes], bool]:
    """The frames as the fault leaves them, and whether the connection is cut after them."""
    frames = list(stream.frames)
    if fault is None:
        return frames, False
    if fault.cut_after is not None:
        return frames[:fault.cut_after], True
    if fault.error_after is not None:
        return [*frames[:min(fault.error_after, stream.finish)], _SERVER_ERROR], False
    if fault.no_completed:
        return frames[:stream.finish], False
    # failed_after_call: the first call closes as the second starts, or at the finish chunk
    closing = stream.call_starts[1] if len(stream.call_starts) > 1 else stream.finish
    if not stream.call_starts:
        closing = stream.finish - 1
    return [*frames[:closing + 1], _SERVER_ERROR], False
