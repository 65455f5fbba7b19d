"""The trace's diagram data: lanes, rows (arrows and notes), call groups and turn groups.

These values are what the page draws; ``to_dict()`` is the JSON the HTML embeds. Every
model request/response and every JSON-RPC message is one *arrow* row (``message`` is
True); the application's own steps (parse, route, outcome, feedback, declare...) and
server life events are *note* rows on one lane. Rows keep the transcript ``seq`` of the
event they draw, so a verify finding (which names seqs) lands on exactly those rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, Field, dataclass, field, fields
from itertools import compress
from operator import attrgetter, ne
from typing import Any, Final, Literal

from .record_texts import page_records

__all__ = [
    "Badge",
    "CallGroup",
    "Group",
    "Lane",
    "LinkNote",
    "Row",
    "RowState",
    "RunSummary",
    "StreamGroup",
    "Trace",
    "VerdictNote",
]

RowState = Literal["ok", "failed", "warn", "expected"]
"""``expected``: a refusal that is part of a healthy run (the fallback ``initialize``
beside the era probe): drawn dimmed, never counted as a failure."""


_NOT_ON_PAGE: Final = {"page": False}
"""A field's metadata: the page's JSON leaves it out (``_page_fields``)."""


@dataclass(slots=True, kw_only=True)
class Lane:
    """One column of the diagram: ``user``, ``app``, ``model`` or ``server:NAME``."""

    key: str
    title: str
    note: str = ""


@dataclass(slots=True, kw_only=True)
class Badge:
    """A small id chip: ``call`` (call_id), ``mcp`` (JSON-RPC id), ``server`` (name#connection)..."""

    kind: str
    text: str


@dataclass(slots=True, kw_only=True)
class LinkNote:
    """A verify finding shown on the rows of the events it names."""

    link: str
    message: str
    ok: bool


@dataclass(slots=True, kw_only=True)
class Row:
    """One event drawn: an arrow between two lanes, or a note on one lane (source == target)."""

    type: str = field(default="row", init=False)
    seq: int
    kind: str
    stage: str
    """The seed's stage shown beside the row: declare, request, parse, route, call, result..."""
    source: str
    target: str
    label: str
    detail: str = ""
    badges: list[Badge] = field(default_factory=list)
    elapsed: float | None = None
    at: float = 0.0
    """Seconds since the transcript's first event."""
    state: RowState = "ok"
    message: bool = False
    """A wire message (model HTTP body or JSON-RPC message): drawn as an arrow."""
    call_id: str | None = None
    links: list[LinkNote] = field(default_factory=list)
    during: str = ""
    """Where the row sits in a streamed model response's span: ``start`` (its request),
    ``inside`` (while it streamed), ``end`` (its response), or "" (outside any)."""
    streamed: str | None = field(default=None, repr=False, compare=False, metadata=_NOT_ON_PAGE)
    """A stream event's text piece (``rows.stream_text``), for its stream group's line; not
    on the page, which has the event's record: kept so the event is parsed once."""


@dataclass(slots=True, kw_only=True)
class CallGroup:
    """Every row of one model call (``call_id``): parse, route, MCP messages, outcome, feedback."""

    type: str = field(default="call", init=False)
    call_id: str
    rows: list[Row] = field(default_factory=list)
    alias: str = ""
    target: str = ""
    """``server / tool`` once routed."""
    mcp_id: int | str | None = None
    connection: str = ""
    """``server#connection`` of the MCP request."""
    status: str = ""
    elapsed: float | None = None
    state: RowState = "ok"
    broken: bool = False
    """A verify finding that failed names one of its rows."""
    expanded: bool = True
    during: str = ""
    """``inside`` when the call started while its model response was still streaming."""


@dataclass(slots=True, kw_only=True)
class StreamGroup:
    """A run of one streamed response's server-sent events with nothing else between them:
    shown as one line (what was written, when) and opened on demand, so a turn of
    hundreds of events stays light."""

    type: str = field(default="stream", init=False)
    key: str
    rows: list[Row] = field(default_factory=list)
    summary: str = ""
    text: str = ""
    """The text the events' deltas carry, clipped: what the model was writing."""
    state: RowState = "ok"
    broken: bool = False
    expanded: bool = False
    during: str = "inside"


@dataclass(slots=True, kw_only=True)
class Group:
    """A collapsible section: the setup (connect, discover, declare), one model turn, the
    one call of a ``toolrelay call`` transcript, or shutdown."""

    key: str
    kind: Literal["setup", "turn", "call", "end"]
    title: str
    turn: int | None = None
    items: list[Row | CallGroup | StreamGroup] = field(default_factory=list)
    summary: str = ""
    state: RowState = "ok"
    broken: bool = False
    expanded: bool = True

    def rows(self) -> list[Row]:
        """All rows, call and stream groups flattened."""
        found: list[Row] = []
        for item in self.items:
            found.extend([item] if isinstance(item, Row) else item.rows)
        return found

    def calls(self) -> list[CallGroup]:
        return [item for item in self.items if isinstance(item, CallGroup)]


@dataclass(slots=True, kw_only=True)
class VerdictNote:
    """verify's result as the page shows it: the first broken link and every failed one."""

    ok: bool
    checked: int
    broken_link: str | None = None
    broken_message: str | None = None
    broken_seqs: list[int] = field(default_factory=list)
    failures: list[LinkNote] = field(default_factory=list)
    finished: bool = True
    unfinished: list[str] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class RunSummary:
    """The run at a glance, for the page header."""

    source: str
    run_id: str = ""
    model: str = ""
    endpoint: str = ""
    task: str = ""
    status: str = ""
    reason: str = ""
    turns: int = 0
    calls: int = 0
    failed_calls: int = 0
    events: int = 0
    messages: int = 0
    """Wire messages drawn as arrows, a stream's events apart."""
    stream_events: int = 0
    duration: float = 0.0
    tokens: str = ""
    """The run's token usage in words (``relay.stages.usage.usage_text`` of run_end's), "" when none."""
    cost: str = ""
    """With ``--prices``: what run_end says the tokens cost (``relay.stages.cost.cost_text``), else ""."""


@dataclass(slots=True, kw_only=True)
class Trace:
    """Everything the page needs; ``records`` maps seq → the exact recorded body as compact
    JSON text (the page indents it, character for character, when it is shown), and
    ``record_keys`` seq → what a record is shared with in the page: the one before it of
    the same key (``record_texts.page_records``)."""

    title: str
    run: RunSummary
    lanes: list[Lane]
    groups: list[Group]
    records: dict[int, str]
    record_keys: dict[int, str] = field(default_factory=dict)
    verdict: VerdictNote | None = None

    def rows(self) -> list[Row]:
        return [row for group in self.groups for row in group.rows()]

    def page_parts(self) -> dict[str, Any]:
        """The JSON the page embeds, its rows, groups and notes still these dataclasses
        (``page_value`` makes each plain): rows leave out the fields they hold at their
        defaults (``defaults``: the page puts them back) and each record is written as what
        changed against the record before it of its key."""
        return {
            "title": self.title,
            "run": self.run,
            "lanes": self.lanes,
            "groups": self.groups,
            "records": page_records(self.records, self.record_keys),
            "verdict": self.verdict,
            "defaults": _PAGE_DEFAULTS,
        }

    def to_dict(self) -> dict[str, Any]:
        """``page_parts`` as plain dicts and lists."""
        plain: dict[str, Any] = {key: _plain(value) for key, value in self.page_parts().items()}
        return plain


def page_value(value: Any, *, badges: Callable[[list[Badge]], Any] | None = None) -> Any:
    """One of these dataclasses as the page's JSON holds it (for an encoder's ``default``:
    its fields may be dataclasses again); anything else as text, as ``json.dumps``'s
    ``default=str`` writes it. Called once a row and group (130,000 times for a
    10,000-call run): the fields are read at once (``attrgetter``), those always written
    first, then those that may be left out, each beside its default. A row's badges
    (200,000) are made here, as ``badges`` writes them (an encoder's own way), or plain:
    one call back from the encoder each cost more than making them."""
    cls = type(value)
    written = _WRITTEN.get(cls)
    if written is None:
        return str(value)
    names, read = written
    page = dict(zip(names, read(value), strict=True))
    optional = _LEFT_OUT.get(cls)
    if optional is not None:  # the pairs whose value is not the default, picked in C (a loop: +30 %)
        names, read, defaults = optional
        field_values = read(value)
        page.update(compress(zip(names, field_values, strict=True), map(ne, field_values, defaults)))
    if cls is Row and value.badges:  # the key is in place: the order stays the fields'
        if badges is not None:
            page["badges"] = badges(value.badges)
        else:
            names, read = _WRITTEN[Badge]
            page["badges"] = [dict(zip(names, read(badge), strict=True)) for badge in value.badges]
    return page


def _plain(value: Any) -> Any:
    """A tree of these dataclasses as JSON-ready dicts and lists (``page_value`` at each
    dataclass). Leaves (strings, numbers, the records' texts) are shared, not copied:
    ``dataclasses.asdict`` deep-copies every one, which for a run of 200,000 events took
    longer than building the trace."""
    if type(value) in _FIELD_NAMES:
        return {name: _plain(field_value) for name, field_value in page_value(value).items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _defaults(cls: type) -> dict[str, Any]:
    """The fields of ``cls`` a page record may leave out: those with a default (``type``,
    which tells the page what a record is, always stays)."""
    found: dict[str, Any] = {}
    for item in _page_fields(cls):
        if item.name == "type":
            continue
        if item.default is not MISSING:
            found[item.name] = item.default
        elif item.default_factory is not MISSING:
            found[item.name] = item.default_factory()
    return found


def _page_fields(cls: type) -> list[Field[Any]]:
    return [item for item in fields(cls) if item.metadata.get("page", True)]


_FIELD_NAMES: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in _page_fields(cls))
    for cls in (Lane, Badge, LinkNote, Row, CallGroup, StreamGroup, Group, VerdictNote, RunSummary)
}
_DEFAULTS: dict[type, dict[str, Any]] = {cls: _defaults(cls) for cls in (Row, CallGroup, StreamGroup)}
_KEPT: Final = object()
"""The "default" of a field that is always written: no value equals it."""
_LEFT_OUT_AT: dict[type, tuple[Any, ...]] = {
    cls: tuple(_DEFAULTS.get(cls, {}).get(name, _KEPT) for name in names)
    for cls, names in _FIELD_NAMES.items()
}
"""By class, each field's value at which the page leaves it out (``_DEFAULTS``), in field order."""
_FIRST_LEFT_OUT: dict[type, int] = {
    cls: next((at for at, default in enumerate(defaults) if default is not _KEPT), len(defaults))
    for cls, defaults in _LEFT_OUT_AT.items()
}
"""By class, where its fields that may be left out begin (a row's: after ``label``)."""
_WRITTEN: dict[type, tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]]] = {
    cls: (names[:_FIRST_LEFT_OUT[cls]], attrgetter(*names[:_FIRST_LEFT_OUT[cls]]))
    for cls, names in _FIELD_NAMES.items()
}
"""By class, the fields before the first that may be left out: always written, by name and read at once."""
_LEFT_OUT: dict[type, tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]], tuple[Any, ...]]] = {
    cls: (names[start:], attrgetter(*names[start:]), _LEFT_OUT_AT[cls][start:])
    for cls, names in _FIELD_NAMES.items() if (start := _FIRST_LEFT_OUT[cls]) < len(names)
}
"""By class, the fields from the first that may be left out on (one always written after it is
compared with ``_KEPT``): names, read at once, and the values they are left out at."""
_PAGE_DEFAULTS: Final = {"row": _DEFAULTS[Row], "call": _DEFAULTS[CallGroup],
                         "stream": _DEFAULTS[StreamGroup]}
"""By a record's ``type``: the values the page gives the fields a record leaves out."""
