"""A 2026-07-28 host's call whose upstream asks something: the ``input_required`` rounds.

A modern host's request is one exchange: the proxy cannot send it a request mid-call. So
its ``tools/call`` runs upstream as a task of the proxy's own, and the host's request is
answered with whichever comes first: the upstream's answer (the call is done), or an ask
of the upstream's (``asks.py``): then ``{resultType: "input_required", inputRequests:
{KEY: {method, params}}, requestState}``, while the upstream call waits (its clock
stands still: ``client/host``). The host answers and retries the call with
``inputResponses`` and the ``requestState`` unchanged (its SDK does); each answer goes
upstream to the request that asked, and the retry is answered the same way, until the
upstream's answer comes. A ``requestState`` the proxy did not give (or of a call given
up) is refused (-32602). A call whose host does not retry within ``wait`` seconds is
cancelled upstream.

Each round is recorded as the host request it is (``proxy_host`` in and out, with its
``round``, all under the first request's key), so ``verify`` follows the chain from the
first request to the answer that ends it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import RpcError
from ..events import EventStream
from ..protocol import jsonrpc
from ..protocol.jsonrpc import INVALID_PARAMS, JSONObject, Request, RequestId
from ..protocol.request_envelope import INPUT_REQUIRED, RESULT_TYPE
from ..server.request_stream import RequestStream
from .forward import Forwarder, host_call_id_of
from .host_calls import HostCall
from .records import IN, OUT, ProxyHostMessage

__all__ = ["DEFAULT_WAIT", "Rounds"]

log = logging.getLogger("toolrelay.proxy")

DEFAULT_WAIT: Final = 120.0
"""Seconds a call waits for its modern host's retry before it is cancelled upstream."""
STATE_KEY: Final = "requestState"
RESPONSES_KEY: Final = "inputResponses"
LEFT: Final = "host_left"
"""Why the host never answered an ask (what ``ask`` returns for the record, ``asks.py``)."""


@dataclass(slots=True, eq=False)
class _Ask:
    key: str
    method: str
    params: JSONObject
    answer: asyncio.Future[JSONObject]
    """The host's answer, ``{"result": ...}``."""


@dataclass(slots=True, eq=False)
class _Parked:
    key: str
    state: str
    version: str | None
    work: asyncio.Task[JSONObject] | None = None
    asks: dict[str, _Ask] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    round: int = 0
    numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    timer: asyncio.TimerHandle | None = None
    exchange: int | None = None
    """The round in progress's exchange (2026-07-28 HTTP: its POST's number), recorded with it."""


class Rounds:
    """Modern hosts' calls, and the upstream asks they answer by retrying."""

    def __init__(self, forwarder: Forwarder, events: EventStream, *, wait: float = DEFAULT_WAIT) -> None:
        self.forwarder = forwarder
        self.events = events
        self.wait = wait
        self.host: int | None = None
        """What ``proxy_host`` records as the host (an HTTP run: ``host_wire.MODERN_HOST``)."""
        self._by_key: dict[str, _Parked] = {}
        self._by_state: dict[str, _Parked] = {}

    async def call(self, alias: str, arguments: JSONObject, request: Request, version: str | None,
                   capabilities: JSONObject, *, stream: RequestStream | None = None) -> JSONObject:
        """The answer to one modern host ``tools/call``: the first of its rounds, or a retry
        (``stream``: the request's own, where the upstream's progress and logs go meanwhile)."""
        state = (request.params or {}).get(STATE_KEY)
        if state is not None:
            parked = self._by_state.get(state) if isinstance(state, str) else None
            if parked is None:
                raise RpcError(INVALID_PARAMS, "Invalid params: this requestState is not one toolrelay proxy "
                                               "gave, or its call was given up (no retry came within "
                                               f"{self.wait:g} s, the proxy's --input-wait) and cancelled")
            self._stop_timer(parked)
            parked.round += 1
            parked.exchange = stream.exchange if stream is not None else None
            self._record(parked, IN, request, request.raw)
            self._listening(parked, request, stream)
            self._take_answers(parked, request)
        else:
            key = self.forwarder.new_key()
            parked = _Parked(key=key, state=secrets.token_urlsafe(16), version=version,
                             exchange=stream.exchange if stream is not None else None)
            self._by_key[key] = parked
            self._by_state[parked.state] = parked
            self._record(parked, IN, request, request.raw)
            parked.work = asyncio.ensure_future(self.forwarder.forward(
                alias, arguments, request, version, capabilities=capabilities, key=key, record_host=False,
                stream=stream))
        try:
            return await self._next(parked, request)
        except asyncio.CancelledError:  # the host cancelled (stdio), or went away
            self._give_up(parked)
            raise
        finally:
            self._listening(parked, None, None)  # this round is answered: nobody hears the next news

    def _listening(self, parked: _Parked, request: Request | None, stream: RequestStream | None) -> None:
        """The round in progress, whose request hears what the upstream reports (None: none)."""
        call = self.forwarder.calls.get(parked.key)
        if call is not None:
            call.stream = stream
            call.round_request = request

    async def ask(self, call: HostCall, method: str, params: JSONObject,
                  upstream_id: RequestId | None) -> tuple[JSONObject, JSONObject]:
        """Ask the modern host of ``call`` (``asks.HostAsks.ask_modern``): its answer once it
        retries, and what to record of the round (the input key, the requestState)."""
        parked = self._by_key.get(call.key)
        if parked is None:
            return {"error": {"code": -1, "message": "toolrelay proxy: the host's call is over"}}, {}
        ask = _Ask(key=f"ask-{next(parked.numbers)}", method=method, params=params,
                   answer=asyncio.get_running_loop().create_future())
        parked.asks[ask.key] = ask
        parked.changed.set()
        try:
            answer = await ask.answer
        finally:
            parked.asks.pop(ask.key, None)
        left = answer.pop(LEFT, None)
        return answer, {"key": ask.key, "state": parked.state, **({LEFT: left} if left else {})}

    # -- rounds -------------------------------------------------------------------------------

    async def _next(self, parked: _Parked, request: Request) -> JSONObject:
        work = parked.work
        assert work is not None
        while True:
            if work.done():
                return self._done(parked, request, work)
            waiting = [ask for ask in parked.asks.values() if not ask.answer.done()]
            if waiting:
                return self._input_required(parked, request, waiting)
            parked.changed.clear()
            changed = asyncio.ensure_future(parked.changed.wait())
            try:
                await asyncio.wait((work, changed), return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
            await asyncio.sleep(0)  # asks made together are asked together

    def _done(self, parked: _Parked, request: Request, work: asyncio.Task[JSONObject]) -> JSONObject:
        self._forget(parked)
        try:
            result = work.result()
        except RpcError as exc:
            self._record(parked, OUT, request, jsonrpc.error_response(request.id, exc.code, exc.rpc_message,
                                                                      exc.data))
            raise
        self._record(parked, OUT, request, jsonrpc.response(request.id, result))
        return result

    def _input_required(self, parked: _Parked, request: Request, waiting: list[_Ask]) -> JSONObject:
        asked: JSONObject = {
            RESULT_TYPE: INPUT_REQUIRED,
            "inputRequests": {ask.key: {"method": ask.method, "params": ask.params} for ask in waiting},
            STATE_KEY: parked.state,
        }
        self._record(parked, OUT, request, jsonrpc.response(request.id, asked))
        parked.timer = asyncio.get_running_loop().call_later(self.wait, self._no_retry, parked)
        return asked

    def _take_answers(self, parked: _Parked, request: Request) -> None:
        given = (request.params or {}).get(RESPONSES_KEY)
        if not isinstance(given, dict):
            return  # nothing answered: what is still asked is asked again
        for key, value in given.items():
            ask = parked.asks.get(key)
            if ask is not None and not ask.answer.done():
                ask.answer.set_result({"result": value})

    def _no_retry(self, parked: _Parked) -> None:
        """The host never retried its call: what it was asked is answered so upstream, and
        the upstream call is cancelled (the user learns why on stderr)."""
        reason = f"no retry of its input_required answer came within {self.wait:g} s (--input-wait)"
        log.warning("a 2026-07-28 host's call (%s) is given up: %s; cancelled upstream", parked.key, reason)
        call = self.forwarder.calls.get(parked.key)
        if call is not None:
            call.cancel_reason = f"the host gave no answer: {reason}"
        for ask in parked.asks.values():
            if not ask.answer.done():
                ask.answer.set_result({"error": {"code": -1, "message": f"toolrelay proxy: the host gave no "
                                                                        f"answer: {reason}"}, LEFT: reason})
        self._give_up(parked)

    def _give_up(self, parked: _Parked) -> None:
        """No retry came (or the host cancelled): the upstream call is cancelled."""
        self._forget(parked)
        if parked.work is not None and not parked.work.done():
            parked.work.cancel()

    def _forget(self, parked: _Parked) -> None:
        self._stop_timer(parked)
        self._by_key.pop(parked.key, None)
        self._by_state.pop(parked.state, None)

    def _stop_timer(self, parked: _Parked) -> None:
        if parked.timer is not None:
            parked.timer.cancel()
            parked.timer = None

    def _record(self, parked: _Parked, direction: str, request: Request, message: dict[str, Any]) -> None:
        if self.events.active:
            self.events.emit(ProxyHostMessage(
                direction=direction, key=parked.key, host_id=request.id, method=request.method,
                message=message, protocol_version=parked.version, round=parked.round, host=self.host,
                exchange=parked.exchange,
                host_call_id=host_call_id_of(request.params) if direction == IN else None))

