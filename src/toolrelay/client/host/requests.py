"""What one connection answers when its server asks: the dispatch of server → client requests.

``ServerRequests.answer`` takes one request (and the model's call during which it came,
when known) and returns the result, or an awaitable of it (the peer runs it as its own
task and keeps reading meanwhile): ``ping``; ``roots/list`` (the ``Host``'s ``list_roots``
asked first, when it has one: a proxy asks its host); ``sampling/createMessage`` and
``elicitation/create`` through the ``Host`` callbacks, as tasks when the request carries
``params.task``; ``tasks/*`` for those tasks. What toolrelay did not declare, or
does not serve, is -32601 as before. The user hears what was answered without asking
them (a decline, a refusal, defaults accepted) as a notice.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, replace
from typing import Any, Final

from ...errors import RpcError, SamplingRefused
from ...protocol import mcp as m
from ...protocol.jsonrpc import INTERNAL_ERROR, METHOD_NOT_FOUND, JSONObject, Request, RequestId
from ..refusals import CAP_HINT
from .capabilities import Offers, client_capabilities, offers_of
from .elicitation import ElicitationRequest, Elicitor, declining, parse_elicitation
from .roots import Root, list_roots_result
from .sampling import Sampler, SamplingApprover, SamplingRequest, check_sampling_result, parse_sampling
from .tasks import ClientTasks

__all__ = ["DEFAULT_MAX_SAMPLING_PER_CALL", "Host", "ServerRequests"]

log = logging.getLogger("toolrelay.client")

Notify = Callable[[str, str], None]
"""(level, text): a notice for the user."""
Hold = Callable[[RequestId], Callable[[], None]]
"""(our request's MCP id) → release: that call's clock stands still from now until release
is called (it waits on the user or the model, not its fault)."""
DEFAULT_MAX_SAMPLING_PER_CALL: Final = 32

RootsAsker = Callable[[str | None, RequestId | None], Awaitable[JSONObject | None]]
"""(the call_id of the call a ``roots/list`` came during, the server's request id) → the
roots asked of whoever made the call (a proxy's host): a ``roots/list`` result, or None
for the connection's own roots."""

NO_SAMPLER_HINT = "pass sampler= (toolrelay's commands: --model)"
NO_ELICITOR_HINT = "nobody to ask (pass elicitor= to answer elicitations)"


@dataclass(frozen=True, slots=True, kw_only=True)
class Host:
    """The callbacks that answer what servers ask of toolrelay (shared by every connection).

    Without a sampler, sampling requests are refused (-1) with ``no_sampler_hint``;
    without an approver, an answerable one is not asked about; without an elicitor,
    elicitations are declined with ``no_elicitor_hint``."""

    sampler: Sampler | None = None
    approve_sampling: SamplingApprover | None = None
    elicitor: Elicitor | None = None
    no_sampler_hint: str = NO_SAMPLER_HINT
    no_elicitor_hint: str = NO_ELICITOR_HINT
    list_roots: RootsAsker | None = None
    """Asked first when a server that is offered roots asks for them during a call."""


class ServerRequests:
    """One connection's answers to its server's requests."""

    def __init__(self, host: Host, server: str, roots: tuple[Root, ...] | None, *,
                 notify: Notify, hold: Hold, max_sampling: int = DEFAULT_MAX_SAMPLING_PER_CALL) -> None:
        self.host = host
        self.server = server
        self.roots = roots
        """None: no roots offered (the config said ``"roots": false``)."""
        self.tasks = ClientTasks()
        self.tool_tasks: dict[str, tuple[str | None, RequestId]] = {}
        """taskId → (call_id, MCP id) of the tools/calls running as tasks on the server
        (``tool_tasks.py``)."""
        self._notify = notify
        self._hold = hold
        self.max_sampling = max_sampling
        """Sampling requests answered per tool call; the rest are refused (-1, naming the cap)."""
        self._sampled: dict[RequestId, int] = {}
        """Per call, by the MCP id of its ``tools/call`` (never by call_id, which the tasks of
        a batch sharing this connection repeat): sampling requests that came during it, until
        ``end_call``."""
        self._over_cap: dict[RequestId, int] = {}
        self._offers: Offers = offers_of("", roots=roots is not None)

    def capabilities(self, asked: str) -> JSONObject:
        """What our ``initialize`` at revision ``asked`` declares."""
        return client_capabilities(asked, roots=self.roots is not None)

    def negotiated(self, version: str) -> None:
        """The handshake agreed on ``version``: serve what it defines, and nothing newer."""
        self.tasks.close()
        self._offers = offers_of(version, roots=self.roots is not None)

    def set_roots(self, roots: tuple[Root, ...]) -> bool:
        """New roots (when roots are offered); True when they changed."""
        if self.roots is None or roots == self.roots:
            return False
        self.roots = roots
        return True

    def call_of(self, request: Request) -> str | None:
        """The call a request belongs to by its task: a follow-up of our task, or a request
        of the server's task running a tool call (its related-task meta), if any."""
        if request.method.startswith("tasks/"):
            return self.tasks.call_of(request.params)
        owner = self._tool_task(request)
        return owner[0] if owner is not None else None

    def tool_task_request(self, request: Request) -> RequestId | None:
        """The MCP id of the ``tools/call`` whose server task a request names (related-task meta)."""
        owner = self._tool_task(request) if not request.method.startswith("tasks/") else None
        return owner[1] if owner is not None else None

    def _tool_task(self, request: Request) -> tuple[str | None, RequestId] | None:
        meta = (request.params or {}).get("_meta")
        related = meta.get(m.RELATED_TASK) if isinstance(meta, dict) else None
        task_id = related.get("taskId") if isinstance(related, dict) else None
        return self.tool_tasks.get(task_id) if isinstance(task_id, str) else None

    def answer(self, request: Request, call_id: str | None, *,
               during: RequestId | None = None) -> JSONObject | Awaitable[JSONObject]:
        """The result of one server request, or an awaitable of it; RpcError refuses it.
        ``during``: the MCP id of our ``tools/call`` it came during, if known: the request
        is counted against that call's sampling cap and its clock stands still meanwhile."""
        method, params, offers = request.method, request.params, self._offers
        call = during
        if method == m.PING:
            return {}
        if method == m.LIST_ROOTS and self.roots is not None:
            if self.host.list_roots is not None and call_id is not None:
                return self._roots_of(call_id, request.id, self.roots)
            return list_roots_result(self.roots)
        if method == m.CREATE_MESSAGE:
            self._count_sampling(call, call_id)
            sampling = replace(parse_sampling(params, server=self.server, call_id=call_id,
                                              tools_allowed=offers.modes), request_id=request.id)
            return self._maybe_task(self._sample(sampling), params, call_id, call)
        if method == m.ELICIT and offers.elicitation:
            asked = replace(parse_elicitation(params, server=self.server, call_id=call_id,
                                              url_mode=offers.modes), request_id=request.id)
            return self._maybe_task(self._elicit(asked), params, call_id, call)
        if offers.modes:
            answered = self._task_request(method, params)
            if answered is not None:
                return answered
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method} (toolrelay does not offer it)")

    def _task_request(
        self, method: str, params: JSONObject | None
    ) -> JSONObject | Awaitable[JSONObject] | None:
        if method == m.TASKS_GET:
            return self.tasks.get(params)
        if method == m.TASKS_RESULT:
            return self.tasks.result(params)
        if method == m.TASKS_LIST:
            return self.tasks.list(params)
        if method == m.TASKS_CANCEL:
            return self.tasks.cancel(params)
        return None

    def _maybe_task(self, work: Coroutine[Any, Any, JSONObject], params: JSONObject | None,
                    call_id: str | None, call: RequestId | None) -> JSONObject | Awaitable[JSONObject]:
        timed = self._timed(work, call)
        if self._offers.modes and isinstance((params or {}).get("task"), dict):
            return self.tasks.start(timed, (params or {})["task"], call_id)
        return timed

    async def _timed(self, work: Coroutine[Any, Any, JSONObject], call: RequestId | None) -> JSONObject:
        """Run ``work``; the clock of the call it serves stands still meanwhile."""
        if call is None:
            return await work
        release = self._hold(call)
        try:
            return await work
        finally:
            release()

    def _count_sampling(self, call: RequestId | None, call_id: str | None) -> None:
        """One more sampling request during ``call``: past the cap it is refused (a flood
        must not keep the model busy, nor the call waiting, without end)."""
        if call is None:
            return  # not known to be of one call: nothing to count it against
        count = self._sampled[call] = self._sampled.get(call, 0) + 1
        if count <= self.max_sampling:
            return
        refused = self._over_cap[call] = self._over_cap.get(call, 0) + 1
        cap = f"at most {self.max_sampling} sampling requests per tool call"
        if refused == 1:
            during = "its tools/call" if call_id is None else f"call {call_id}"
            self._notify("warning", f"server {self.server} sent more than {self.max_sampling} sampling "
                                    f"requests during {during}; the rest are refused ({cap}: "
                                    "--max-sampling-per-call or the config's maxSamplingPerCall)")
        raise SamplingRefused(f"toolrelay answers {cap} {CAP_HINT}")

    def end_call(self, call: RequestId) -> int:
        """The call whose ``tools/call`` had MCP id ``call`` is over: forget its count; how
        many of its sampling requests were refused."""
        self._sampled.pop(call, None)
        return self._over_cap.pop(call, 0)

    async def _roots_of(self, call_id: str, asked: RequestId, own: tuple[Root, ...]) -> JSONObject:
        assert self.host.list_roots is not None
        found = await self.host.list_roots(call_id, asked)
        return found if found is not None else list_roots_result(own)

    # -- sampling ---------------------------------------------------------------------------

    async def _sample(self, request: SamplingRequest) -> JSONObject:
        if request.model_hints:
            log.info("server %s prefers models %s (hints; the configured model answers)",
                     self.server, ", ".join(request.model_hints))
        asked = f"server {self.server} asked the model for a message (sampling/createMessage)"
        if self.host.sampler is None:
            hint = self.host.no_sampler_hint
            self._notify("warning", f"{asked}; refused: {hint}")
            raise SamplingRefused(f"toolrelay has no model to answer sampling requests: {hint}")
        if self.host.approve_sampling is not None:
            refusal = await self.host.approve_sampling(request)
            if refusal is not None:
                self._notify("warning", f"{asked}; refused: {refusal}")
                raise SamplingRefused(f"User rejected sampling request: {refusal}")
        try:
            return check_sampling_result(await self.host.sampler(request))
        except SamplingRefused as refused:
            self._notify("warning", f"{asked}; refused: {refused.rpc_message}")
            raise

    # -- elicitation ------------------------------------------------------------------------

    async def _elicit(self, request: ElicitationRequest) -> JSONObject:
        elicitor = self.host.elicitor or declining(self.host.no_elicitor_hint)
        answer = await elicitor(request)
        if answer.note is not None:
            self._notify("warning" if answer.action != "accept" else "info", answer.note)
        if request.mode == "url":
            return {"action": answer.action}  # consent only: URL mode sends no content
        if answer.action == "accept" and not isinstance(answer.content, dict):
            raise RpcError(INTERNAL_ERROR, "Internal error: an accepted form needs its content (an object)")
        return answer.result()
