"""The relay loop: turns of request → parse → calls → feedback until the model answers.

Each turn wires the stages: build the body (``request``), send it (``model``), read the
output items by type (``parse``), run every function call concurrently through the
catalog (``route`` → ``call`` → ``result``), render each outcome (``feedback``) and put
the outputs into the next request. A streamed response's calls may start while it is
still arriving (``streaming.TurnCalls``: each as its item closes, when ``RunLimits.early``
allows its tool); an endpoint that does not stream turns streaming off for the rest of
the run, with one notice. A function_call reusing a call_id of the same
response is refused, not run: the call_id's one output carries the refusal. The loop has
its own stop conditions: an answer with no calls (completed), a non-completed response
status, max turns, max tool calls, the wall-clock timeout, Ctrl-C. A failure is never
reported as a success.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import fields as dataclass_fields
from typing import Any, Protocol

from ..errors import ModelError, ModelFeatureUnsupported, ModelStreamCut, ModelStreamInconsistent
from ..events import (
    CallOutcomeEvent,
    CompactionEvent,
    EventStream,
    FeedbackEvent,
    Notice,
    RunEndEvent,
    RunResumedEvent,
    RunStartEvent,
    UserTurnEvent,
)
from ..model.reply import ModelClient, ModelReply
from .continuation import Continuation
from .resume import ResumePoint
from .run_events import RunEvent, RunFinished, RunListener, TurnFinished, stream_run
from .searches import ToolSearches
from .stages.additions import addition, keeps_prefix, offered_by_alias
from .stages.consent import Approver
from .stages.context import INTERRUPTED, CallContext, CallHook, Stopped, StopReason
from .stages.cost import Price, cost_of
from .stages.dialects import UnknownDialect, reader_for
from .stages.feedback import (
    DEFAULT_MEDIA_BUDGET,
    DEFAULT_OUTPUT_BUDGET,
    feedback_item,
    render_feedback,
    with_refusals,
)
from .stages.parse import FunctionCall, ModelTurn
from .stages.policy_turns import TurnNarrowing
from .stages.request import Conversation, RequestSettings, build_body, user_message
from .stages.result import CallOutcome, Verdict
from .stages.route import Route
from .stages.run_result import RunResult
from .stages.usage import add_counts
from .streaming import EarlyPolicy, TurnCalls

# Approver (consent.py), ModelClient (model/reply.py) and RunResult (run_result.py) stay
# importable from here (toolrelay.relay.loop).
__all__ = ["Approver", "ModelClient", "Relay", "RunLimits", "RunResult", "ToolCatalog"]

NO_STREAM_HINT = "--no-stream, or stream=False, does not ask for it"


class ToolCatalog(Protocol):
    """What the loop needs of the catalog (``toolrelay.relay.catalog.Catalog``)."""

    def declarations(self, *, strict: bool = False) -> list[dict[str, Any]]: ...

    async def refresh_if_changed(self) -> bool: ...

    async def call(self, call: FunctionCall, *, context: CallContext | None = None) -> CallOutcome: ...

    def route(self, alias: str) -> Route | None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class RunLimits:
    """When the loop stops on its own, and how calls are bounded."""

    max_turns: int = 10
    """Model requests per run."""
    max_tool_calls: int | None = None
    timeout: float | None = None
    """Wall-clock seconds for the whole run."""
    concurrency: int = 8
    """Calls of one response running at once."""
    call_timeout: float | None = None
    """Overrides each server's tools/call timeout when set."""
    output_budget: int = DEFAULT_OUTPUT_BUDGET
    """Characters of text in one tool output passed to the model."""
    media_budget: int = DEFAULT_MEDIA_BUDGET
    """Bytes of images and files in one tool output passed to the model."""
    multimodal: bool = True
    """Pass images and files to the model as input_image/input_file parts."""
    early: EarlyPolicy = "read-only"
    """Which calls of a streamed response start as their item closes, before the response
    is complete: ``read-only`` (tools annotated ``readOnlyHint: true``; annotations are the
    server's hints), ``all`` or ``none``. With ``max_tool_calls`` set, none do: the limit
    is checked against the whole response."""


class _Stop(Exception):
    """Ends the turn loop with a status (internal control flow)."""

    def __init__(self, status: str, reason: str, turn: ModelTurn | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.turn = turn


class Relay:
    """Runs tasks: the model chooses tools, toolrelay executes them on MCP servers."""

    def __init__(
        self,
        catalog: ToolCatalog,
        model: ModelClient,
        settings: RequestSettings,
        *,
        events: EventStream,
        limits: RunLimits | None = None,
        strict: bool = False,
        approve: Approver | None = None,
        endpoint: str = "",
        listener: RunListener | None = None,
        hooks: Sequence[CallHook] = (),
        prices: Mapping[str, Price] | None = None,
    ) -> None:
        self.catalog = catalog
        self.model = model
        self.settings = settings
        self.events = events
        self.limits = limits or RunLimits()
        self.strict = strict
        self.approve = approve
        self.endpoint = endpoint
        self.listener = listener
        """Told each ``run_events`` event of a run (text deltas, calls, turns, the end)."""
        self.hooks = tuple(hooks)
        """Asked before each call and told its outcome (``relay.stages.context.CallHook``)."""
        self._narrowing = [hook for hook in self.hooks if isinstance(hook, TurnNarrowing)]
        """Hooks that may narrow a turn's tools (a policy's phase rules)."""
        self.prices = prices
        """The price table (``--prices``): the model's row prices the run (``stages/cost.py``)."""
        self.result: RunResult | None = None
        """The latest run's result, also set when the run was interrupted."""
        self.context: Conversation | None = None
        """The latest run's context as it ended (where a conversation's next user turn goes on)."""
        self._streaming = settings.stream
        self._earlier: Continuation | None = None
        """The conversation before this user turn: the run's record counts on from it."""
        self._searches = ToolSearches()
        self._kept: tuple[Conversation, list[dict[str, Any]]] | None = None
        self._reloaded: set[str] = set()
        """Aliases a client search loaded that are offered again after a compaction dropped
        their ``tool_search_output`` (``additions.reloaded``): not declared, yet not removed."""
        """The conversation whose requests keep its first ``tools`` (additions.py), and them."""

    async def run(
        self,
        task: str,
        *,
        run_id: str | None = None,
        first_input: list[dict[str, Any]] | None = None,
        resume: ResumePoint | None = None,
        continuing: Continuation | None = None,
    ) -> RunResult:
        """Run one task to its end; never raises for tool failures. ``first_input``: the
        input items to start from instead of ``task`` as one user message (``task`` then
        names the run). With ``resume``, a run recorded up to that point goes on from there
        (``relay.resume``); with ``continuing``, a conversation's next user turn goes on
        from its context (``relay.continuation``)."""
        # 12 random hex digits, as uuid4().hex[:12] gave (its first 48 bits are random), for less
        result = RunResult(run_id=run_id or os.urandom(6).hex(), status="error", reason="not started")
        self.result = result
        self._streaming = self.settings.stream
        self._earlier = continuing
        self._searches = ToolSearches()  # what searches loaded, this run
        if self.events.active:  # nobody listens: no record is built
            self._record_start(result.run_id, task, first_input, resume, continuing)
        try:
            async with _run_clock(self.limits.timeout) as clock:
                first = first_input or [user_message(task)]
                await self._turns(first, result, lambda: self._why_stopped(clock), resume, continuing)
        except _Stop as stop:
            result.status, result.reason = stop.status, stop.reason
        except TimeoutError:
            result.status, result.reason = "timeout", self._time_limit_ran_out()
        except asyncio.CancelledError:
            result.status, result.reason = "aborted", "the run was interrupted"
            self._end(result)
            raise
        except ModelError as exc:
            result.status, result.reason = "error", "; ".join([str(exc), *getattr(exc, "__notes__", ())])
            self._end(result)
            raise
        self._end(result)
        return result

    async def stream(self, task: str, *, run_id: str | None = None) -> AsyncGenerator[RunEvent, None]:
        """Run ``task``, yielding what happens as it happens (``run_events``): the answer
        text as it is written, each call as it starts and ends, each turn, and last
        ``RunFinished`` with the result ``run()`` returns. Raises what ``run()`` raises,
        after its ``RunFinished``; closing the iterator early (``contextlib.aclosing``)
        cancels the run."""

        before = self.listener

        async def start(listener: RunListener) -> RunResult:
            self.listener = listener  # stream_run has it tell ``before`` first
            try:
                return await self.run(task, run_id=run_id)
            finally:
                self.listener = before

        async with contextlib.aclosing(stream_run(start, also=before)) as events:  # closed with this one
            async for event in events:
                yield event

    def _record_start(
        self, run_id: str, task: str, first_input: list[dict[str, Any]] | None, resume: ResumePoint | None,
        continuing: Continuation | None,
    ) -> None:
        if continuing is not None:
            self.events.emit(self._user_turn_event(run_id, task, continuing, first_input))
        else:
            self.events.emit(self.start_event(run_id, task, turn=resume.turn if resume else None,
                                              note=resume.note if resume else "", first_input=first_input))

    def start_event(
        self, run_id: str, task: str, *, turn: int | None = None, note: str = "",
        first_input: list[dict[str, Any]] | None = None,
    ) -> RunStartEvent:
        """The record a run starts with: ``run_start``, or ``run_resumed`` at ``turn``."""
        fields: dict[str, Any] = {
            "run_id": run_id, "model": self.settings.model, "endpoint": self.endpoint,
            "context_mode": self.settings.context_mode, "strict": self.strict, "task": task,
            "output_budget": self.limits.output_budget, "media_budget": self.limits.media_budget,
            "multimodal": self.limits.multimodal, "early": self._early_policy(), "input": first_input,
            "settings": dict(self.settings.extra) or None,
        }
        if turn is None:
            return RunStartEvent(**fields)
        return RunResumedEvent(**fields, turn=turn, note=note)

    def _user_turn_event(
        self, run_id: str, task: str, continuing: Continuation, first_input: list[dict[str, Any]] | None
    ) -> UserTurnEvent:
        start = self.start_event(run_id, task, first_input=first_input or [user_message(task)])
        kept = {f.name: getattr(start, f.name) for f in dataclass_fields(start)
                if f.name not in ("seq", "time")}
        return UserTurnEvent(**kept, turn=continuing.turns + 1, number=continuing.user_turn)

    def _time_limit_ran_out(self) -> str:
        return f"the run's time limit ({self.limits.timeout:g} s) ran out"

    def _why_stopped(self, clock: asyncio.Timeout | _NoClock) -> str:
        """Why a call is being cancelled: the run's time limit, or an interruption."""
        if clock.expired():
            return f"{self._time_limit_ran_out()} before the call ended"
        return INTERRUPTED

    def _end(self, result: RunResult) -> None:
        price = self._price()
        if price is not None:
            result.cost = cost_of(result.usage, price)
        if self.events.active:
            self._record_end(result, price)
        self._tell(RunFinished(result=result))

    def _record_end(self, result: RunResult, price: Price | None) -> None:
        earlier = self._earlier  # a conversation's record: its turns and usage so far, and this one's
        usage = add_counts(earlier.usage, result.usage) if earlier else dict(result.usage)
        self.events.emit(
            RunEndEvent(
                status=result.status, reason=result.reason,
                final_text=result.final_text if result.refusal is None else result.refusal,
                turns=result.turns + (earlier.turns if earlier else 0), usage=usage,
                cost=cost_of(usage, price) if price is not None else {}, price=dict(price or {}),
            )
        )

    def _price(self) -> Price | None:
        """The model's prices, when a table is given; a table without them is said once."""
        if self.prices is None:
            return None
        price = self.prices.get(self.settings.model)
        if price is None:
            named = ", ".join(sorted(self.prices)) or "none"
            self.events.emit(Notice(level="warning", text=(
                f"the price table has no prices for model {self.settings.model!r} (it names {named}): "
                "the run's cost is not known")))
        return price

    def _tell(self, event: RunEvent) -> None:
        if self.listener is not None:
            self.listener(event)

    async def _turns(
        self, first_input: list[dict[str, Any]], result: RunResult, stop_reason: StopReason,
        resume: ResumePoint | None, continuing: Continuation | None = None,
    ) -> None:
        conversation, first, offset = Conversation(), 1, 0
        self.context = conversation
        if continuing is not None:  # turns numbered on; the result counts this user turn's
            conversation, offset = continuing.fresh_context(), continuing.turns
            first = offset + 1
            self.context = conversation
            conversation.start(first_input)
        elif resume is None:
            conversation.start(first_input)
        else:
            conversation, first = resume.conversation, resume.turn
            result.calls, result.response_ids = list(resume.earlier), list(resume.response_ids)
            result.usage = dict(resume.usage)
            self.context = conversation
        if resume is not None and resume.recorded is not None:
            result.turns = first
            self._compact_recorded(conversation, resume)
            conversation.add_outputs(await self._finish_recorded(resume, result, stop_reason))
            first += 1
        for turn_number in range(first, offset + self.limits.max_turns + 1):
            result.turns = turn_number - offset
            outputs = await self._turn(conversation, turn_number, result, stop_reason)
            conversation.add_outputs(outputs)
        raise _Stop(
            "max_turns",
            f"reached --max-turns {self.limits.max_turns}; the model has not seen the last outputs",
        )

    async def _turn(
        self, conversation: Conversation, number: int, result: RunResult, stop_reason: StopReason
    ) -> list[dict[str, Any]]:
        """One model response and its calls; the outputs for the next request."""
        turn: ModelTurn | None = None
        ending: Exception | None = None
        async with asyncio.TaskGroup() as group:
            calls = TurnCalls(
                group, turn=number, run_call=self._call_runner(number), render=self._feedback,
                starts_early=self._starts_early, stop_reason=stop_reason,
                concurrency=self.limits.concurrency, listener=self.listener,
            )
            try:
                turn = await self._ask_model(conversation, number, calls)
                if turn.response_id:
                    result.response_ids.append(turn.response_id)
                result.usage = add_counts(result.usage, turn.usage)
                self._add_response(conversation, number, turn)
                if turn.status == "completed" and (fault := calls.contradiction(turn.calls)) is not None:
                    raise fault
                searched = self._searches.answer(self.catalog, turn.output, number, self.events)
                self._check_turn(turn, result, searched=bool(searched))  # raises _Stop on an answer
            except Exception as exc:  # _Stop, ModelError, a UsageError...
                ending = exc  # raised outside the group, which would wrap it in an ExceptionGroup
                outcomes = await self._stop_calls(calls, exc)
            else:
                refused = self._refuse_duplicates(turn)
                outputs = [*searched, *await calls.finish(turn.calls, refused)]
                outcomes = [*calls.outcomes(), *refused]
        result.calls.extend(outcomes)
        for dropped in calls.drop_notices(turn.calls) if turn is not None else []:
            self.events.emit(Notice(level="warning", text=dropped))
        self._turn_finished(number, turn, outcomes)
        if ending is not None:
            raise ending
        return outputs

    def _add_response(self, conversation: Conversation, number: int, turn: ModelTurn) -> None:
        """The response's items join the context; a compaction item in them (stages/compaction.py)
        makes later inputs start from it, recorded as a ``compaction`` event."""
        before = len(conversation.compactions)
        conversation.add_response(turn.response_id, turn.output, prune=self.settings.context_mode == "replay")
        if len(conversation.compactions) > before:
            dropped = conversation.compactions[-1][1]
            self.events.emit(CompactionEvent(turn=number, response_id=turn.response_id, dropped=dropped))

    def _compact_recorded(self, conversation: Conversation, resume: ResumePoint) -> None:
        """The recorded response's compaction item, applied as ``_add_response`` would have
        (replay mode), and its ``compaction`` record written when the stopped run had not."""
        assert resume.recorded is not None
        if self.settings.context_mode != "replay":
            return
        dropped = conversation.compact(resume.recorded.response_id, resume.recorded.output)
        if dropped is not None and not resume.compaction_recorded:
            self.events.emit(CompactionEvent(turn=resume.turn, response_id=resume.recorded.response_id,
                                             dropped=dropped))

    async def _finish_recorded(
        self, resume: ResumePoint, result: RunResult, stop_reason: StopReason
    ) -> list[dict[str, Any]]:
        """The recorded response's turn, finished: the calls without a recorded result run,
        every call's output (recorded, rendered from its recorded outcome, or new) in order."""
        assert resume.recorded is not None
        self._check_turn(resume.recorded, result)  # a recorded answer without calls ends the run here
        for call_id in sorted(resume.unrecorded):
            self.events.emit(CallOutcomeEvent(call_id=call_id, outcome=resume.outcomes[call_id].to_record()))
        async with asyncio.TaskGroup() as group:
            calls = TurnCalls(
                group, turn=resume.turn, run_call=self._call_runner(resume.turn), render=self._feedback,
                starts_early=lambda call: False, stop_reason=stop_reason,
                concurrency=self.limits.concurrency, listener=self.listener,
            )
            outputs, finished = await resume.finish(calls, self._feedback)
        result.calls.extend(finished)
        self._turn_finished(resume.turn, resume.recorded, finished)
        return outputs

    def _turn_finished(self, number: int, turn: ModelTurn | None, outcomes: list[CallOutcome]) -> None:
        if self.listener is None:
            return
        status = turn.status if turn is not None else "error"
        response_id = turn.response_id if turn is not None else None
        self._tell(TurnFinished(turn=number, status=status, response_id=response_id,
                                streamed=self._streaming, calls=outcomes))

    async def _stop_calls(self, calls: TurnCalls, ending: Exception) -> list[CallOutcome]:
        """The response will not be answered: stop the calls it started; their outcomes."""
        if isinstance(ending, ModelStreamCut):
            why = "the model's answer broke off before the call ended"
        elif isinstance(ending, ModelStreamInconsistent):
            why = "the model's final response contradicts a call it streamed: the turn ended first"
        elif not isinstance(ending, _Stop):
            why = f"the run ended before the call ended ({ending})"
        elif ending.status in ("completed", "refused"):
            why = "the model's whole response does not ask for this call"
        else:
            why = f"the model response ended {ending.status} before the call ended"
        outcomes = await calls.stop(why)
        if isinstance(ending, ModelStreamCut | ModelStreamInconsistent):
            ran = ", ".join(f"{o.call_id} ({o.alias}: {o.status.replace('_', ' ')})" for o in outcomes)
            ending.add_note(f"calls that had started: {ran}" if ran else "no call had started")
        return outcomes

    async def _ask_model(self, conversation: Conversation, number: int, calls: TurnCalls) -> ModelTurn:
        await self.catalog.refresh_if_changed()
        tools = self._kept_tools(conversation, self.catalog.declarations(strict=self.strict))
        self._searches.see_request(tools, conversation.history)
        streams = self._streaming or not self.settings.stream  # as asked (a copy only to turn it off)
        settings = self.settings if streams else replace(self.settings, stream=False)
        allowed = self._allowed_in_turn(number, tools)
        body = build_body(settings, tools, conversation, allowed)
        try:
            reply = await self.model.create(body, turn=number, on_update=calls.on_update)
        except ModelFeatureUnsupported as exc:
            if getattr(exc, "feature", None) != "stream" or body.get("stream") is not True:
                raise
            self._streaming_off(f"the model endpoint refused to stream ({exc})")
            body = build_body(replace(settings, stream=False), tools, conversation, allowed)
            reply = await self.model.create(body, turn=number, on_update=calls.on_update)
        if body.get("stream") is True and not reply.streamed:
            self._streaming_off("the model endpoint answered a whole JSON response to stream: true")
        turn = _read_reply(reply)
        if not reply.streamed:
            calls.whole_messages(turn.output)
        return turn

    def _allowed_in_turn(self, number: int, tools: list[dict[str, Any]]) -> list[str] | None:
        """The aliases the narrowing hooks all allow this turn (None: all of them). Only a flat
        array of function tools is narrowed: ``allowed_tools`` lists functions by name, so with
        namespaces or tool search the phase rules refuse at call time only."""
        if not self._narrowing or not tools or any(tool.get("type") != "function" for tool in tools):
            return None
        routes: dict[str, tuple[str, str, dict[str, Any]]] = {}
        for tool in tools:
            route = self.catalog.route(str(tool.get("name")))
            if route is not None:
                routes[route.alias] = (route.server, route.tool, route.annotations)
        narrowed = [hook.allowed_in_turn(number, routes) for hook in self._narrowing]
        lists = [allowed for allowed in narrowed if allowed is not None]
        if not lists:
            return None
        return [alias for alias in routes if all(alias in allowed for allowed in lists)]

    def _kept_tools(self, conversation: Conversation, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The conversation's first ``tools`` when they declare namespaces or tool search, with
        what the catalog added since as an ``additional_tools`` input item (additions.py)."""
        kept = self._kept
        if kept is None or kept[0] is not conversation or not keeps_prefix(kept[1]) \
                or self.settings.context_mode != "replay":  # chain: the item would go once, unseen by verify
            self._kept = (conversation, tools)
            self._searches.see_removed(set())
            return tools
        if conversation.reoffer is not None:  # a compaction dropped what searches loaded
            self._reloaded |= set(offered_by_alias([], [conversation.reoffer]))
            conversation.add_outputs([conversation.reoffer])
            conversation.reoffer = None
        item = addition(kept[1], conversation.history, tools)
        if item is not None:
            conversation.add_outputs([item])
        offered = offered_by_alias(kept[1], conversation.history)
        self._searches.see_removed(set(offered) - set(offered_by_alias(tools, [])) - self._reloaded)
        return kept[1]

    def _streaming_off(self, why: str) -> None:
        """Once per run: the endpoint does not stream, so the rest of the run does not ask."""
        if not self._streaming:
            return
        self._streaming = False
        text = f"{why}; the rest of the run goes on without streaming ({NO_STREAM_HINT})"
        self.events.emit(Notice(level="warning", text=text))

    def _early_policy(self) -> str:
        """The policy as it applies to this run (``none`` when nothing can start early)."""
        if not self.settings.stream or self.limits.max_tool_calls is not None:
            return "none"
        return self.limits.early

    def _starts_early(self, call: FunctionCall) -> bool:
        """Whether ``call`` starts as its item closes (else when the response is complete)."""
        policy = self._early_policy()
        if policy == "none":
            return False
        if policy == "all":
            return True
        route = self.catalog.route(call.alias)
        return route is not None and route.read_only

    def _call_runner(self, turn: int) -> Callable[[FunctionCall, StopReason, Stopped], Any]:
        async def run_call(call: FunctionCall, stop_reason: StopReason, on_stopped: Stopped) -> CallOutcome:
            context = CallContext(approve=self.approve, timeout=self.limits.call_timeout,
                                  stop_reason=stop_reason, on_stopped=on_stopped, turn=turn,
                                  hooks=self._searches.with_gate(self.hooks))
            return await self.catalog.call(call, context=context)

        return run_call

    def _check_turn(self, turn: ModelTurn, result: RunResult, *, searched: bool = False) -> None:
        if turn.status != "completed":
            raise _Stop(turn.status, turn.reason or f"the model response ended with status {turn.status!r}")
        if turn.malformed:
            raise _Stop("failed", "; ".join(turn.malformed))
        if turn.calls:
            limit = self.limits.max_tool_calls
            if limit is not None and len(result.calls) + len(turn.calls) > limit:
                raise _Stop(
                    "max_tool_calls",
                    f"the model asked for {len(turn.calls)} more call(s); --max-tool-calls {limit} "
                    f"allows {limit - len(result.calls)}; none of them were run",
                )
            return
        if searched:  # toolrelay answered the model's tool searches: the model goes on
            return
        if turn.refusal is not None:
            result.refusal = turn.refusal
            raise _Stop("refused", "the model refused")
        result.final_text = turn.text or ""
        raise _Stop("completed", "the model answered without asking for more tool calls")

    def _refuse_duplicates(self, turn: ModelTurn) -> list[CallOutcome]:
        """Each function_call reusing an earlier call's call_id, refused and recorded (not run)."""
        first = {call.call_id: call for call in turn.calls}
        refused = []
        for call in turn.duplicates:
            message = (
                f"refused as a duplicate, not run: call_id {call.call_id} already belongs to the earlier "
                f"function_call {first[call.call_id].alias} in this response, and a call_id gets one "
                f"output; call {call.alias} again if you still need it"
            )
            outcome = CallOutcome(call=call, verdict=Verdict(status="duplicate_call_id", message=message))
            self.events.emit(CallOutcomeEvent(call_id=call.call_id, outcome=outcome.to_record()))
            refused.append(outcome)
        return refused

    def _feedback(self, outcome: CallOutcome, refusals: list[CallOutcome]) -> dict[str, Any]:
        assert outcome.call_id is not None
        limits = self.limits
        route = self.catalog.route(outcome.alias)
        rendering = render_feedback(
            outcome, budget=limits.output_budget, media_budget=limits.media_budget,
            multimodal=limits.multimodal, structured=route is not None and route.structured,
        )
        item = feedback_item(outcome.call_id, with_refusals(rendering.output, refusals))
        if self.events.active:
            self.events.emit(FeedbackEvent(call_id=outcome.call_id, item=item, cut=list(rendering.cut),
                                           for_user=list(rendering.for_user)))
        return item


class _NoClock:
    """The run's clock when it has no time limit: it never runs out (``asyncio.timeout(None)``
    would arm nothing either, but costs as much to enter as a model request's framing)."""

    async def __aenter__(self) -> _NoClock:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

    def expired(self) -> bool:
        return False


_NO_CLOCK = _NoClock()


def _run_clock(seconds: float | None) -> asyncio.Timeout | _NoClock:
    return _NO_CLOCK if seconds is None else asyncio.timeout(seconds)


def _read_reply(reply: ModelReply) -> ModelTurn:
    """The reply read by its dialect's reader; an unreadable one ends the run ``failed``."""
    try:
        reader = reader_for(reply.dialect)
    except UnknownDialect as exc:
        raise _Stop("failed", f"the model client's reply cannot be read: {exc}") from None
    try:
        return reader.turn(reply.body)
    except ValueError as exc:
        raise _Stop("failed", f"the model endpoint's answer is not {reader.answer}: {exc}") from None
