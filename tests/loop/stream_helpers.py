"""A scripted streaming model at the loop's seam, and an in-process tool server to time calls.

``ScriptedStream`` is a model client (the loop's ``ModelClient``): each turn is a list of
steps, each either a stream update handed to the loop's ``on_update`` (exactly as the
real client does inside its read loop) or a coroutine function the stream awaits before
going on — "hold the stream until the tool has been called" — so a test proves early
execution by construction, without sleeps. ``Box`` is a ``ToolService`` whose calls
announce their arrival and wait for the test's go-ahead.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from toolrelay.assembly.catalogs import connect
from toolrelay.errors import ModelError
from toolrelay.events import Event, EventStream
from toolrelay.inprocess_servers import in_process_server
from toolrelay.model import ModelReply
from toolrelay.protocol import stream
from toolrelay.protocol.responses import DIALECT
from toolrelay.relay.loop import Relay, RunLimits, RunResult
from toolrelay.relay.run_events import RunEvent
from toolrelay.relay.stages.consent import Approver, approve_all
from toolrelay.relay.stages.namespaces import DeclareMode
from toolrelay.relay.stages.request import RequestSettings
from toolrelay.server.app import CallContext

WAIT = 10.0
"""Seconds a step waits for what must happen before a test calls it a hang."""

Step = stream.Update | Callable[[], Awaitable[None]]


def call_item(call_id: str, name: str, arguments: dict[str, Any] | str, index: int = 0) -> dict[str, Any]:
    """A function_call of ``name``; a ``server.tool`` name is called as ``tool`` in namespace
    ``server`` (``--declare namespaces``)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    namespace, dot, bare = name.partition(".")
    named = {"name": bare, "namespace": namespace} if dot else {"name": name}
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, **named,
            "arguments": text, "status": "completed"}


def message_item(text: str, item_id: str = "msg_1") -> dict[str, Any]:
    return {"type": "message", "id": item_id, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def response(*items: dict[str, Any], status: str = "completed", rid: str = "resp_1") -> dict[str, Any]:
    body: dict[str, Any] = {"id": rid, "object": "response", "status": status, "output": list(items)}
    if status == "failed":
        body["error"] = {"code": "server_error", "message": "the model broke down"}
    return body


def done(index: int, item: dict[str, Any]) -> stream.ItemDone:
    return stream.ItemDone(output_index=index, item=item)


def text(delta: str, index: int = 0, item_id: str = "msg_1") -> stream.TextDelta:
    return stream.TextDelta(output_index=index, item_id=item_id, content_index=0, delta=delta)


def ended(body: dict[str, Any]) -> stream.StreamEnded:
    return stream.StreamEnded(status=body["status"], response=body)


@dataclass
class Turn:
    """One scripted answer: the steps of its stream, then its Response (or an error)."""

    steps: list[Step]
    body: dict[str, Any]
    raises: ModelError | None = None
    json_answer: bool = False
    """Answer a whole JSON response even to ``stream: true`` (an endpoint that cannot stream)."""
    dialect: str = DIALECT
    """The dialect the reply names."""


@dataclass
class ScriptedStream:
    """The loop's model client, following ``turns``; every body it was sent in ``bodies``."""

    turns: list[Turn]
    bodies: list[dict[str, Any]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    """What happened, in order: ``stream N ended`` here, ``call NAME`` from the Box."""
    refuse_stream: ModelError | None = None
    """Raised (once) for a request asking to stream."""

    async def create(
        self, body: dict[str, Any], *, turn: int, on_update: Callable[[stream.Update], None] | None = None
    ) -> ModelReply:
        self.bodies.append(body)
        if self.refuse_stream is not None and body.get("stream") is True:
            refusal, self.refuse_stream = self.refuse_stream, None
            raise refusal
        script = self.turns[turn - 1]
        streamed = body.get("stream") is True and not script.json_answer
        for step in script.steps if streamed else []:
            if callable(step):
                await asyncio.wait_for(step(), WAIT)
            elif on_update is not None:
                on_update(step)
        self.log.append(f"stream {turn} ended")
        if script.raises is not None:
            raise script.raises
        return ModelReply(dialect=script.dialect, body=script.body, streamed=streamed)


class Box:
    """Tools ``look`` (read-only) and ``poke`` (not annotated); each call waits for ``release``."""

    name = "box"
    version = "1"
    instructions = None

    def __init__(self, log: list[str], *, held: bool = False) -> None:
        self.log = log
        self.arrived: dict[str, asyncio.Event] = {}
        self.release = asyncio.Event()
        if not held:
            self.release.set()

    def tools(self) -> list[dict[str, Any]]:
        schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
        return [
            {"name": "look", "inputSchema": schema, "annotations": {"readOnlyHint": True}},
            {"name": "poke", "inputSchema": schema},
        ]

    def seen(self, name: str) -> asyncio.Event:
        return self.arrived.setdefault(name, asyncio.Event())

    async def call(self, name: str, arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
        self.log.append(f"call {name}")
        self.seen(name).set()
        await self.release.wait()
        return {"content": [{"type": "text", "text": f"{name} {arguments.get('n')}"}], "isError": False}


class Told(list[RunEvent]):
    """The run events, as a list; ``seen(kind)`` is set once an event of that kind came."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[str, asyncio.Event] = {}

    def seen(self, kind: str) -> asyncio.Event:
        return self._seen.setdefault(kind, asyncio.Event())

    def append(self, event: RunEvent) -> None:
        super().append(event)
        self.seen(event.kind).set()


@dataclass
class Outcome:
    result: RunResult | None
    error: BaseException | None
    events: list[Event]
    told: list[RunEvent]
    model: ScriptedStream

    def kinds(self, kind: str) -> list[dict[str, Any]]:
        return [e.to_record() for e in self.events if e.event_kind == kind]


def run_relay(
    model: ScriptedStream,
    box: Box | None = None,
    *,
    limits: RunLimits | None = None,
    approve: Approver | None = approve_all,
    stream_answers: bool = True,
    told: list[RunEvent] | None = None,
    declare: DeclareMode = "flat",
) -> Outcome:
    """Run a task through the real loop and catalog (``box`` served in process); the run
    events go to ``told`` (a list a step may watch)."""
    events = EventStream()
    seen: list[Event] = []
    told = [] if told is None else told
    events.subscribe(seen.append)

    async def scenario() -> tuple[RunResult | None, BaseException | None]:
        service = box or Box(model.log)
        served = [in_process_server(service, name="box")]
        async with connect(served, events=events, declare=declare) as catalog:
            relay = Relay(catalog, model, RequestSettings(model="m", stream=stream_answers), events=events,
                          limits=limits, approve=approve, listener=told.append)
            try:
                return await relay.run("task"), None
            except ModelError as exc:
                return relay.result, exc

    result, error = asyncio.run(asyncio.wait_for(scenario(), 60))
    return Outcome(result=result, error=error, events=seen, told=told, model=model)
