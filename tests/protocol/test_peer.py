"""The Peer: pairing answers by id, timeouts and cancellation (notifications/cancelled),
initialize never cancelled, close() failing everything at once, late answers ignored,
and incoming requests answered (or not) the way the lifecycle spec says.

Every message the peer sends goes through the real encoder and decoder, as on a wire."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from toolrelay.errors import RequestTimeout, RpcError, TransportError
from toolrelay.protocol import jsonrpc
from toolrelay.protocol.exchange import Exchange
from toolrelay.protocol.jsonrpc import JSONObject, Message, Request
from toolrelay.protocol.peer import Peer


class Wire:
    """What a Peer sent, decoded from its exact wire bytes."""

    def __init__(self) -> None:
        self.sent: list[JSONObject] = []

    def send(self, message: JSONObject) -> None:
        data = jsonrpc.encode(message)
        assert b"\n" not in data
        self.sent.append(json.loads(data))

    def of_method(self, method: str) -> list[JSONObject]:
        return [m for m in self.sent if m.get("method") == method]

    def answers(self) -> list[JSONObject]:
        return [m for m in self.sent if "result" in m or "error" in m]


class Trace:
    """A Tracer that notes every message with its tag."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any, Any]] = []

    def sent(self, message: JSONObject, tag: Any, delivered: bool = True) -> None:
        self.events.append(("sent", message.get("id", message.get("method")), tag))

    def received(self, message: Message, tag: Any, elapsed: float | None) -> None:
        self.events.append(("received", getattr(message, "id", None), tag))


def _answer(peer: Peer, mcp_id: Any, result: JSONObject) -> None:
    peer.receive(jsonrpc.decode(jsonrpc.encode(jsonrpc.response(mcp_id, result))))


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(test())


# -- outgoing requests ----------------------------------------------------------------------


def test_answers_pair_by_id_even_out_of_order() -> None:
    async def scenario() -> None:
        wire = Wire()
        peer = Peer(wire.send, first_id=10)
        first = asyncio.ensure_future(peer.call("tools/call", {"name": "a"}))
        second = asyncio.ensure_future(peer.call("tools/call", {"name": "b"}))
        await asyncio.sleep(0)
        assert [m["id"] for m in wire.sent] == [10, 11]
        _answer(peer, 11, {"which": "b"})
        _answer(peer, 10, {"which": "a"})
        a, b = await first, await second
        assert (a.mcp_id, a.result, b.mcp_id, b.result) == (10, {"which": "a"}, 11, {"which": "b"})
        assert a.request == wire.sent[0]
        assert a.response == {"jsonrpc": "2.0", "id": 10, "result": {"which": "a"}}
        assert a.elapsed >= 0 and peer.pending_count == 0

    run(scenario)


def test_on_answer_sees_the_answer_before_the_next_message_is_dispatched() -> None:
    async def scenario() -> None:
        wire = Wire()
        seen: list[str] = []
        peer = Peer(wire.send, on_request=lambda request: seen.append(f"request {request.method}") or {})
        def answered(exchange: Exchange) -> None:
            seen.append(f"answer {exchange.result}")

        call = asyncio.ensure_future(peer.call("tools/call", {"name": "a"}, on_answer=answered))
        await asyncio.sleep(0)
        _answer(peer, wire.sent[0]["id"], {"task": "t-1"})  # the answer, then at once the server's request
        peer.receive(_request(7, "elicitation/create"))
        assert seen == ["answer {'task': 't-1'}", "request elicitation/create"]  # the caller has not run yet
        assert (await call).result == {"task": "t-1"}

    run(scenario)


def test_string_id_answer_does_not_pair_with_integer_request() -> None:
    async def scenario() -> None:
        peer = Peer(Wire().send)
        call = asyncio.ensure_future(peer.call("ping", timeout=0.2))
        await asyncio.sleep(0)
        _answer(peer, "1", {})  # "1" is not 1
        with pytest.raises(RequestTimeout):
            await call

    run(scenario)


def test_error_answer_stays_in_the_exchange_and_request_raises() -> None:
    async def scenario() -> None:
        wire = Wire()
        peer = Peer(wire.send)
        call = asyncio.ensure_future(peer.call("tools/call"))
        asks = asyncio.ensure_future(peer.request("tools/list"))
        await asyncio.sleep(0)
        for mcp_id in (1, 2):
            error = jsonrpc.error_response(mcp_id, -32602, "bad", {"f": 1})
            peer.receive(jsonrpc.decode(jsonrpc.encode(error)))
        exchange = await call
        assert exchange.result is None and exchange.error is not None
        assert (exchange.error.code, exchange.error.message, exchange.error.data) == (-32602, "bad", {"f": 1})
        with pytest.raises(RpcError) as caught:
            await asks
        assert (caught.value.code, caught.value.rpc_message, str(caught.value)) == (
            -32602, "bad", "JSON-RPC error -32602: bad")

    run(scenario)


def test_timeout_sends_cancelled_and_a_late_answer_is_ignored() -> None:
    async def scenario() -> None:
        wire, trace = Wire(), Trace()
        peer = Peer(wire.send, tracer=trace)
        with pytest.raises(RequestTimeout) as caught:
            await peer.call("tools/call", {"name": "slow"}, timeout=0.05, tag="call_A")
        assert str(caught.value) == (
            "tools/call request 1 got no answer within 0.05 s (a cancellation was sent)")
        assert wire.of_method("notifications/cancelled") == [{
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "timed out after 0.05 s"}}]
        assert peer.pending_count == 0
        _answer(peer, 1, {"late": True})  # seen by the tracer, paired with nothing
        assert trace.events == [
            ("sent", 1, "call_A"), ("sent", "notifications/cancelled", "call_A"), ("received", 1, None)]

    run(scenario)


def test_each_request_times_out_at_its_own_deadline() -> None:
    """One timer serves every deadline: a shorter timeout sent later still fires first,
    and an answered request never times out."""

    async def scenario() -> None:
        wire = Wire()
        peer = Peer(wire.send)
        loop = asyncio.get_running_loop()
        started = loop.time()
        failed_at: dict[str, float] = {}

        async def timed(name: str, timeout: float) -> None:
            with pytest.raises(RequestTimeout):
                await peer.call("tools/call", {"name": name}, timeout=timeout)
            failed_at[name] = loop.time() - started

        answered = asyncio.ensure_future(peer.call("tools/call", {"name": "answered"}, timeout=0.05))
        slow = asyncio.ensure_future(timed("slow", 0.4))
        quick = asyncio.ensure_future(timed("quick", 0.1))
        await asyncio.sleep(0)
        _answer(peer, 1, {})
        assert (await answered).result == {}
        await asyncio.gather(slow, quick)
        assert list(failed_at) == ["quick", "slow"]
        assert 0.1 <= failed_at["quick"] < 0.3 and 0.4 <= failed_at["slow"] < 0.8
        cancelled = [m["params"]["requestId"] for m in wire.of_method("notifications/cancelled")]
        assert cancelled == [3, 2]

    run(scenario)


def test_a_held_request_keeps_its_clock_still_and_overlapping_holds_count_once() -> None:
    """While the other side's questions for a call are answered (``hold``), the call never
    times out; afterwards its deadline is later by the time held, counted once for two holds.
    A hold names our request by its id: another request with the same tag (two tasks of a
    batch whose calls are both ``call_1``) keeps its own clock."""

    async def scenario() -> None:
        peer = Peer(Wire().send)
        loop = asyncio.get_running_loop()
        started = loop.time()
        call = asyncio.ensure_future(peer.call("tools/call", {"name": "asks"}, timeout=0.2, tag="call_1"))
        other = asyncio.ensure_future(peer.call("tools/call", {"name": "other"}, timeout=0.2, tag="call_1"))
        await asyncio.sleep(0)
        asking = peer.pending_ids("tools/call")[0]
        peer.hold(asking)
        peer.hold(asking)  # two questions at once
        await asyncio.sleep(0.4)  # past the timeout: only call_B's other request times out
        assert not call.done() and other.done() and isinstance(other.exception(), RequestTimeout)
        peer.release(asking)
        await asyncio.sleep(0.1)
        assert not call.done()  # still held by the second question
        peer.release(asking)
        with pytest.raises(RequestTimeout):
            await call
        # 0.2 s of its own, after 0.5 s held (once): never 0.2 + 2 × 0.5
        assert 0.65 <= loop.time() - started < 1.0

    run(scenario)


def test_caller_cancellation_sends_cancelled() -> None:
    async def scenario() -> None:
        wire = Wire()
        peer = Peer(wire.send)
        call = asyncio.ensure_future(peer.call("tools/call"))
        await asyncio.sleep(0)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert wire.of_method("notifications/cancelled")[0]["params"] == {
            "requestId": 1, "reason": "cancelled by the client"}
        assert peer.pending_count == 0

    run(scenario)


def test_a_caller_cancelled_mid_request_can_tell_which_request_it_abandoned() -> None:
    async def caller(peer: Peer) -> int | str | None:
        sent: list[Exchange] = []
        await peer.call("tools/list")
        try:
            await peer.call("tools/call", tag="call_A", on_sent=sent.append)
        except asyncio.CancelledError:  # the cancellation carries no value; on_sent was told
            return sent[0].mcp_id if [e.method for e in sent] == ["tools/call"] else None
        return None

    async def scenario() -> None:
        wire, called = Wire(), asyncio.Event()

        def send(message: JSONObject) -> None:
            wire.send(message)
            if message.get("method") == "tools/call":
                called.set()

        peer = Peer(send)
        task = asyncio.ensure_future(caller(peer))
        await asyncio.sleep(0)
        _answer(peer, 1, {"tools": []})
        await called.wait()
        task.cancel()
        assert await task == 2

    run(scenario)


def test_initialize_is_never_cancelled() -> None:
    async def scenario() -> None:
        wire = Wire()
        peer = Peer(wire.send)
        with pytest.raises(RequestTimeout) as caught:
            await peer.call("initialize", {}, timeout=0.05)
        assert str(caught.value) == "initialize request 1 got no answer within 0.05 s"
        call = asyncio.ensure_future(peer.call("initialize", {}))
        await asyncio.sleep(0)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert wire.of_method("notifications/cancelled") == []

    run(scenario)


def test_close_fails_every_pending_request_at_once() -> None:
    async def scenario() -> None:
        wire = Wire()
        peer = Peer(wire.send)
        calls = [asyncio.ensure_future(peer.call("tools/call", timeout=30)) for _ in range(3)]
        await asyncio.sleep(0)
        loop = asyncio.get_running_loop()
        started = loop.time()
        peer.close(TransportError("server exited"))
        done, _ = await asyncio.wait(calls, timeout=5)
        assert len(done) == 3 and loop.time() - started < 1  # none waits for its timeout
        for call in calls:
            with pytest.raises(TransportError, match=r"^server exited$"):
                call.result()
        assert peer.pending_count == 0
        assert wire.of_method("notifications/cancelled") == []  # nobody to tell
        with pytest.raises(TransportError, match=r"^server exited$"):
            await peer.call("ping")
        _answer(peer, 1, {})  # an answer after close harms nothing

    run(scenario)


def test_send_failure_leaves_nothing_pending() -> None:
    async def scenario() -> None:
        def broken(message: JSONObject) -> None:
            raise TransportError("pipe closed")

        peer = Peer(broken)
        with pytest.raises(TransportError, match="pipe closed"):
            await peer.call("ping")
        assert peer.pending_count == 0

    run(scenario)


# -- incoming requests -------------------------------------------------------------------------


def _request(mcp_id: Any, method: str, params: JSONObject | None = None) -> Message:
    return jsonrpc.decode(jsonrpc.encode(jsonrpc.request(mcp_id, method, params)))


def test_handler_results_and_errors(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        wire = Wire()

        def handle(request: Request) -> JSONObject | Awaitable[JSONObject]:
            if request.method == "sync":
                return {"ok": 1}
            if request.method == "rpc":
                raise RpcError(-32602, "Invalid params: x", {"field": "x"})
            if request.method == "bug":
                raise ValueError("boom")
            return failing()

        async def failing() -> JSONObject:
            await asyncio.sleep(0)
            raise KeyError("missing")

        peer = Peer(wire.send, on_request=handle)
        for mcp_id, method in enumerate(["sync", "rpc", "bug", "async-bug"]):
            peer.receive(_request(mcp_id, method))
        await asyncio.sleep(0.01)
        assert sorted(wire.answers(), key=lambda m: m["id"]) == [
            {"jsonrpc": "2.0", "id": 0, "result": {"ok": 1}},
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid params: x",
                                                  "data": {"field": "x"}}},
            {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603,
                                                  "message": "Internal error: ValueError: boom"}},
            {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603,
                                                  "message": "Internal error: KeyError: 'missing'"}},
        ]

    caplog.set_level(logging.ERROR, logger="toolrelay.protocol")
    run(scenario)
    assert [r.getMessage() for r in caplog.records] == [
        "handler for bug failed", "handler for async-bug failed"]


def test_without_a_handler_requests_get_method_not_found() -> None:
    wire = Wire()
    Peer(wire.send).receive(_request("x", "tools/list"))
    assert wire.sent == [{"jsonrpc": "2.0", "id": "x", "error": {"code": -32601,
                                                                "message": "Method not found: tools/list"}}]


def test_cancelled_async_handler_sends_no_response() -> None:
    async def scenario() -> None:
        wire = Wire()
        seen: list[str] = []

        async def forever() -> JSONObject:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                seen.append("cancelled")
                raise
            return {}

        peer = Peer(wire.send, on_request=lambda request: forever() if request.method == "slow" else {})
        peer.receive(_request(5, "slow"))
        await asyncio.sleep(0)
        cancel = jsonrpc.notification("notifications/cancelled", {"requestId": 5, "reason": "user"})
        peer.receive(jsonrpc.decode(jsonrpc.encode(cancel)))
        await asyncio.sleep(0.01)
        assert seen == ["cancelled"]
        assert wire.answers() == []
        peer.receive(_request(6, "fast"))  # the session goes on
        assert wire.answers() == [{"jsonrpc": "2.0", "id": 6, "result": {}}]

    run(scenario)


def test_answer_to_a_departed_client_is_dropped_quietly() -> None:
    def gone(message: JSONObject) -> None:
        raise TransportError("stdout closed")

    peer = Peer(gone, on_request=lambda request: {})
    peer.receive(_request(1, "ping"))  # must not raise


def test_two_peers_over_a_wire_pair_concurrent_calls() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()

        async def slow_echo(request: Request) -> JSONObject:
            params = request.params or {}
            await asyncio.sleep(params["delay"])
            return {"echo": params["n"]}

        def deliver(to: Callable[[], Peer]) -> Callable[[JSONObject], None]:
            return lambda message: loop.call_soon(to().receive, jsonrpc.decode(jsonrpc.encode(message)))

        server: Peer = Peer(deliver(lambda: client), on_request=slow_echo)
        client: Peer = Peer(deliver(lambda: server))
        results = await asyncio.gather(*(
            client.request("echo", {"n": n, "delay": (5 - n) * 0.01}) for n in range(5)))
        assert results == [{"echo": n} for n in range(5)]

    run(scenario)
