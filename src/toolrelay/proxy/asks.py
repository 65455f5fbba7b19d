"""What an upstream server asks during a host's call (sampling, elicitation), asked of the host.

The proxy's upstream connections answer their servers through a ``client.host.Host`` whose
sampler and elicitor are these: the request names the host call it came during by the
proxy's key (its ``call_id``), and

- when that host declared the capability (``sampling``; ``elicitation``, with ``url`` for
  URL mode; ``sampling.tools`` for a request with tools; ``roots``, for a server whose
  entry offers roots), the host is asked: a 2025 host
  by a server request of the proxy's on the call's stream, answered with the host's
  answer (its error passed on as the upstream's error); a 2026-07-28 host by the call's
  ``input_required`` answer (``rounds.py``);
- else the proxy answers by its own settings: sampling is refused (the proxy has no
  model), an elicitation answered by ``--elicit`` (``decline``, the default, or
  ``defaults``: a form accepted with its defaults), as ``toolrelay run`` answers without
  a terminal; roots are the server entry's own (``toolrelay.roots``).

The upstream request's own ``task`` (the proxy answers it as a task itself, ``client/host``)
and its related-task meta (the upstream's task id means nothing to the host) are not
passed on; during a host's own task (``tasks.py``) the related task is the host's id of
it; asked while no request of the host's about that task is pending, it is asked as no
request's and recorded under the task (``task_id``, no key). Each ask is recorded
(``ProxyAsk``), both requests' ids and the host's answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

from ..client.host import (
    ElicitationAnswer,
    ElicitationRequest,
    Elicitor,
    Host,
    SamplingRequest,
    accept_defaults,
    declining,
)
from ..errors import RpcError, SamplingRefused, TransportError
from ..events import EventStream
from ..protocol import mcp as m
from ..protocol.jsonrpc import JSONObject, RequestId
from .host_calls import HostCall, HostCalls
from .records import ProxyAsk

__all__ = ["ELICIT_CHOICES", "PROXY_ANSWERED", "HostAsks"]

ELICIT_CHOICES: Final = ("decline", "defaults")
"""``--elicit`` of the proxy: ``toolrelay run``'s, but for ``ask`` (no terminal to ask on)."""
NO_MODEL: Final = "the proxy has no model of its own"
PROXY_ANSWERED: Final = "proxy_answered"
"""An asker's note that the proxy answered the ask itself, and why (a bridged task given up)."""

AskHost = Callable[[HostCall, str, JSONObject, RequestId | None], Awaitable[tuple[JSONObject, JSONObject]]]
"""Asks the host of a 2026-07-28 call (``rounds.py``): (its answer, what to record of the round)."""


class HostAsks:
    """The sampler and elicitor of the proxy's upstream connections."""

    def __init__(self, calls: HostCalls, events: EventStream, *, elicit: str = "decline") -> None:
        self.calls = calls
        self.events = events
        self.elicit = elicit
        self._own: Elicitor = accept_defaults if elicit == "defaults" else declining(
            "the host did not declare elicitation; the proxy answers --elicit decline")
        self.ask_modern: AskHost | None = None
        """How a 2026-07-28 host is asked (set by ``rounds.py``); None: it is not."""

    def host(self) -> Host:
        return Host(sampler=self._sample, elicitor=self._elicit, list_roots=self._roots)

    # -- roots --------------------------------------------------------------------------------

    async def _roots(self, call_id: str | None, upstream_id: RequestId | None) -> JSONObject | None:
        """The host's roots, when it declared roots (None: the server's entry's own)."""
        call = self.calls.get(call_id)
        if call is None or not call.declares("roots"):
            return None
        server = call.server or ""
        answer, _ = await self._ask(call, m.LIST_ROOTS, {}, upstream_id, server)
        error = answer.get("error")
        if isinstance(error, dict):
            raise RpcError(int(error.get("code", -1)), str(error.get("message", "")), error.get("data"))
        result = answer.get("result")
        return result if isinstance(result, dict) else None

    # -- sampling -----------------------------------------------------------------------------

    async def _sample(self, request: SamplingRequest) -> JSONObject:
        call = self.calls.get(request.call_id)
        why = _undeclared(call, "sampling", needs="tools" if request.tools is not None else None)
        if call is None or why is not None:
            reason = f"{why or 'not asked during a host call'}; {NO_MODEL}"
            self._record(call, request.server, request.request_id, m.CREATE_MESSAGE, "proxy", "refused",
                         reason)
            raise SamplingRefused(f"toolrelay proxy refused the sampling request: {reason}")
        answer, round_of = await self._ask(call, m.CREATE_MESSAGE, request.params, request.request_id,
                                           request.server)
        error = answer.get("error")
        if isinstance(error, dict):
            raise RpcError(int(error.get("code", -1)), str(error.get("message", "")), error.get("data"))
        result = answer.get("result")
        if not isinstance(result, dict):
            raise SamplingRefused(f"toolrelay proxy: the host did not answer the sampling request{round_of}")
        return result

    # -- elicitation --------------------------------------------------------------------------

    async def _elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        call = self.calls.get(request.call_id)
        why = _undeclared(call, "elicitation", needs="url" if request.mode == "url" else None)
        if call is None or why is not None:
            answer = await self._own(request)
            reason = f"{why or 'not asked during a host call'}; --elicit {self.elicit}"
            self._record(call, request.server, request.request_id, m.ELICIT, "proxy", answer.action, reason)
            return answer
        said, _ = await self._ask(call, m.ELICIT, request.params, request.request_id, request.server)
        error = said.get("error")
        if isinstance(error, dict):
            raise RpcError(int(error.get("code", -1)), str(error.get("message", "")), error.get("data"))
        result = said.get("result")
        action = result.get("action") if isinstance(result, dict) else None
        if action not in ("accept", "decline", "cancel"):
            return ElicitationAnswer("cancel", note=f"the host's answer to server {request.server}'s "
                                                    "elicitation has no valid action; cancelled")
        content = result.get("content") if isinstance(result, dict) else None
        return ElicitationAnswer(action, content if isinstance(content, dict) else None)

    # -- asking the host ----------------------------------------------------------------------

    async def _ask(self, call: HostCall, method: str, params: JSONObject, upstream_id: RequestId | None,
                   server: str) -> tuple[JSONObject, str]:
        """The host's answer (``{"result": ...}`` or ``{"error": ...}``) and a note for messages."""
        passed = _passed_params(params, call.task_id, related=call.ready is not None)
        if call.ready is not None:  # a bridged task: asked during the host's tasks/result
            await call.ready.wait()
        if call.session is None:  # 2026-07-28: the call's input_required answer
            asker = call.ask or self.ask_modern  # a bridged task's asks, or the call's rounds
            assert asker is not None
            answer, round_info = await asker(call, method, passed, upstream_id)
            own = round_info.get(PROXY_ANSWERED)
            if own:  # the proxy answered it: its host will not (its bridged task was given up)
                self._record(call, server, upstream_id, method, "proxy", _outcome(method, answer), str(own))
                return answer, f" ({own})"
            left = round_info.get("host_left")  # it never retried: answered by the proxy's give-up
            outcome = "host_left" if left else _outcome(method, answer)
            self._record(call, server, upstream_id, method, "host", outcome, str(left or ""),
                         host_request_id=round_info.get("key"), host_answer=answer,
                         round=round_info.get("state"))
            return answer, f" ({left})" if left else ""
        peer = call.peer
        assert peer is not None
        asked: list[RequestId] = []
        try:
            exchange = await peer.call(method, passed, tag=None if call.between else call.request.id,
                                       on_sent=lambda sent: asked.append(sent.mcp_id))
        except TransportError as exc:
            reason = f"the host did not answer: {exc}"
            self._record(call, server, upstream_id, method, "host", "host_left", reason,
                         host_request_id=asked[0] if asked else None)
            return {"error": {"code": -1, "message": f"toolrelay proxy: {reason}"}}, f" ({reason})"
        answer = exchange.response or {}
        self._record(call, server, upstream_id, method, "host", _outcome(method, answer), "",
                     host_request_id=exchange.mcp_id, host_answer=answer)
        return answer, ""

    def _record(self, call: HostCall | None, server: str, upstream_id: RequestId | None, method: str,
                answered_by: str, outcome: str, reason: str, **more: Any) -> None:
        if self.events.active:
            between = call is not None and call.between  # no host request pending: the task's own
            if between:
                more["task_id"] = call.task_id if call is not None else None
            self.events.emit(ProxyAsk(
                key=call.key if call is not None and not between else "",
                host_id=call.request.id if call is not None and not between else None,
                server=server, upstream_id=upstream_id, method=method, answered_by=answered_by,
                outcome=outcome, reason=reason, **more))


def _undeclared(call: HostCall | None, capability: str, *, needs: str | None) -> str | None:
    """Why the host cannot be asked (None: it can)."""
    if call is None:
        return None
    if not call.declares(capability):
        return f"the host did not declare {capability}"
    if needs is not None and not isinstance(call.capabilities[capability].get(needs), dict):
        return f"the host did not declare {capability}.{needs}"
    return None


def _passed_params(params: JSONObject, task_id: str | None = None, *, related: bool = False) -> JSONObject:
    """The upstream request's params as the host is asked them: without its ``task`` and
    its related-task meta (of the upstream's tasks, which the proxy handles), but for the
    host's own task, ``task_id``, named as the host knows it (``related``: named even where
    the upstream request names no task, as a tasks-extension task's input request)."""
    passed = {key: value for key, value in params.items() if key != "task"}
    meta = passed.get("_meta")
    if isinstance(meta, dict):
        kept = {key: value for key, value in meta.items() if key != m.RELATED_TASK}
        if task_id is not None and m.RELATED_TASK in meta:
            kept[m.RELATED_TASK] = {"taskId": task_id}
        if kept:
            passed["_meta"] = kept
        else:
            del passed["_meta"]
    if related and task_id is not None:
        passed["_meta"] = {**(passed.get("_meta") or {}), m.RELATED_TASK: {"taskId": task_id}}
    return passed


def _outcome(method: str, answer: JSONObject) -> str:
    result = answer.get("result")
    if not isinstance(result, dict):
        return "refused"
    if method == m.ELICIT:
        return str(result.get("action"))
    return "listed" if method == m.LIST_ROOTS else "sampled"
