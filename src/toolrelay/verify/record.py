"""A run's transcript indexed for checking: rounds, calls and MCP messages, in one pass.

Events are kept as the dicts read from the transcript (``seq``, ``kind``, fields), never
re-shaped, so every finding can point at the seq numbers it rests on. A call is what the
model asked for: each ``function_call`` item of a model response. The events toolrelay
recorded for that call (parse, route, MCP messages tagged with its call_id, outcome,
feedback) are attached to it by ``call_id`` — the recorded link between the two id
domains, never a guess. Events naming a call_id the model never used are kept apart
(``orphans``), as evidence of their own. A function_call reusing the call_id of an
earlier one in the same response is a duplicate: it is kept beside that first call
(``CallTrace.duplicates``, not in ``calls``), and only a ``duplicate_call_id`` outcome —
its refusal — is attached to it; everything else under the call_id is the first call's.

A streamed turn's ``model_stream`` events are kept with its round. A call may start
while its response is still streaming (as its ``output_item.done`` arrives), so its
events can come before the ``model_response``: the call is indexed from that stream
event already, and the response, when it comes, confirms it (its item and position are
the response's from then on). An item closes as the live assembler closes it: never by an
event after the stream's terminal (or ``error``) event, nor by data it cannot read as a JSON
object (nested too deep): the live reader reports such an event, and starts no call from it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any, ClassVar, Final

from ..events import (
    DEFAULT_DIALECT,
    MCP_REPLY,
    MCP_REQUEST,
    MCP_RESPONSE,
    MCP_ROLES,
    MCP_SERVER_REQUEST,
    CallOutcomeEvent,
    CallParsed,
    CallRouted,
    CatalogReady,
    FeedbackEvent,
    ModelRequestEvent,
    ModelResponseEvent,
    ModelStreamEvent,
    RunEndEvent,
    RunResumedEvent,
    RunStartEvent,
    ServerExitedEvent,
    UserTurnEvent,
)
from ..protocol import request_envelope
from ..protocol.responses import FUNCTION_CALL, OUTPUT_ITEM_DONE, STREAM_ERROR, TERMINAL_STATUS
from ..protocol.stream import ItemDone, StreamEvent
from ..relay.stages.alias import namespaced_alias
from ..relay.stages.dialects import RESPONSES, dialect_of, known_reader, reader_for
from ..relay.stages.direct_call import DirectCall
from ..relay.stages.parse import ModelTurn
from .shape import check_envelopes, envelope_step

__all__ = [
    "CALL_METHODS", "REFUSED_DUPLICATE", "CallTrace", "ModelRound", "RunRecord", "asks_for_input",
    "ends_stream", "index_events", "is_2xx", "message_of",
]

Event = dict[str, Any]
_NONE: Final[list[Event]] = []
"""``of_kind`` for a kind the run has no event of (shared: never changed)."""

_CALL_EVENT_LISTS = {
    CallParsed.kind: "parsed",
    CallRouted.kind: "routed",
    CallOutcomeEvent.kind: "outcomes",
    FeedbackEvent.kind: "feedbacks",
}
"""Event kind → the CallTrace list its events join."""
CALL_METHODS: Final = ("tools/call", "resources/read")
"""The requests that carry a model's call: a tool's, or the ``--expose-resources`` reader's
(a tuple: a recorded method of the wrong type is compared, never hashed)."""
_RESPONSES: Final = RESPONSES.dialect
_ASCII_ESCAPE: Final = "\\u00"
"""How a JSON text may spell a character of ``OUTPUT_ITEM_DONE`` or ``FUNCTION_CALL`` other
than as itself: each is ASCII without a short escape (``\\n``, ``\\"``...), so only as
``\\u00XX``. A stream event's data holding neither this nor both strings closes no call."""
_ENDINGS: Final = frozenset({*TERMINAL_STATUS, STREAM_ERROR})
"""The types of the events that end a stream: the live assembler closes no item after one."""
_COMPLETED, _INCOMPLETE, _FAILED = (f'{kind.removeprefix("response")}"' for kind in TERMINAL_STATUS)
"""How a terminal event's data without ``\\u00XX`` escapes ends its type (``.completed"``: each
type is ASCII without a short escape, as ``_ASCII_ESCAPE`` says); an ``error`` event's type is
``_ERROR_TYPE``. Data holding none of these, whose event field names no ``_ENDINGS`` type (the
assembler takes it when the data says no type), ends no stream."""
_ERROR_TYPE: Final = re.compile(r'"error"\s*[^\s:]')
"""``"error"`` as a value (a key is followed by its colon: every response says ``"error":``)."""
REFUSED_DUPLICATE: Final = "duplicate_call_id"
"""The outcome status of a function_call refused for reusing a call_id of its response."""


def is_2xx(status: Any) -> bool:
    return isinstance(status, int) and 200 <= status < 300


@dataclass(slots=True, kw_only=True)
class CallTrace:
    """One function_call of the model and every event recorded for it."""

    call_id: str
    turn: int
    index: int
    """Position of the item in the response's ``output``."""
    item: dict[str, Any]
    """The function_call item exactly as the model sent it."""
    response_seq: int
    closed_seq: int | None = None
    """For a streamed response: the seq of the ``output_item.done`` event that closed the
    call's item (a call may start from then on)."""
    parsed: list[Event] = field(default_factory=list)
    routed: list[Event] = field(default_factory=list)
    mcp_requests: list[Event] = field(default_factory=list)
    """tools/call requests tagged with this call_id (exactly one when it was sent): in
    2026-07-28, the last of its chain (``input_rounds`` hold the earlier ones)."""
    mcp_responses: list[Event] = field(default_factory=list)
    input_rounds: list[tuple[Event, Event]] = field(default_factory=list)
    """2026-07-28: the (tools/call, answer) pairs answered ``input_required`` before the
    one in ``mcp_requests``, in order; each was retried with the inputs it asked for."""
    server_requests: list[Event] = field(default_factory=list)
    """What the server asked toolrelay during the call (sampling, elicitation, roots...)
    and toolrelay's replies, in order."""
    task_messages: list[Event] = field(default_factory=list)
    """A tool call run as an MCP task: toolrelay's ``tasks/get``, ``tasks/result`` and
    ``tasks/cancel`` requests tagged with this call_id, and their answers, in order
    (``task_trace.py`` reads them)."""
    mcp_other: list[Event] = field(default_factory=list)
    """Other MCP messages tagged with it (e.g. notifications/cancelled)."""
    outcomes: list[Event] = field(default_factory=list)
    feedbacks: list[Event] = field(default_factory=list)
    duplicates: list[CallTrace] = field(default_factory=list)
    """Later function_calls of the same response reusing this call_id (to be refused)."""
    stopped: list[Event] = field(default_factory=list)
    """What a stopped run left of this call before it was resumed (a request never answered,
    a ``cancelled`` outcome): the resumed run retried it, so these are not its exchange."""
    duplicate_of: CallTrace | None = None
    """For a duplicate: the first function_call with its call_id."""
    final_item: dict[str, Any] | None = None
    """For a call indexed from its stream item: the completed response's item with its
    call_id when that names another tool or other arguments (``item`` stays the stream's:
    the call started from it). The endpoint contradicted itself."""
    dropped: bool = False
    """For a call indexed from its stream item: the completed response holds no
    function_call with its call_id. The endpoint contradicted itself."""

    _alias: tuple[dict[str, Any], Any] | None = field(default=None, compare=False, repr=False)
    """The item ``alias`` was last read from, and what it read (every check asks for it)."""
    _ids: tuple[Event | None, Any, Any] | None = field(default=None, compare=False, repr=False)
    """The event ``finding_ids`` last read, and what it read (every finding about the call asks)."""

    @property
    def alias(self) -> Any:
        """The alias the call names: its ``name``, or ``<namespace>.<name>``."""
        item = self.item
        read = self._alias
        if read is not None and read[0] is item:
            return read[1]
        name, namespace = item.get("name"), item.get("namespace")
        alias = name
        if isinstance(namespace, str) and isinstance(name, str):
            alias = namespaced_alias(namespace, name)
        self._alias = (item, alias)
        return alias

    def finding_ids(self) -> tuple[Any, Any]:
        """(server, mcp_id) a finding about the call carries: its first tools/call's, else
        the server it was routed to and no MCP id."""
        requests, routed = self.mcp_requests, self.routed
        source = requests[0] if requests else routed[0] if routed else None
        read = self._ids
        if read is not None and read[0] is source:
            return read[1], read[2]
        if requests:
            server, mcp_id = requests[0].get("server"), requests[0]["message"].get("id")
        else:
            server, mcp_id = (routed[0].get("server") if routed else None), None
        self._ids = (source, server, mcp_id)
        return server, mcp_id

    @property
    def outcome(self) -> dict[str, Any] | None:
        """The recorded outcome (class, ids, message), when there is one."""
        return self.outcomes[0].get("outcome") if self.outcomes else None

    @property
    def status(self) -> str | None:
        outcome = self.outcome
        return outcome.get("status") if isinstance(outcome, dict) else None

    def first(self, name: str) -> Event | None:
        events: list[Event] = getattr(self, name)
        return events[0] if events else None


def _traced(call_id: str, turn: int, index: int, item: dict[str, Any], response_seq: int,
            closed_seq: int | None = None) -> CallTrace:
    """``CallTrace(call_id=..., ...)`` with every other field its default, made in a third of
    the time (each list a literal, not a call of its factory: the indexer makes one for each
    call of a run). ``tests/verify/test_index_early.py`` holds it to the class's fields."""
    call = _new_trace(CallTrace)
    call.call_id = call_id
    call.turn = turn
    call.index = index
    call.item = item
    call.response_seq = response_seq
    call.closed_seq = closed_seq
    call.parsed = []
    call.routed = []
    call.mcp_requests = []
    call.mcp_responses = []
    call.input_rounds = []
    call.server_requests = []
    call.task_messages = []
    call.mcp_other = []
    call.outcomes = []
    call.feedbacks = []
    call.duplicates = []
    call.stopped = []
    call.duplicate_of = None
    call.final_item = None
    call.dropped = False
    call._alias = None
    call._ids = None
    return call


_new_trace: Final = object.__new__


@dataclass(slots=True, kw_only=True)
class ModelRound:
    """One turn: the request actually answered (the last attempt) and its response."""

    turn: int
    request: Event | None = None
    response: Event | None = None
    attempts: int = 0
    calls: list[CallTrace] = field(default_factory=list)
    stream: list[Event] = field(default_factory=list)
    """The ``model_stream`` events of the answered attempt, in order (empty: not streamed)."""
    shown_at: dict[int, StreamEvent] = field(default_factory=dict)
    """Position in ``stream`` → that record as the assembler's event, made once, when first
    asked for (``shown``): the indexer makes those it reads, the rest wait for a check that
    needs them (the common stream shape needs only the ones the indexer parsed)."""
    closed_at: list[int] = field(default_factory=list)
    """The positions in ``stream`` of the events that closed a function_call item (the
    ``output_item.done`` events the indexer parsed), in order."""
    streamed_calls: dict[str, CallTrace] = field(default_factory=dict)
    """call_id → the call indexed from its stream event, until the response confirms it."""
    _read: tuple[dict[str, Any], ModelTurn | str] | None = None
    """The answer this round last read, and what its reader made of it (``read``)."""
    _view: tuple[dict[str, Any], dict[str, Any]] | None = None
    """The request body last read, and its reading in the Responses vocabulary (``body``)."""
    before: ModelRound | None = field(default=None, repr=False, compare=False)
    """The round of the turn before (None: the first): a replayed request's reading starts
    from that one's (``_view_before``)."""
    may_end: list[int] = field(default_factory=list)
    """Positions in ``stream`` of the events that may be its terminal one (``_COMPLETED``...),
    not read yet: read when an item closes after them (``_has_ended``), which is rare."""
    ended: bool = False
    """A terminal event (``response.completed``, ``.incomplete``, ``.failed``) or an ``error``
    event was read in the stream: the live assembler closes no item after it."""
    closer: Any = None
    """For a stream of another dialect than Responses, or a Responses one from an event whose
    call item the assembler completes (``_whole_call``): its assembler, fed event by event,
    which says when a call's item closed (``_stream_handler``)."""

    def shown(self, position: int) -> StreamEvent:
        """The stream record at ``position`` as the assembler's event, made once: it parses
        its data once (``StreamEvent.payload``) for the indexer, the assembler and the stream
        checks alike."""
        found = self.shown_at.get(position)
        if found is None:
            found = self.shown_at[position] = stream_event(self.stream[position])
        return found

    @property
    def stream_events(self) -> list[StreamEvent]:
        """Every stream record as the assembler's event, in order (``RunFacts.stream_of``)."""
        return [self.shown(position) for position in range(len(self.stream))]

    @property
    def dialect(self) -> object:
        """The dialect the turn's model events name (a Responses one when they name none)."""
        return dialect_of(self.response or self.request)

    def read(self, answer: dict[str, Any] | None = None) -> ModelTurn | str | None:
        """The answer (``answer``, else the response's) as its dialect's reader reads it,
        or why it cannot be read (an unknown dialect, no answer of it); None: no answer."""
        answer = self.answer if answer is None else answer
        if answer is None:
            return None
        if self._read is None or self._read[0] is not answer:
            try:
                read: ModelTurn | str = reader_for(self.dialect).turn(answer)
            except ValueError as exc:  # UnknownDialect too
                read = str(exc)
            self._read = (answer, read)
        return self._read[1]

    @property
    def body(self) -> dict[str, Any]:
        """The request body ({} when missing), as its dialect's reader gives it in the
        Responses vocabulary (a chat body's messages as input items: ``raw_body`` is the
        recorded one)."""
        body = self.raw_body
        if not body or dialect_of(self.request) == RESPONSES.dialect:
            return body
        if self._view is None or self._view[0] is not body:
            reader = known_reader(dialect_of(self.request))
            self._view = (body, reader.request(body, self._view_before()) if reader is not None else body)
        return self._view[1]

    def _view_before(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The round before's request body and its reading, when read already (rounds are read
        in order, mostly) and of this one's dialect: what a replayed request repeats of it."""
        before = self.before
        view = before._view if before is not None else None
        if before is None or view is None or view[0] is not before.raw_body \
                or dialect_of(before.request) != dialect_of(self.request):
            return None
        return view

    @property
    def raw_body(self) -> dict[str, Any]:
        """The request body exactly as recorded ({} when missing)."""
        body = self.request.get("body") if self.request else None
        return body if isinstance(body, dict) else {}

    @property
    def answer(self) -> dict[str, Any] | None:
        """The response body when it is a 2xx JSON object, else None."""
        if self.response is None or not is_2xx(self.response.get("status")):
            return None
        body = self.response.get("body")
        return body if isinstance(body, dict) else None

    def output(self) -> list[Any]:
        """The answer's output items as its reader gives them ([] when it cannot be read)."""
        read = self.read()
        return read.output if isinstance(read, ModelTurn) else []


@dataclass(slots=True, kw_only=True)
class RunRecord:
    """Everything verify, explain and the trace view read about one run."""

    source: Path
    events: list[Event]
    run_id: str | None = None
    run_start: Event | None = None
    run_end: Event | None = None
    rounds: list[ModelRound] = field(default_factory=list)
    calls: list[CallTrace] = field(default_factory=list)
    catalogs: list[Event] = field(default_factory=list)
    """``declarations`` events: what the model was offered from then on."""
    mcp: list[Event] = field(default_factory=list)
    """Every MCP message event, in order."""
    exits: list[Event] = field(default_factory=list)
    orphans: list[Event] = field(default_factory=list)
    """Call events whose call_id no model response holds."""
    duplicates: list[CallTrace] = field(default_factory=list)
    """function_calls reusing a call_id of their response (each also in its first call's
    ``duplicates``); they are not in ``calls``."""
    cut_tail: bool = False
    resumes: list[Event] = field(default_factory=list)
    """``run_resumed`` events: the run was stopped and went on in this transcript."""
    abandoned: list[CallTrace] = field(default_factory=list)
    """Calls of a streamed response that was never recorded whole before the run stopped:
    that turn was asked again, so they are no call of the run's (kept as evidence)."""
    files: dict[str, Any] = field(default_factory=dict)
    """For a demo folder: each attachment file's content, by file name."""
    file_differences: list[tuple[str, str, int | None]] = field(default_factory=list)
    """For a demo folder: (file, JSON path, seq) where a file differs from the transcript."""
    stream_texts: dict[str, str] = field(default_factory=dict)
    """For a demo folder: each ``response_N.sse`` file's text, by file name."""
    streamed_run: RunRecord | None = None
    """For a demo folder: the same walk-through run again, streamed (its ``streamed/``)."""
    by_kind: dict[str, list[Event]] = field(default_factory=dict)
    """Every event by its kind, in order (``of_kind``)."""

    def of_kind(self, kind: str) -> list[Event]:
        """The events of ``kind``, in order (gathered in the indexing pass: the checks that
        read one kind of record need not walk every event again). Not to be changed."""
        return self.by_kind.get(kind, _NONE)

    @property
    def context_mode(self) -> str:
        mode = self.run_start.get("context_mode") if self.run_start else None
        return mode if isinstance(mode, str) else "replay"

    @property
    def strict(self) -> bool:
        return bool(self.run_start.get("strict")) if self.run_start else False

    @property
    def status(self) -> str | None:
        return self.run_end.get("status") if self.run_end else None

    def calls_by_id(self) -> dict[str, list[CallTrace]]:
        found: dict[str, list[CallTrace]] = {}
        for call in self.calls:
            found.setdefault(call.call_id, []).append(call)
        return found

    def round(self, turn: int) -> ModelRound | None:
        return self.rounds[turn - 1] if 1 <= turn <= len(self.rounds) else None


class _Indexer:
    """The single pass that builds a RunRecord."""

    split_while_indexing: ClassVar[bool] = True
    """Whether a call's input rounds are moved as its events are indexed (else all once the
    pass is over, as after a resume; the same record either way)."""

    def __init__(self, record: RunRecord) -> None:
        self.record = record
        self.latest: dict[str, CallTrace] = {}
        self._responded: set[tuple[int, str]] = set()  # (response seq, call_id) of each call indexed
        self._handlers: dict[str, Callable[[Event], None]] = {
            **{kind: self._mcp_handler("mcp_other") for kind in MCP_ROLES},
            MCP_REQUEST: self._mcp_handler("mcp_requests", by_method=True),
            MCP_RESPONSE: self._mcp_handler("mcp_responses", by_method=True),
            MCP_SERVER_REQUEST: self._mcp_handler("server_requests"),
            MCP_REPLY: self._mcp_handler("server_requests"),
            **{kind: self._call_event_handler(name) for kind, name in _CALL_EVENT_LISTS.items()},
            ModelRequestEvent.kind: self._request,
            ModelResponseEvent.kind: self._response,
            ModelStreamEvent.kind: self._stream_handler(),
            CatalogReady.kind: record.catalogs.append,
            RunStartEvent.kind: self._first_of("run_start"),
            RunEndEvent.kind: self._first_of("run_end"),
            RunResumedEvent.kind: self._resumed,
            ServerExitedEvent.kind: record.exits.append,
            UserTurnEvent.kind: self._user_turn,
            DirectCall.kind: self._direct_call,
        }
        self._steps: dict[str, tuple[Callable[[Event], None], Callable[[Event], None] | None]] = {}
        self._split: list[tuple[CallTrace, int]] | None = [] if self.split_while_indexing else None
        """Each input round moved while indexing (the call, where its answer stood in
        ``mcp_responses``), so ``_resumed`` can put them back; None: no longer moved here
        (after a resume: ``index_events`` moves them when the pass is over)."""

    def close(self) -> None:
        """Let go of the handlers: each holds the indexer, which holds the record, so left
        in place they make a cycle that keeps a dropped record alive until a full collection
        (which then walks all of it)."""
        self._handlers.clear()
        self._steps.clear()

    def steps(self, kind: str) -> tuple[Callable[[Event], None], Callable[[Event], None] | None]:
        """What an event of ``kind`` is given to: its list in ``by_kind`` (made here, on the
        kind's first event, so ``by_kind`` is in the order kinds first appear) and its
        handler (None: a kind kept only in ``by_kind``)."""
        found = self._steps.get(kind)
        if found is None:
            same: list[Event] = []
            self.record.by_kind[kind] = same
            found = self._steps[kind] = (same.append, self._handlers.get(kind))
        return found

    def _first_of(self, name: str) -> Callable[[Event], None]:
        def keep(event: Event) -> None:
            if getattr(self.record, name) is None:
                setattr(self.record, name, event)

        return keep

    def _resumed(self, event: Event) -> None:
        """The run goes on: an ending before this was not the run's end, a call's exchange
        left unanswered by the stop is set apart (retried or not, the resumed run says), and
        the calls of a response never recorded whole are no longer the run's."""
        record = self.record
        self._unsplit()  # what follows reads each call's exchange as it was recorded
        record.resumes.append(event)
        record.run_end = None
        for call in record.calls:
            answered = {e.get("mcp_id") for e in call.mcp_responses}
            unanswered = [e for e in call.mcp_requests if e.get("mcp_id") not in answered]
            cancelled = [e for e in call.outcomes if (e.get("outcome") or {}).get("status") == "cancelled"]
            call.stopped += unanswered + cancelled
            call.mcp_requests = [e for e in call.mcp_requests if e not in unanswered]
            call.outcomes = [e for e in call.outcomes if e not in cancelled]
            if not call.outcomes and not call.mcp_responses:  # it starts again from its parse
                call.stopped += call.parsed + call.routed
                call.parsed, call.routed = [], []
        for current in record.rounds:
            if current.streamed_calls:  # its response never came: the turn is asked again
                gone = list(current.streamed_calls.values())
                current.calls = [c for c in current.calls if c not in gone]
                record.calls = [c for c in record.calls if c not in gone]
                record.abandoned += gone
                for call in gone:
                    self.latest.pop(call.call_id, None)
                current.streamed_calls = {}

    @property
    def split_after(self) -> bool:
        """Whether the input rounds are left to be moved once the pass is over (else each
        was moved as its call's tools/call events were indexed, each of them: none is left)."""
        return self._split is None

    def _unsplit(self) -> None:
        """Put each input round moved while indexing back where it was, in reverse order,
        and move none from now on."""
        moved, self._split = self._split, None
        for call, answered_at in reversed(moved or ()):
            request, response = call.input_rounds.pop()
            call.mcp_requests.insert(0, request)
            call.mcp_responses.insert(answered_at, response)

    def _direct_call(self, event: Event) -> None:
        """``toolrelay call``'s record: the one call of the transcript, made without a model
        (turn 0: no model turn; its item is what was asked for)."""
        call_id = event.get("call_id")
        if not isinstance(call_id, str) or call_id in self.latest:
            return
        item = {"type": FUNCTION_CALL, "call_id": call_id, "name": event.get("alias"),
                "arguments": event.get("arguments_text")}
        call = _traced(call_id, 0, 0, item, event["seq"])
        self.record.calls.append(call)
        self.latest[call_id] = call

    def _user_turn(self, event: Event) -> None:
        """A conversation's next user turn: the ``run_end`` before it ended the previous user
        turn, not the run (``verify.conversation`` judges each)."""
        self.record.run_end = None

    def _call_event_handler(self, name: str) -> Callable[[Event], None]:
        """What attaches an event of a ``_CALL_EVENT_LISTS`` kind to the call its call_id
        names (the latest one with it), into the list ``name``."""
        latest, orphans, of_call = self.latest, self.record.orphans, attrgetter(name)
        outcomes = name == "outcomes"

        def attach(event: Event) -> None:
            call = latest.get(event.get("call_id"))  # type: ignore[arg-type]
            if call is None:
                orphans.append(event)
                return
            if outcomes and call.duplicates and _is_refusal(event):
                call = next((d for d in call.duplicates if not d.outcomes), call)
            of_call(call).append(event)

        return attach

    def _round(self, turn: Any) -> ModelRound | None:
        if not isinstance(turn, int) or turn < 1:
            return None
        rounds = self.record.rounds
        while len(rounds) < turn:
            rounds.append(ModelRound(turn=len(rounds) + 1, before=rounds[-1] if rounds else None))
        return rounds[turn - 1]

    def _request(self, event: Event) -> None:
        current = self._round(event.get("turn"))
        if current is not None:
            current.request, current.response = event, None
            current.attempts += 1
            current.stream, current.streamed_calls = [], {}
            current.shown_at, current.closed_at = {}, []
            current.may_end, current.ended = [], False
            current.closer = None

    def _stream_handler(self) -> Callable[[Event], None]:
        """What indexes a ``model_stream`` event: into its round's stream, and, when it closes
        a function_call item, that call (from then on the call's events are its)."""
        rounds, round_of, streamed_call = self.record.rounds, self._round, self._streamed_call

        def index(event: Event) -> None:
            turn = event.get("turn")
            # most stream events are of the round before them: found without ``_round``
            current = rounds[-1] if rounds else None
            if current is None or current.turn != turn or type(turn) is not int:
                current = round_of(turn)
                if current is None:
                    return
            stream = current.stream
            stream.append(event)
            if current.closer is not None or event.get("dialect", DEFAULT_DIALECT) != _RESPONSES:
                for index, item in self._closed_by(current, current.shown(len(stream) - 1)):
                    streamed_call(current, index, item, event)
                return
            data = event.get("data")
            if current.ended or type(data) is not str:
                return  # after the end the assembler closes nothing; nor from data that is no text
            # most stream events are deltas: neither parsed nor made the assembler's event here
            # (but one that may spell the two strings otherwise is, ``_ASCII_ESCAPE``, or whose
            # data may have no type of its own: the assembler takes the event field's then)
            name = event.get("event")
            if ((OUTPUT_ITEM_DONE in data and FUNCTION_CALL in data) or _ASCII_ESCAPE in data
                    or name == OUTPUT_ITEM_DONE):
                position = len(stream) - 1  # a new one: not in ``shown_at`` yet (``ModelRound.shown``)
                shown = current.shown_at[position] = stream_event(event)
                closed = _closed_call(shown)
                if closed is None:
                    current.ended = ends_stream(shown)
                    return
                if _has_ended(current):  # the live reader says it came after the end, and runs nothing
                    return
                if not _whole_call(*closed):  # the assembler completes it from the events before
                    self._assembled_from_here(current, event)
                    return
                current.closed_at.append(position)
                streamed_call(current, *closed, event)
            # an event that may end the stream (``_COMPLETED``...; inline: it runs for every event)
            # is read only if an item closes after it (``_has_ended``): in most streams none does
            elif (_COMPLETED in data or _INCOMPLETE in data or _FAILED in data or name in _ENDINGS
                  or ('"error"' in data and _ERROR_TYPE.search(data) is not None)):
                current.may_end.append(len(stream) - 1)

        return index

    def _assembled_from_here(self, current: ModelRound, event: Event) -> None:
        """The round's stream read by the assembler from now on, as another dialect's is: fed
        every event so far (the calls they closed are indexed already), the last one's calls."""
        for position in range(len(current.stream) - 1):
            self._closed_by(current, current.shown(position))
        for index, item in self._closed_by(current, current.shown(len(current.stream) - 1)):
            self._streamed_call(current, index, item, event)

    def _closed_by(self, current: ModelRound, event: StreamEvent) -> list[tuple[int, dict[str, Any]]]:
        """The calls a stream event closes, by its reader's assembler: another dialect's, or a
        Responses one's from the event whose item the assembler completes (``_whole_call``)."""
        if current.closer is None:
            reader = known_reader(dialect_of(current.stream[-1]))
            if reader is None:
                return []
            current.closer = reader.assembler()
        updates = current.closer.feed(event)
        return [(u.output_index, u.item) for u in updates
                if isinstance(u, ItemDone) and u.item.get("type") == FUNCTION_CALL]

    def _streamed_call(self, current: ModelRound, index: int, item: dict[str, Any], event: Event) -> None:
        call_id = item.get("call_id")
        if isinstance(call_id, str) and call_id not in current.streamed_calls:
            call = _traced(call_id, current.turn, index, item, event["seq"], event["seq"])
            current.streamed_calls[call_id] = call
            current.calls.append(call)
            self.record.calls.append(call)
            self.latest[call_id] = call

    def _response(self, event: Event) -> None:
        current = self._round(event.get("turn"))
        if current is None:
            return
        current.response = event
        for index, item in enumerate(current.output()):
            if isinstance(item, dict) and item.get("type") == FUNCTION_CALL:
                streamed = current.streamed_calls.pop(item.get("call_id"), None)  # type: ignore[arg-type]
                if streamed is not None:  # the call indexed from its stream event: confirmed
                    _confirm(streamed, index, item, event["seq"])
                    self._responded.add((event["seq"], streamed.call_id))
                else:
                    self._new_call(current, index, item, event)
        answer = current.answer
        if answer is not None and answer.get("status") == "completed" and not event.get("cut"):
            for dropped in current.streamed_calls.values():  # closed in the stream, not in the response
                dropped.dropped = True
            current.streamed_calls = {}

    def _new_call(self, current: ModelRound, index: int, item: dict[str, Any], event: Event) -> None:
        call_id = item.get("call_id")
        if not isinstance(call_id, str):
            return  # a function_call without a call_id: the model_response check reports it
        call = _traced(call_id, current.turn, index, item, event["seq"])
        first = self.latest.get(call_id)
        if (call.response_seq, call_id) in self._responded and first is not None:
            call.duplicate_of = first
            first.duplicates.append(call)
            self.record.duplicates.append(call)
            return
        self._responded.add((call.response_seq, call_id))
        current.calls.append(call)
        self.record.calls.append(call)
        self.latest[call_id] = call

    def _mcp_handler(self, call_list: str, *, by_method: bool = False) -> Callable[[Event], None]:
        """What indexes an MCP message event of one kind: into ``mcp``, and into the list
        ``call_list`` of the call its call_id names; ``by_method`` (tools/call requests and
        answers): only a tools/call or resources/read, a ``tasks/`` method into
        ``task_messages``, any other into ``mcp_other``."""
        mcp, latest, orphans = self.record.mcp, self.latest, self.record.orphans
        of_call = attrgetter(call_list)

        def index(event: Event) -> None:
            mcp.append(event)
            call_id = event.get("call_id")
            if not isinstance(call_id, str):
                return
            call = latest.get(call_id)
            if call is None:
                orphans.append(event)
            elif not by_method:
                of_call(call).append(event)
            elif (method := event.get("method")) in CALL_METHODS:
                of_call(call).append(event)
                # a retried tools/call: its input round moved now, while its events are in the cache
                if len(call.mcp_requests) > 1 and (moved := self._split) is not None:
                    _split_input_rounds(call, moved)
            elif str(method).startswith("tasks/"):
                call.task_messages.append(event)
            else:
                call.mcp_other.append(event)

        return index


def _confirm(streamed: CallTrace, index: int, item: dict[str, Any], seq: int) -> None:
    """The response's item for a call indexed from its stream item: the same call (its
    item becomes the response's), or another one under its call_id (kept apart)."""
    said = (item.get("name"), item.get("arguments"))
    if said != (streamed.item.get("name"), streamed.item.get("arguments")):
        streamed.final_item = item
    else:
        streamed.item = item
    streamed.index, streamed.response_seq = index, seq


def stream_event(event: Event) -> StreamEvent:
    """A ``model_stream`` record as the assembler's event."""
    index, name, data = event.get("index"), event.get("event"), event.get("data")
    return StreamEvent(index=index if isinstance(index, int) else -1,
                       event=name if isinstance(name, str) else None,
                       data=data if isinstance(data, str) else "")


def _closed_call(shown: StreamEvent) -> tuple[int, dict[str, Any]] | None:
    """(output_index, item) when a stream event (as the assembler's) closes a function_call item."""
    payload = shown.payload  # parsed once, for the stream checks too
    if payload is None:  # no object, or one nested too deep: the assembler reports it, and closes nothing
        return None
    if shown.type != OUTPUT_ITEM_DONE:  # the assembler's: the data's type, else the event field's
        return None
    item = payload.get("item")
    if not isinstance(item, dict) or item.get("type") != FUNCTION_CALL:
        return None
    index = payload.get("output_index")
    return (index if isinstance(index, int) else -1), item


def ends_stream(shown: StreamEvent) -> bool:
    """Whether the assembler reads a stream event as one that ends the stream (it reads
    nothing after it: later events are faults it reports, closing no item, adding no text)."""
    return shown.payload is not None and shown.type in _ENDINGS


def _has_ended(current: ModelRound) -> bool:
    """Whether the round's stream so far holds an event that ends it (each one that may is read
    once, when an item closes after it)."""
    if not current.ended and current.may_end:
        current.ended = any(ends_stream(current.shown(position)) for position in current.may_end)
        current.may_end = []
    return current.ended


def _whole_call(index: int, item: dict[str, Any]) -> bool:
    """Whether the assembler takes a closed function_call item as it is (``build_item``): it
    fills a name or call_id left out (falsy) from the added item, arguments that are no
    string from the deltas, and finds an item without an ``output_index`` by its id."""
    return (index >= 0 and bool(item.get("name")) and bool(item.get("call_id"))  # -1: no output_index
            and isinstance(item.get("arguments"), str))


def _is_refusal(event: Event) -> bool:
    outcome = event.get("outcome")
    return isinstance(outcome, dict) and outcome.get("status") == REFUSED_DUPLICATE


def index_events(
    events: list[Event], source: Path, *, cut_tail: bool = False, checked: bool = False
) -> RunRecord:
    """Index ``events`` (a transcript's lines, in order) in one pass. ``checked``: check
    each event's envelope in the same pass (``shape.envelope_test``); from the first one
    not as toolrelay writes it, ``check_envelopes`` judges the rest (it raises UsageError,
    or fills in an older transcript's defaults) before they are indexed."""
    record = RunRecord(source=source, events=events, cut_tail=cut_tail)
    record.run_id = next((e.get("run") for e in events if isinstance(e.get("run"), str)), None)
    indexer = _Indexer(record)
    start = _index_checked(events, indexer) if checked else 0
    if start < len(events):
        rest = itertools.islice(events, start, None)
        if checked:
            check_envelopes(rest, source)
            rest = itertools.islice(events, start, None)
        steps = indexer.steps
        for event in rest:
            keep, handle = steps(event["kind"])
            keep(event)
            if handle is not None:
                handle(event)
    indexer.close()
    if indexer.split_after:
        for call in record.calls:
            if len(call.mcp_requests) > 1:
                _split_input_rounds(call)
    return record


def _index_checked(events: list[Event], indexer: _Indexer) -> int:
    """Index events whose envelopes hold, in order; the position of the first one whose
    envelope ``envelope_test`` does not hold for (``len(events)``: none)."""
    steps: dict[str, Callable[[Event], bool]] = {}
    for event in events:  # inline: a large transcript has many events
        kind = event["kind"]
        try:
            step = steps[kind]
        except KeyError:  # the kind's first event
            step = steps[kind] = envelope_step(kind, *indexer.steps(kind))
        if not step(event):  # tested, kept and handled in one call: one for each event
            return next(position for position, each in enumerate(events) if each is event)
    return len(events)


def _split_input_rounds(call: CallTrace, moved: list[tuple[CallTrace, int]] | None = None) -> None:
    """Move the leading tools/call rounds answered ``input_required`` (and retried) out of
    ``mcp_requests``/``mcp_responses`` into ``input_rounds``: the last one is the call's.

    Run as each tools/call event of the call is indexed (``moved``: where each moved one's
    answer stood, kept), it moves what it would move once they all are: the lists only
    grow at their ends, so the first request, and the first answer with its id, stay what
    they are; and it moves nothing more once indexed."""
    requests, responses = call.mcp_requests, call.mcp_responses
    while len(requests) > 1:
        request = requests[0]
        mcp_id = _message_id(request)
        answered_at = 0
        for response in responses:  # its answer: the first with its id
            if _message_id(response) == mcp_id:
                break
            answered_at += 1
        else:
            return
        if not asks_for_input(response):
            return
        del requests[0]
        del responses[answered_at]
        call.input_rounds.append((request, response))
        if moved is not None:
            moved.append((call, answered_at))


def _message_id(event: Event) -> Any:
    """``message_of(event).get("id")``, in one call (every tools/call of a chain asks it)."""
    message = event.get("message")
    return message.get("id") if isinstance(message, dict) else None


def asks_for_input(response: Event) -> bool:
    """Whether a recorded tools/call answer is a 2026-07-28 ``input_required`` result."""
    result = message_of(response).get("result")
    kind = result.get(request_envelope.RESULT_TYPE) if isinstance(result, dict) else None
    return kind == request_envelope.INPUT_REQUIRED


def message_of(event: Event) -> dict[str, Any]:
    """An MCP event's JSON-RPC message ({} when it is not an object)."""
    message = event.get("message")
    return message if isinstance(message, dict) else {}
