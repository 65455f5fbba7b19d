"""Real runs of the loop against a scripted stream that waits for a call: early starts on record.

``HeldStream`` is a model client that streams scripted server-sent events and records
them as the model client does (``model_request``, one ``model_stream`` per event,
``model_response`` with the assembled body), assembling them with the live assembler;
a ``HOLD`` step stops the stream until a ``tools/call`` has reached the server, so the
call provably started while the response was still streaming. Tools are served in
process (``look`` read-only, ``poke`` not annotated); the transcript is the real writer's.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

from toolrelay.assembly.catalogs import connect
from toolrelay.events import (
    MCP_REQUEST,
    Event,
    EventStream,
    ModelRequestEvent,
    ModelResponseEvent,
    ModelStreamEvent,
)
from toolrelay.inprocess_servers import in_process_server
from toolrelay.model import ModelReply
from toolrelay.protocol.responses import DIALECT
from toolrelay.protocol.stream import StreamAssembler, StreamEvent, Update
from toolrelay.relay.loop import Relay, RunLimits, RunResult
from toolrelay.relay.stages.consent import approve_all
from toolrelay.relay.stages.request import RequestSettings
from toolrelay.server.app import CallContext
from toolrelay.transcript.writer import TranscriptWriter

HOLD: Final = {"hold": "until a tools/call reached the server"}
URL: Final = "http://127.0.0.1:9/v1/responses"


def call_item(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
            "arguments": json.dumps(arguments), "status": "completed"}


def message_item(text: str, item_id: str) -> dict[str, Any]:
    return {"type": "message", "id": item_id, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def sse_turn(rid: str, items: list[dict[str, Any]], *, hold_after: int | None = None,
             status: str = "completed") -> list[dict[str, Any]]:
    """The events of one streamed response (spec order), with ``HOLD`` after item ``hold_after``."""
    shell = {"id": rid, "object": "response", "status": "in_progress", "output": []}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": shell},
                                    {"type": "response.in_progress", "response": shell}]
    for index, item in enumerate(items):
        events.extend(_item_events(index, item))
        if index == hold_after:
            events.append(HOLD)
    final = {**shell, "status": status, "output": items}
    if status == "failed":
        final["error"] = {"code": "server_error", "message": "the model broke down"}
    events.append({"type": f"response.{status}", "response": final})
    numbered, number = [], 0
    for event in events:
        if event is not HOLD:
            event = {**event, "sequence_number": number}
            number += 1
        numbered.append(event)
    return numbered


def _item_events(index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
    where = {"output_index": index, "item_id": item["id"]}
    if item["type"] == "function_call":
        yield {"type": "response.output_item.added", "output_index": index,
               "item": {**item, "arguments": "", "status": "in_progress"}}
        yield {"type": "response.function_call_arguments.delta", **where, "delta": item["arguments"]}
        yield {"type": "response.function_call_arguments.done", **where, "arguments": item["arguments"]}
    else:
        text = item["content"][0]["text"]
        yield {"type": "response.output_item.added", "output_index": index,
               "item": {**item, "content": [], "status": "in_progress"}}
        part = {**where, "content_index": 0}
        yield {"type": "response.content_part.added", **part, "part": {"type": "output_text", "text": ""}}
        for start in range(0, len(text), 4):
            yield {"type": "response.output_text.delta", **part, "delta": text[start:start + 4]}
        yield {"type": "response.output_text.done", **part, "text": text}
        yield {"type": "response.content_part.done", **part, "part": item["content"][0]}
    yield {"type": "response.output_item.done", "output_index": index, "item": item}


class HeldStream:
    """A model client streaming ``turns`` (lists of event payloads, ``HOLD`` steps among them)."""

    def __init__(self, turns: list[list[dict[str, Any]]], events: EventStream) -> None:
        self.turns = turns
        self.events = events
        self.called = asyncio.Event()
        events.subscribe(self._watch)

    def _watch(self, event: Event) -> None:
        if event.event_kind == MCP_REQUEST and getattr(event, "method", None) == "tools/call":
            self.called.set()

    async def create(self, body: dict[str, Any], *, turn: int,
                     on_update: Callable[[Update], None] | None = None) -> ModelReply:
        self.events.emit(ModelRequestEvent(turn=turn, url=URL, body=body))
        assembler, index = StreamAssembler(), 0
        for payload in self.turns[turn - 1]:
            if payload is HOLD:
                await asyncio.wait_for(self.called.wait(), 10)
                continue
            data = json.dumps(payload)
            kind = payload["type"]
            self.events.emit(ModelStreamEvent(turn=turn, attempt=1, index=index, event=kind, data=data))
            for update in assembler.feed(StreamEvent(index=index, event=payload["type"], data=data)):
                if on_update is not None:
                    on_update(update)
            index += 1
        assembled = assembler.finish()
        self.events.emit(ModelResponseEvent(turn=turn, status=200, body=assembled.response, elapsed=0.01,
                                            streamed=True, stream_events=index,
                                            differences=assembled.differences))
        return ModelReply(dialect=DIALECT, body=assembled.response, streamed=True)


class Box:
    name = "box"
    version = "1"
    instructions = None

    def tools(self) -> list[dict[str, Any]]:
        schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
        return [{"name": "look", "inputSchema": schema, "annotations": {"readOnlyHint": True}},
                {"name": "poke", "inputSchema": schema}]

    def call(self, name: str, arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": f"{name} {arguments.get('n')}"}], "isError": False}


def held_run(
    folder: Path, turns: list[list[dict[str, Any]]], *, early: str = "read-only"
) -> tuple[Path, RunResult]:
    """Run the loop against ``turns``; the transcript written and the result."""
    transcript = folder / "run.jsonl"

    async def scenario() -> RunResult:
        events = EventStream()
        writer = TranscriptWriter(transcript, "held")
        events.subscribe(writer)
        try:
            async with connect([in_process_server(Box(), name="box")], events=events) as catalog:
                relay = Relay(catalog, HeldStream(turns, events), RequestSettings(model="m"), events=events,
                              limits=RunLimits(early=early), approve=approve_all, endpoint=URL)  # type: ignore[arg-type]
                return await relay.run("look around", run_id="held")
        finally:
            writer.close()

    return transcript, asyncio.run(asyncio.wait_for(scenario(), 60))
