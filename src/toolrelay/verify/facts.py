"""Facts derived once from a run record and shared by the link checks (linear time).

Each model response is read by the live path's own reader, the one of the dialect its
events name (``relay.stages.dialects``: ``relay.stages.parse.read_response`` for Responses); a streamed
turn's events are assembled by that reader's assembler (the live path's,
``protocol.stream.assemble``), and a turn whose stream broke off before its response was
recorded is read from what they assemble to;
the declarations in force at any point and each server's tool rules (its latest
``tools/list`` answer, all pages) are found by binary search over seq numbers.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, ClassVar, Final, Protocol, TypeVar

from ..events import MCP_REQUEST, MCP_RESPONSE
from ..protocol.exchange import Exchange, input_required
from ..protocol.mcp import READ_RESOURCE
from ..protocol.responses import FUNCTION_CALL_OUTPUT
from ..protocol.stream import Assembled, StreamEvent
from ..protocol.tool_digest import tool_digest
from ..relay.stages.additions import ADDITIONAL_TOOLS, offered_by_alias
from ..relay.stages.deferred import TOOL_SEARCH_OUTPUT, loaded_by_alias
from ..relay.stages.dialects import RESPONSES, known_reader
from ..relay.stages.feedback import feedback_item, with_refusals
from ..relay.stages.parse import FunctionCall, ModelTurn, read_call
from ..relay.stages.result import CallOutcome, Verdict
from .mcp_pairs import LISTED, MCP_WALK, walk_mcp
from .outcomes import (
    MalformedAnswer,
    RenderingKey,
    expected_output,
    rebuild_outcome,
    recorded_exchange,
    rendering_key,
    result_key,
)
from .record import CallTrace, Event, ModelRound, RunRecord
from .simple_schema import SimpleSchemas
from .task_trace import TaskTrace, answer_of, task_of
from .verdict import Finding

__all__ = ["CallJudge", "CommonShape", "Listing", "RunFacts", "Span"]

CallJudge = Callable[[CallTrace, "RunFacts"], Finding | None]
"""A per-call check's step: the finding about one call (None: nothing to say)."""


class CommonShape(Protocol):
    """What judges the calls of a common shape by several steps at once (``call_common``)."""

    steps: tuple[CallJudge, ...]
    """The steps it judges for, in the order of its findings."""

    def __init__(self, facts: RunFacts) -> None: ...

    def findings(self, call: CallTrace) -> Sequence[Finding | None] | None:
        """The call's finding by each of ``steps`` (None: the steps are to judge it)."""


@dataclass(slots=True, kw_only=True)
class Listing:
    """One complete tools/list of a server (every page), as of its first page's seq."""

    server: str
    seq: int
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    _digests: dict[str, str] = field(default_factory=dict)

    def digest(self, tool: str) -> str:
        """``tool_digest`` of the listed ``tool`` (in ``tools``), worked out once: every call
        of the tool asks for it."""
        found = self._digests.get(tool)
        if found is None:
            found = self._digests[tool] = tool_digest(self.tools[tool])
        return found


class RunFacts:
    """Lazily computed, cached views of one RunRecord."""

    common_shape: ClassVar[bool] = True
    """Whether ``judge_together`` gives a call of the common shape the findings of its
    ``common`` judge (the steps judge the rest); off: the steps judge every call (the tests
    compare the two)."""

    def __init__(self, run: RunRecord) -> None:
        self.run = run
        self.turns: dict[int, ModelTurn | str] = {}
        self._assembled: dict[int, Assembled] = {}
        self._streams: dict[int, list[StreamEvent]] = {}
        for current in run.rounds:
            answer = current.answer
            if answer is None and current.response is None and current.stream:
                answer = self.assembled(current).response  # the stream broke off: what had come
            read = current.read(answer)
            if read is not None:
                self.turns[current.turn] = read
        self._calls: dict[int, dict[str, FunctionCall]] = {}
        self._declared: dict[int, dict[Any, dict[str, Any]]] = {}
        self._lists_tools: dict[int, bool] = {}
        self._catalog_seqs = [event["seq"] for event in run.catalogs]
        self._catalogs_sorted = _increasing(self._catalog_seqs)
        self.walked: dict[str, Any] = {}
        """What one check's walk found, kept for a later check of this verify (``walked.py``)."""
        self.listings = _listings(run.mcp, self.walked)
        self._listing_seqs = {server: [x.seq for x in found] for server, found in self.listings.items()}
        self._typed = _typed_items(run)
        self.sent = _sent_outputs(run, self._typed)
        """call_id → every function_call_output for it in a request: (turn, index, item)."""
        self._exchanges: dict[int, Exchange | MalformedAnswer | str | None] = {}
        self._outcomes: dict[int, CallOutcome | None] = {}
        self._tasks: dict[int, TaskTrace | None] = {}
        self._expected: dict[int, dict[str, Any] | None] = {}
        self._verdicts: dict[int, Verdict | None] = {}
        self.by_result: dict[tuple[bytes, int], Verdict] = {}
        """A plain result's verdict by its content and its schema's identity (``verdict``)."""
        self._renderings: dict[RenderingKey, str] = {}
        """Each distinct result's rendered text (``expected``): calls that read the same file
        are given the same output, rendered once."""
        self._simple = SimpleSchemas()
        self.tag_owners: dict[int, CallTrace | None] = {}
        """id(call) → mcp_side.tagged_for_another's answer, asked by three checks."""
        self._together: tuple[CallJudge, ...] = ()
        self._common_judge: type[CommonShape] | None = None
        self._judged: dict[CallJudge, list[Finding] | Exception] | None = None

    def judge_together(self, judges: Sequence[CallJudge],
                       common: type[CommonShape] | None = None) -> None:
        """Let ``judged`` run ``judges`` (per-call checks' steps, in the checks' order) in one
        pass over the calls, each call by all of them in turn: the call's events are read
        from memory once and stay at hand for the next check, where check after check over
        every call would fetch them again. Every step is a pure function of the record and
        these cached facts, so the order the calls are judged in changes no finding. A call
        of the common shape gets the findings of ``common`` (``call_common.CommonCalls``, which
        imports the steps, made for these facts, when it judges for all of ``judges`` and
        ``common_shape`` is on) instead."""
        self._together, self._common_judge, self._judged = tuple(judges), common, None

    def judged(self, judge: CallJudge) -> list[Finding]:
        """``judge``'s findings over the run's calls, in call order (a new list); what it
        raised (the first, at the call it met it) is raised again, as the check would have."""
        if judge not in self._together:
            return [found for found in (judge(call, self) for call in self.run.calls) if found is not None]
        if self._judged is None:
            self._judged = self._judge_calls()
        result = self._judged[judge]
        if isinstance(result, Exception):
            raise result
        return list(result)  # the check's own list, to extend as it likes

    def _judge_calls(self) -> dict[CallJudge, list[Finding] | Exception]:
        results: dict[CallJudge, list[Finding] | Exception] = {judge: [] for judge in self._together}
        judges = list(self._together)
        common, places = self._common_calls(judges)
        lists = [results[judge] for judge in judges]
        for call in self.run.calls:
            shaped = common.findings(call) if common is not None else None
            if shaped is not None:
                for into, held in zip(lists, shaped if places is None else [shaped[p] for p in places],
                                      strict=True):
                    if held is not None:
                        into.append(held)  # type: ignore[union-attr]  # no Exception yet: common is on
                continue
            for judge in judges:
                try:
                    found = judge(call, self)
                except Exception as exc:  # raised again by ``judged``, where the check runs
                    results[judge] = exc
                    judges = [other for other in judges if other is not judge]
                    common = None  # its findings are for every step
                    continue
                if found is not None:
                    results[judge].append(found)  # type: ignore[union-attr]  # an Exception left judges
        return results

    def _common_calls(self, judges: list[CallJudge]) -> tuple[CommonShape | None, list[int] | None]:
        """The common-shape judge for ``judges``, with the place of each judge's finding in
        its findings (None: the judges are its steps, in order); None when it is off or not
        for all of these."""
        if self._common_judge is None or not self.common_shape:
            return None, None
        common = self._common_judge(self)
        if not all(judge in common.steps for judge in judges):
            return None, None
        places = [common.steps.index(judge) for judge in judges]
        return common, None if places == list(range(len(common.steps))) else places

    def assembled(self, current: ModelRound) -> Assembled:
        """What the turn's recorded stream events assemble to (the live assembler's view)."""
        if current.turn not in self._assembled:
            # an unknown dialect: model_response says verify cannot read it; the rest reads on
            reader = known_reader(current.dialect) or RESPONSES
            self._assembled[current.turn] = reader.assemble(self.stream_of(current))
        return self._assembled[current.turn]

    def stream_of(self, current: ModelRound) -> list[StreamEvent]:
        """The turn's stream events as the assembler reads them, made once: each parses its
        data once (``StreamEvent.payload``), for the assembler and the stream checks alike."""
        if current.turn not in self._streams:
            self._streams[current.turn] = current.stream_events  # the indexer's, some parsed already
        return self._streams[current.turn]

    def turn(self, number: int) -> ModelTurn | None:
        found = self.turns.get(number)
        return found if isinstance(found, ModelTurn) else None

    def function_call(self, call: CallTrace) -> FunctionCall | None:
        """The live reader's view of the call's item (its arguments text and any problem):
        of the stream item it started from, when the completed response contradicts that."""
        if call.final_item is not None or call.dropped:
            started = read_call(call.item, call.index)
            return started if isinstance(started, FunctionCall) else None
        return self.turn_calls(call.turn).get(call.call_id)

    def turn_calls(self, turn: int) -> dict[str, FunctionCall]:
        """call_id → the live reader's view of each call of turn ``turn``'s response (made once)."""
        found = self._calls.get(turn)
        if found is None:
            read = self.turn(turn)
            found = self._calls[turn] = {c.call_id: c for c in read.calls} if read is not None else {}
        return found

    def declared(self, turn: int, alias: Any) -> dict[str, Any] | None:
        """The tools entry the model was offered as ``alias`` in turn ``turn``'s request."""
        return self.declarations(turn).get(alias) if isinstance(alias, str) else None

    def declarations(self, turn: int) -> dict[Any, dict[str, Any]]:
        """alias → the tools entry turn ``turn``'s request offered it as (declared, added, or
        loaded by a search), made once per turn."""
        found = self._declared.get(turn)
        if found is None:
            current = self.run.round(turn)
            tools = current.body.get("tools") if current is not None else None
            loaded = loaded_by_alias(self.input_items(current, TOOL_SEARCH_OUTPUT)) if current else {}
            items = self.input_items(current, ADDITIONAL_TOOLS) if current is not None else None
            found = self._declared[turn] = {**loaded, **offered_by_alias(tools, items)}
        return found

    def lists_tools(self, turn: int) -> bool:
        """Whether turn ``turn``'s request body has a ``tools`` list (read once per turn)."""
        found = self._lists_tools.get(turn)
        if found is None:
            current = self.run.round(turn)
            found = current is not None and isinstance(current.body.get("tools"), list)
            self._lists_tools[turn] = found
        return found

    def input_items(self, current: ModelRound, kind: str) -> list[dict[str, Any]]:
        """The items of type ``kind`` in the request's ``input``, in order (what the stages'
        readers of one kind of item pick out of the whole input)."""
        return [item for _, item in self.indexed_items(current, kind)]

    def indexed_items(self, current: ModelRound, kind: str) -> list[tuple[int, dict[str, Any]]]:
        """Those items with their index in ``input``."""
        return self._typed.get(id(current.body), {}).get(kind, [])

    def catalog_at(self, seq: int) -> dict[str, Any] | None:
        """The declarations event in force at ``seq`` (the latest before it)."""
        index = bisect.bisect_left(self._catalog_seqs, seq) - 1
        return self.run.catalogs[index] if index >= 0 else None

    def catalog_span(self, seq: int) -> Span[dict[str, Any] | None]:
        """``catalog_at(seq)`` with the seqs it is in force for: each ``s`` with ``lo < s <= hi``."""
        return _span(self._catalog_seqs, self.run.catalogs, seq, self._catalogs_sorted)

    def listing_at(self, server: Any, seq: int) -> Listing | None:
        if not isinstance(server, str):
            return None
        seqs = self._listing_seqs.get(server, [])
        index = bisect.bisect_left(seqs, seq) - 1
        return self.listings[server][index] if index >= 0 else None

    def listing_span(self, server: str, seq: int) -> Span[Listing | None]:
        """``listing_at(server, seq)`` with the seqs it is the answer for (``catalog_span``)."""
        seqs = self._listing_seqs.get(server, [])
        return _span(seqs, self.listings.get(server, []), seq, _increasing(seqs))

    def rule_of(self, server: Any, tool: Any, seq: int) -> dict[str, Any] | None:
        """The inputSchema ``server`` listed for ``tool`` before ``seq``."""
        listing = self.listing_at(server, seq) if isinstance(server, str) else None
        entry = listing.tools.get(tool) if listing is not None and isinstance(tool, str) else None
        schema = entry.get("inputSchema") if entry is not None else None
        return schema if isinstance(schema, dict) else None

    def output_schema_of(self, call: CallTrace) -> Any:
        """The outputSchema the call's tool had when its tools/call went out (None: none)."""
        request = call.first("mcp_requests")
        routed = call.first("routed") or {}
        if request is None or not isinstance(request.get("seq"), int):
            return None
        listing = self.listing_at(routed.get("server"), request["seq"])
        tool = routed.get("tool")
        entry = listing.tools.get(tool) if listing is not None and isinstance(tool, str) else None
        return entry.get("outputSchema") if entry is not None else None

    def fed_back(self, call: CallTrace) -> bool:
        """Whether ``sent_after(call)`` holds anything: its last output is in a later turn's
        request (``sent`` keeps each call_id's outputs in turn order)."""
        entries = self.sent.get(call.call_id)
        return entries is not None and len(entries) > 0 and entries[-1][0] > call.turn

    def sent_after(self, call: CallTrace) -> list[tuple[int, int, dict[str, Any]]]:
        """The call's outputs in requests after its response (turn, index in input, item)."""
        entries = self.sent.get(call.call_id)
        if not entries:
            return []
        # in turn order (``_sent_outputs``): a replayed run's call is in every later request
        return entries[bisect.bisect_right(entries, call.turn, key=_turn_of):]

    def swapped_with(self, call: CallTrace, item: dict[str, Any]) -> CallTrace | None:
        """Another call of the same response whose output ``item`` carries, when it is not
        ``call``'s own: the sign of call_ids swapped between outputs."""
        if _same_output(item, self.expected(call)):
            return None
        current = self.run.round(call.turn)
        others = current.calls if current is not None else []
        return next((o for o in others if o is not call and _same_output(item, self.expected(o))), None)

    def task(self, call: CallTrace) -> TaskTrace | None:
        """The call's ``task_of``, read once (half a dozen checks ask for it)."""
        key = id(call)
        if key in self._tasks:
            return self._tasks[key]
        found = self._tasks[key] = task_of(call)
        return found

    def answer(self, call: CallTrace) -> Event | None:
        """The call's ``call_answer``, from its task read once."""
        return answer_of(call, self.task(call))

    def exchange(self, call: CallTrace) -> Exchange | MalformedAnswer | str | None:
        """The call's recorded exchange (see ``outcomes.recorded_exchange``), read once."""
        key = id(call)
        if key not in self._exchanges:
            self._exchanges[key] = recorded_exchange(call, self.task(call))
        return self._exchanges[key]

    def outcome(self, call: CallTrace) -> CallOutcome | None:
        key = id(call)
        if key not in self._outcomes:
            schema, exchange = self.output_schema_of(call), self.exchange(call)
            if schema is not None and self._surely_kept(schema, exchange):
                schema = None  # a result that keeps the schema is classified as with none
            self._outcomes[key] = rebuild_outcome(call, exchange, output_schema=schema, trace=self.task(call))
        return self._outcomes[key]

    def verdict(self, call: CallTrace) -> Verdict | None:
        """``outcome(call).verdict`` (None when there is no outcome), the class and words the
        checks judge. A plain result (no task, no chain given up on, no outputSchema it does
        not surely keep) is classified by its content and its tool's schema alone, so calls
        with equal results share one verdict, classified once by the live path's function."""
        key = id(call)
        if key in self._verdicts:
            return self._verdicts[key]
        plain = self._plain_result(call)
        found = self.by_result.get(plain) if plain is not None else None
        if found is None:
            outcome = self.outcome(call)
            found = outcome.verdict if outcome is not None else None
            if plain is not None and found is not None and self._kept(call):
                self.by_result[plain] = found
        self._verdicts[key] = found
        return found

    def hold(self, call: CallTrace, verdict: Verdict, expected: dict[str, Any]) -> None:
        """Keep what ``call_common`` found of a call of the common shape (no task: it
        classified a plain result) as ``task``, ``verdict`` and ``expected`` would."""
        key = id(call)
        self._tasks[key], self._verdicts[key], self._expected[key] = None, verdict, expected

    def _plain_result(self, call: CallTrace) -> tuple[bytes, int] | None:
        """The content of the call's result and the identity of its tool's outputSchema
        when ``outcome`` classifies the call by those alone (``outcome_from_exchange``:
        ``exchange_verdict`` reads the result and the schema only), else None."""
        exchange = self.exchange(call)
        if type(exchange) is not Exchange or exchange.error is not None or exchange.method == READ_RESOURCE:
            return None
        result = exchange.result
        if type(result) is not dict or self.task(call) is not None or input_required(exchange) is not None:
            return None  # a task's answer, or a chain given up on: rebuild_outcome's other ways
        content = result_key(result)
        return (content, id(self.output_schema_of(call))) if content is not None else None

    def _kept(self, call: CallTrace) -> bool:
        """Whether the call's result was classified as with no schema (none, or one it surely
        keeps: ``outcome``), so its verdict holds for every equal result under that schema."""
        schema = self.output_schema_of(call)
        return schema is None or self._surely_kept(schema, self.exchange(call))

    def _surely_kept(self, schema: Any, exchange: Exchange | MalformedAnswer | str | None) -> bool:
        """Whether the exchange's structuredContent surely keeps ``schema`` (``simple_schema``):
        then the live path's output check finds nothing, so it need not run."""
        result = exchange.result if isinstance(exchange, Exchange) and exchange.error is None else None
        if type(result) is not dict or "structuredContent" not in result:
            return False
        return self._simple.surely_keeps(schema, result["structuredContent"])

    def expected(self, call: CallTrace) -> dict[str, Any] | None:
        """The function_call_output the call must have produced (None if not derivable)."""
        key = id(call)
        if key not in self._expected:
            self._expected[key] = self._expected_item(call)
        return self._expected[key]

    def _expected_item(self, call: CallTrace) -> dict[str, Any] | None:
        verdict = self.verdict(call)
        refusals = [r for d in call.duplicates if (r := rebuild_outcome(d, None)) is not None]
        declared = self.declared(call.turn, call.alias)
        structured = isinstance(declared, dict) and "output_schema" in declared
        if verdict is None:
            return None
        shared = rendering_key(verdict, structured)
        text = self._renderings.get(shared) if shared is not None else None
        if text is not None and call.call_id:  # another call's equal result, rendered already
            return feedback_item(call.call_id, with_refusals(text, refusals))
        outcome = self.outcome(call)
        if outcome is None:
            return None
        output = expected_output(outcome, self.run, structured=structured)
        if shared is not None and isinstance(output, str):
            self._renderings[shared] = output  # a text: immutable, shared by calls' items
        assert outcome.call_id is not None
        return feedback_item(outcome.call_id, with_refusals(output, refusals))


def _turn_of(entry: tuple[int, int, dict[str, Any]]) -> int:
    return entry[0]


_T = TypeVar("_T")
Span = tuple[_T, float, float]
"""What ``bisect`` finds for a seq, and the seqs ``lo < s <= hi`` it finds the same for."""


def _increasing(seqs: list[int]) -> bool:
    return all(map(operator.lt, seqs, seqs[1:]))  # in C


def _span(seqs: list[int], found: Sequence[_T], seq: int, increasing: bool) -> Span[_T | None]:
    """The last of ``found`` whose seq (in ``seqs``) is before ``seq``, with the span of seqs
    it is the last for (of seqs out of order: ``seq`` alone, as bisect reads them)."""
    index = bisect.bisect_left(seqs, seq) - 1
    item = found[index] if index >= 0 else None
    if not increasing:
        return item, seq - 1, seq
    after = seqs[index] if index >= 0 else -math.inf
    return item, after, seqs[index + 1] if index + 1 < len(seqs) else math.inf


def _same_output(item: dict[str, Any], expected: dict[str, Any] | None) -> bool:
    return expected is not None and item.get("output") == expected.get("output")


_UNEXPECTED_SHAPE = (TypeError, AttributeError, KeyError, IndexError, ValueError)
"""What ``checks._run_check`` turns into a finding: the walk leaves it to the check."""

Typed = dict[str, list[tuple[int, dict[str, Any]]]]
_TYPE_OF: Final = operator.itemgetter("type")
"""An input's items by their type: (index, item), in order."""


def _typed_items(run: RunRecord) -> dict[int, Typed]:
    """id(request body) → its input's items by type.

    A replayed request's input begins with the previous request's very items (the reader
    shares them, ``transcript/delta.py``), so only the items after those are read again:
    one pass over a replayed run is linear in its items, not in the square of its turns."""
    found: dict[int, Typed] = {}
    previous: list[Any] = []
    typed: Typed = {}
    for current in run.rounds:
        items = current.body.get("input")
        if not isinstance(items, list):
            found[id(current.body)] = {}
            continue
        shared = len(previous) <= len(items) and all(map(operator.is_, previous, items))  # in C
        typed = {kind: list(entries) for kind, entries in typed.items()} if shared else {}
        start = len(previous) if shared else 0
        if not _typed_in_c(typed, items, start):
            for index in range(start, len(items)):
                item = items[index]
                kind = item.get("type") if isinstance(item, dict) else None
                if isinstance(kind, str):
                    typed.setdefault(kind, []).append((index, item))
        found[id(current.body)] = typed
        previous = items
    return found


def _typed_in_c(typed: Typed, items: list[Any], start: int) -> bool:
    """``items`` from ``start`` on filed into ``typed`` by type, in C, when each is an object
    with a string type (a request's new items: mostly one or two types); False: nothing done."""
    new = items[start:]
    try:
        kinds = list(map(_TYPE_OF, new))
    except (KeyError, TypeError):  # an item without a type, or no object: one by one
        return False
    if set(map(type, kinds)) - {str} or set(map(type, new)) - {dict}:
        return False
    for kind in dict.fromkeys(kinds):  # in the order the types first come, as setdefault files them
        of_kind = map(operator.eq, kinds, repeat(kind))
        indexed = zip(range(start, len(items)), new, strict=True)
        typed.setdefault(kind, []).extend(itertools.compress(indexed, of_kind))
    return True


def _sent_outputs(
    run: RunRecord, typed: dict[int, Typed]
) -> dict[str, list[tuple[int, int, dict[str, Any]]]]:
    """call_id → (turn, index, item) of every output for it, in turn order. A replayed
    request's outputs begin with the previous request's very entries: their call_ids are
    not read again, and their entries are made and filed in C."""
    found: dict[str, list[tuple[int, int, dict[str, Any]]]] = {}
    previous: list[tuple[int, dict[str, Any]]] = []
    filed: _Filed | None = None  # the previous request's outputs, each with its call_id's entries
    for current in run.rounds:
        entries = typed.get(id(current.body), {}).get(FUNCTION_CALL_OUTPUT, [])
        if previous and len(previous) <= len(entries) and all(map(operator.is_, previous, entries)):
            filed = filed or _Filed(found, previous)
            filed.add(found, entries[len(previous):])
            filed.enter(current.turn)
        else:  # whole bodies, or chained (nothing shared): each output filed anew
            if not _filed_in_c(found, entries, current.turn):
                for index, item in entries:
                    found.setdefault(str(item.get("call_id")), []).append((current.turn, index, item))
            filed = None
        previous = entries
    return found


def _filed_in_c(found: dict[str, list[tuple[int, int, dict[str, Any]]]],
                entries: list[tuple[int, dict[str, Any]]], turn: int) -> bool:
    """A request's outputs filed in C when each names a call_id (a string) of its own that
    no earlier request's output named (a chained run's: one output per call); False: nothing
    done."""
    try:
        call_ids = [item["call_id"] for _, item in entries]
    except (KeyError, TypeError):
        return False
    if (set(map(type, call_ids)) - {str} or len(set(call_ids)) < len(call_ids)
            or not found.keys().isdisjoint(call_ids)):
        return False
    indexes, items = [index for index, _ in entries], [item for _, item in entries]
    found.update(zip(call_ids, map(list, zip(zip(repeat(turn), indexes, items, strict=False))), strict=True))
    return True


class _Filed:
    """A request's outputs, each with the entries of its call_id (``_sent_outputs``)."""

    def __init__(self, found: dict[str, list[tuple[int, int, dict[str, Any]]]],
                 entries: list[tuple[int, dict[str, Any]]]) -> None:
        self.lists = [found[str(item.get("call_id"))] for _, item in entries]
        self.indexes = [index for index, _ in entries]
        self.items = [item for _, item in entries]

    def add(self, found: dict[str, list[tuple[int, int, dict[str, Any]]]],
            entries: list[tuple[int, dict[str, Any]]]) -> None:
        """The outputs a request adds after those it carries on."""
        for index, item in entries:
            self.lists.append(found.setdefault(str(item.get("call_id")), []))
            self.indexes.append(index)
            self.items.append(item)

    def enter(self, turn: int) -> None:
        """Each output's entry for request ``turn``, made and filed in C."""
        deque(map(list.append, self.lists, zip(repeat(turn), self.indexes, self.items)), maxlen=0)


def _listings(mcp: list[dict[str, Any]], walked: dict[str, Any]) -> dict[str, list[Listing]]:
    """Every server's tools/list answers grouped into complete listings (pages joined).
    Their events are picked out by the walk that pairs the MCP events, kept in ``walked``
    for check_mcp_pairs (``mcp_pairs.py``: one walk over them, not two); when that walk
    meets a value it cannot take, the check meets it again, and here every event is read."""
    try:
        walk = walk_mcp(mcp)
    except _UNEXPECTED_SHAPE:
        listed = mcp
    else:
        walked[MCP_WALK], listed = walk, walk.listed
    first_page: dict[tuple[Any, Any, Any], bool] = {}
    found: dict[str, list[Listing]] = {}
    for event in listed:
        if event.get("method") != LISTED:
            continue
        message = event.get("message") or {}
        key = (event.get("server"), event.get("connection"), event.get("mcp_id"))  # envelope: hashable
        if event["kind"] == MCP_REQUEST:
            params = message.get("params")
            first_page[key] = not (isinstance(params, dict) and "cursor" in params)
        elif event["kind"] == MCP_RESPONSE:
            _add_page(found, event, message, first_page.get(key, True))
    return found


def _add_page(
    found: dict[str, list[Listing]], event: dict[str, Any], message: dict[str, Any], first: bool
) -> None:
    server = event.get("server")
    result = message.get("result")
    if not isinstance(server, str) or not isinstance(result, dict):
        return
    listings = found.setdefault(server, [])
    if first or not listings:
        listings.append(Listing(server=server, seq=event["seq"]))
    listing = listings[-1]
    for tool in result.get("tools", []) if isinstance(result.get("tools"), list) else []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            listing.tools.setdefault(tool["name"], tool)  # a duplicate name: the first one is used
