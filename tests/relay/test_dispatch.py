"""Stages 3–5 for one call (relay.dispatch), against a fake server connection: every
outcome status, the events in order, consent, strict null-stripping and cancellation.

The same paths run end to end against real servers in tests/catalog and tests/loop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolrelay.errors import RequestTimeout, ServerExited
from toolrelay.events import Event, EventStream
from toolrelay.protocol import jsonrpc
from toolrelay.protocol.exchange import Exchange, Sent
from toolrelay.relay.dispatch import DispatchTable, dispatch
from toolrelay.relay.stages.arguments import ArgumentChecker
from toolrelay.relay.stages.consent import approve_all, refusing
from toolrelay.relay.stages.context import CallContext
from toolrelay.relay.stages.parse import FunctionCall
from toolrelay.relay.stages.result import CallOutcome
from toolrelay.relay.stages.route import Route, Router

RULE = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "head": {"type": "number"}},
    "required": ["path"],
}
WRITE = Route(alias="box__write", server="box", tool="write.file", rule=RULE)
READ = Route(alias="box__read", server="box", tool="read", rule=RULE, annotations={"readOnlyHint": True})
TEXT_RESULT = {"content": [{"type": "text", "text": "done"}]}
ERROR_RESULT = {"content": [{"type": "text", "text": "no such file"}], "isError": True}


class FakeServer:
    """A connection whose tools/call answers with ``answer`` (a result, an error response,
    an exception to raise, or None: never answer)."""

    number = 7

    def __init__(self, answer: dict[str, Any] | Exception | None = None) -> None:
        self.answer = answer
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.called = asyncio.Event()

    def refused_sampling(self, mcp_id: int | str | None) -> int:
        return 0  # it asks nothing of the client

    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, call_id: str | None = None,
        timeout: float | None = None, meta: Any = None, on_sent: Sent | None = None,
    ) -> Exchange:
        self.sent.append((name, arguments))
        self.meta = dict(meta or {})
        self.called.set()
        if isinstance(self.answer, Exception):
            raise self.answer
        if self.answer is None:
            await asyncio.Event().wait()  # a server that never answers
        request = jsonrpc.request(1, "tools/call", {"name": name, "arguments": arguments})
        exchange = Exchange(mcp_id=1, method="tools/call", request=request)
        assert self.answer is not None
        exchange.settle(jsonrpc.classify({"jsonrpc": "2.0", "id": 1, **self.answer}))
        return exchange


def table_for(
    server: FakeServer, events: EventStream, *, strict: frozenset[str] = frozenset()
) -> DispatchTable:
    return DispatchTable(
        router=Router([WRITE, READ]), connections={"box": server}, strict_aliases=strict,
        checker=ArgumentChecker(), events=events,
    )


def model_call(alias: str, text: str, call_id: str = "", malformed: str | None = None) -> FunctionCall:
    return FunctionCall(call_id=call_id, name=alias, arguments_text=text, problem=malformed)


def run_one(
    server: FakeServer, alias: str, text: str, *, call_id: str = "", malformed: str | None = None,
    strict: frozenset[str] = frozenset(), **context: Any,
) -> tuple[CallOutcome, list[Event]]:
    events = EventStream()
    seen: list[Event] = []
    events.subscribe(seen.append)
    table = table_for(server, events, strict=strict)
    call = model_call(alias, text, call_id, malformed)
    outcome = asyncio.run(dispatch(table, call, CallContext(**context)))
    return outcome, seen


def kinds(seen: list[Event]) -> list[str]:
    return [e.event_kind for e in seen]


@pytest.mark.parametrize(
    ("answer", "status", "kind"),
    [
        ({"result": TEXT_RESULT}, "ok", None),
        ({"result": ERROR_RESULT}, "tool_error", None),
        ({"error": {"code": -32602, "message": "bad params"}}, "protocol_error", None),
        (ServerExited("box", 3, "disk on fire"), "transport_error", "exited"),
        (RequestTimeout("tools/call request 1 got no answer within 1 s"), "transport_error", "timeout"),
    ],
)
def test_a_sent_call_ends_in_the_class_of_its_answer(
    answer: dict[str, Any] | Exception, status: str, kind: str | None
) -> None:
    server = FakeServer(answer)
    outcome, seen = run_one(server, "box__read", '{"path": "a.txt"}', call_id="call_1")
    assert (outcome.status, outcome.transport_kind) == (status, kind)
    assert (outcome.server, outcome.tool, outcome.connection) == ("box", "read", 7)
    assert server.sent == [("read", {"path": "a.txt"})]
    assert kinds(seen) == ["call_parsed", "call_routed", "call_outcome"]
    assert seen[-1].to_record()["outcome"]["status"] == status


def test_an_unknown_alias_is_not_sent_and_the_message_lists_the_tools() -> None:
    server = FakeServer({"result": TEXT_RESULT})
    outcome, seen = run_one(server, "box__reed", "{}")
    assert outcome.status == "unknown_tool" and outcome.server is None
    assert outcome.message == (
        "unknown tool 'box__reed'; available tools: box__read, box__write; "
        "did you mean 'box__read' or 'box__write'?"
    )
    assert server.sent == [] and kinds(seen) == ["call_parsed", "call_outcome"]


@pytest.mark.parametrize(
    ("text", "malformed", "said"),
    [
        ("{path}", None, "not valid JSON"),
        ('{"path": 5}', None, "path"),
        ('{"path": "a"}', "the function_call item has no call_id", "has no call_id"),
    ],
)
def test_arguments_that_cannot_be_sent_are_invalid_and_not_sent(
    text: str, malformed: str | None, said: str
) -> None:
    server = FakeServer({"result": TEXT_RESULT})
    outcome, seen = run_one(server, "box__read", text, malformed=malformed)
    assert outcome.status == "invalid_arguments" and said in outcome.message
    assert (outcome.server, outcome.tool) == ("box", "read")
    assert server.sent == [] and kinds(seen) == ["call_parsed", "call_routed", "call_outcome"]


def test_consent_refuses_a_write_but_never_asks_about_a_read_only_tool() -> None:
    refuse = refusing("nobody to ask")
    refused, _ = run_one(FakeServer({"result": TEXT_RESULT}), "box__write", '{"path": "a"}', approve=refuse)
    assert refused.status == "not_approved"
    assert refused.message == (
        "tool write.file on server box is not marked read-only and was not approved (nobody to ask)"
    )
    reader = FakeServer({"result": TEXT_RESULT})
    read, _ = run_one(reader, "box__read", '{"path": "a"}', approve=refuse)
    assert read.status == "ok" and reader.sent == [("read", {"path": "a"})]
    writer = FakeServer({"result": TEXT_RESULT})
    approved, _ = run_one(writer, "box__write", '{"path": "a"}', approve=approve_all)
    assert approved.status == "ok" and writer.sent == [("write.file", {"path": "a"})]


def test_nulls_are_stripped_only_for_aliases_offered_strict() -> None:
    text = '{"path": "a", "head": null}'
    strict_server = FakeServer({"result": TEXT_RESULT})
    stripped, _ = run_one(strict_server, "box__read", text, strict=frozenset({"box__read"}))
    assert stripped.status == "ok" and strict_server.sent == [("read", {"path": "a"})]
    plain, _ = run_one(FakeServer({"result": TEXT_RESULT}), "box__read", text)
    assert plain.status == "invalid_arguments" and "head" in plain.message


@pytest.mark.parametrize(("stop_reason", "message"), [
    (None, "the run was interrupted before the call ended"),
    (lambda: "the run's time limit (2 s) ran out before the call ended",
     "the run's time limit (2 s) ran out before the call ended"),
])
def test_a_cancelled_call_records_its_outcome_and_the_cancellation_goes_on(
    stop_reason: Any, message: str
) -> None:
    server = FakeServer(None)
    events = EventStream()
    seen: list[Event] = []
    events.subscribe(seen.append)

    async def main() -> None:
        table = table_for(server, events)
        call = asyncio.create_task(
            dispatch(table, model_call("box__read", '{"path": "a"}', "c9"),
                     CallContext(stop_reason=stop_reason))
        )
        await server.called.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(main())
    assert kinds(seen) == ["call_parsed", "call_routed", "call_outcome"]
    outcome = seen[-1].to_record()["outcome"]
    assert (outcome["status"], outcome["call_id"], outcome["message"]) == ("cancelled", "c9", message)
    # where the call got to: its route (the real peer adds the MCP id: tests/loop/test_stopped_runs.py)
    assert (outcome["alias"], outcome["server"], outcome["tool"]) == ("box__read", "box", "read")


class AnsweredThenStopped(FakeServer):
    """The answer has arrived (the peer settled the exchange it sent) when the stop comes:
    the task is cancelled before it resumes to read it."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, call_id: str | None = None,
        timeout: float | None = None, meta: Any = None, on_sent: Sent | None = None,
    ) -> Exchange:
        request = jsonrpc.request(4, "tools/call", {"name": name, "arguments": arguments})
        exchange = Exchange(mcp_id=4, method="tools/call", request=request)
        assert on_sent is not None
        on_sent(exchange)  # what Peer.call does once the request is on the wire
        exchange.settle(jsonrpc.classify({"jsonrpc": "2.0", "id": 4, "result": TEXT_RESULT}))
        self.called.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def test_a_call_whose_answer_arrived_before_the_stop_is_recorded_as_it_ended() -> None:
    server = AnsweredThenStopped()
    events = EventStream()
    seen: list[Event] = []
    events.subscribe(seen.append)
    stopped: list[CallOutcome] = []

    async def main() -> None:
        table = table_for(server, events)
        call = asyncio.create_task(
            dispatch(table, model_call("box__read", '{"path": "a"}', "c4"),
                     CallContext(on_stopped=stopped.append))
        )
        await server.called.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(main())
    outcome = seen[-1].to_record()["outcome"]
    assert (outcome["status"], outcome["mcp_id"], outcome["connection"]) == ("ok", 4, 7)
    assert [(o.status, o.result) for o in stopped] == [("ok", TEXT_RESULT)]


class Broken:
    """A hook whose own code fails, before or after the call."""

    def __init__(self, when: str) -> None:
        self.when = when

    async def before_call(self, call: FunctionCall, context: CallContext) -> str | None:
        if self.when == "before":
            raise KeyError("policy")
        return None

    async def after_call(self, call: FunctionCall, context: CallContext, outcome: CallOutcome) -> None:
        raise RuntimeError("the audit log is full")


def test_a_hook_that_fails_refuses_the_call_and_one_failing_after_it_is_a_warning() -> None:
    server = FakeServer({"result": TEXT_RESULT})
    refused, seen = run_one(server, "box__read", '{"path": "a"}', call_id="c1", hooks=[Broken("before")])
    assert (refused.status, refused.message) == ("refused_by_hook", "a call hook (Broken) failed: 'policy'")
    assert server.sent == []
    ran, seen = run_one(server, "box__read", '{"path": "a"}', call_id="c2", hooks=[Broken("after")])
    assert ran.status == "ok" and server.sent == [("read", {"path": "a"})]
    warnings = [e.to_record()["text"] for e in seen if e.event_kind == "notice"]
    assert warnings == ["a call hook (Broken) failed after call c2: the audit log is full"]
