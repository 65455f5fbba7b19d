"""One transcript record → one diagram row: who sends to whom, a label, ids, state.

Wire messages become arrows (App ↔ Model for the Responses bodies, App ↔ server for
JSON-RPC); the application's own steps become notes on the App lane, a server's life
events notes on its lane, and the task and the answer arrows between User and App. A
kind this module does not know still becomes a note, so nothing recorded is hidden.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from ..events import (
    MCP_REPLY,
    MCP_REQUEST,
    MCP_RESPONSE,
    MCP_ROLES,
    MCP_SERVER_REQUEST,
    MCP_UNPAIRED,
    CallOutcomeEvent,
    CallParsed,
    CallRouted,
    CatalogReady,
    Event,
    FeedbackEvent,
    McpDropped,
    McpInvalid,
    ModelRequestEvent,
    ModelResponseEvent,
    ModelStreamEvent,
    Notice,
    RunEndEvent,
    RunResumedEvent,
    RunStartEvent,
    ServerExitedEvent,
    ServerReady,
    ServerStarting,
    UserTurnEvent,
)
from ..protocol import json_fast
from ..protocol import responses as wire
from ..protocol.chat import DIALECT as CHAT_DIALECT
from ..protocol.responses import CANCELLED, FAILED, FUNCTION_CALL, FUNCTION_CALL_OUTPUT, INCOMPLETE, MESSAGE
from ..relay.stages.additions import added_summary
from ..relay.stages.deferred import declaration_summary, search_item_text
from ..relay.stages.dialects import UnknownDialect, dialect_of, known_reader
from ..relay.stages.feedback import ERROR_PREFIX
from ..relay.stages.namespaces import function_tools_by_alias
from ..relay.stages.parse import ModelTurn
from ..relay.stages.result import status_words
from ..relay.stages.usage import usage_text
from ..verify.record import CALL_METHODS
from .auth_rows import AUTH_DESCRIBERS
from .chat_chunks import chunk_label, chunk_text
from .compact_json import compact
from .compaction_rows import COMPACTION_DESCRIBERS, starts_from_compaction
from .direct_call_rows import DIRECT_CALL_DESCRIBERS
from .listen_rows import listen_text
from .model import Badge, Row, RowState
from .otel_rows import OTEL_DESCRIBERS
from .policy_rows import POLICY_DESCRIBERS
from .proxy_rows import PROXY_DESCRIBERS
from .search_rows import SEARCH_DESCRIBERS
from .server_asks import asked_text, input_required_text, reply_text, retry_text
from .server_reports import reported_text
from .task_rows import task_text

__all__ = [
    "MESSAGE_KINDS", "clip", "compact", "describe", "outcome_words", "seconds", "server_lane",
    "stream_payload", "stream_text", "whole",
]

MESSAGE_KINDS: Final = MCP_ROLES | {ModelRequestEvent.kind, ModelResponseEvent.kind, ModelStreamEvent.kind}
"""The kinds drawn as arrows: exactly the recorded wire messages (a stream's events too)."""
_LABEL_CHARS: Final = 120
_DETAIL_CHARS: Final = 240

Describer = Callable[[dict[str, Any]], Row]


def server_lane(server: str) -> str:
    return f"server:{server}"


def describe(record: dict[str, Any], origin: float) -> Row:
    """The row drawing ``record``; ``origin`` is the first event's time (rows show offsets)."""
    kind = str(record.get("kind", Event.kind))
    describer = _mcp if kind in MCP_ROLES else _DESCRIBERS.get(kind, _other)
    row = describer(record)
    row.at = max(0.0, (seconds(record.get("time")) or origin) - origin)
    row.label = clip(row.label, _LABEL_CHARS)
    row.detail = clip(row.detail, _DETAIL_CHARS)
    return row


def clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters (the side panel shows the full record)."""
    head = text[: limit * 4]  # enough to fill the line; a tool's output can be megabytes
    # Most texts are printable: no line break, no whitespace but spaces; one line as they are.
    # Any other: its lines that are not blank, joined.
    flat = head.strip() if head.isprintable() else " ⏎ ".join(filter(str.strip, head.strip().splitlines()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _seq(record: dict[str, Any]) -> int:
    """A row's seq (with ``_kind``, what each describer gives ``Row`` first: a helper taking
    the other fields as ``**fields`` cost 0.6 µs a row, 70 ms for a 10,000-call run)."""
    return int(record.get("seq", 0))


def _kind(record: dict[str, Any]) -> str:
    return str(record.get("kind", Event.kind))


def _ids(record: dict[str, Any], *, mcp_id: Any = None, server: str | None = None) -> list[Badge]:
    badges: list[Badge] = []
    if record.get("call_id"):
        badges.append(Badge(kind="call", text=str(record["call_id"])))
    if mcp_id is not None:
        badges.append(Badge(kind="mcp", text=f"id {mcp_id}"))
    if server:
        badges.append(Badge(kind="server", text=f"{server}#{record.get('connection') or '?'}"))
    return badges


# -- model side ---------------------------------------------------------------------------


def _model_request(record: dict[str, Any]) -> Row:
    body = _mapping(record.get("body"))
    tools = f"tools: {len(_items(body.get('tools')))}{added_summary(body.get('input'))}"
    parts = [f"input: {_count(body.get('input'), 'item')}", tools]
    if any(isinstance(t, dict) and t.get("type") == "tool_search" for t in _items(body.get("tools"))):
        parts.append(f"declares {declaration_summary(body.get('tools'))}")  # --tool-search
    if body.get("previous_response_id"):
        parts.append(f"previous_response_id {body['previous_response_id']}")
    if starts_from_compaction(body.get("input")):
        parts.append("starts from a compaction item")
    if body.get("tool_choice") not in (None, "auto"):
        parts.append(f"tool_choice {compact(body['tool_choice'])}")
    badges = [Badge(kind="turn", text=f"turn {record.get('turn', '?')}")]
    if whole(record.get("attempt"), 1) > 1:
        badges.append(Badge(kind="attempt", text=f"attempt {record['attempt']}"))
    path = urlsplit(str(record.get("url") or "")).path or "/responses"
    return Row(seq=_seq(record), kind=_kind(record),
               stage="request", source="app", target="model", label=f"POST {path}",
               detail=" · ".join(parts), badges=badges, message=True)


def _model_response(record: dict[str, Any]) -> Row:
    status = whole(record.get("status"), 0)
    body = record.get("body")
    state: RowState = "ok" if 200 <= status < 300 else "failed"
    label = f"HTTP {status}"
    read = _read_answer(record)
    badges = []
    if isinstance(read, ModelTurn):
        label += f" · {read.status}"
        state = _response_state(state, read.status)
        badges = [Badge(kind="resp", text=read.response_id)] if read.response_id else []
        tokens = usage_text(read.usage)
        badges += [Badge(kind="tokens", text=tokens)] if tokens else []  # this turn's, as reported
    elif isinstance(read, UnknownDialect):
        state = "failed"
    if whole(record.get("attempt"), 1) > 1:
        badges.append(Badge(kind="attempt", text=f"attempt {record['attempt']}"))
    return Row(seq=_seq(record), kind=_kind(record),
               stage="response", source="model", target="app", label=label,
               detail=_response_detail(body, read), badges=badges, elapsed=seconds(record.get("elapsed")),
               state=state, message=True)


def _read_answer(record: dict[str, Any]) -> ModelTurn | UnknownDialect | None:
    """The answer as its dialect's reader reads it (``relay.stages.dialects``); None when the body
    is no answer of it (an error body, text)."""
    body = record.get("body")
    dialect = dialect_of(record)
    reader = known_reader(dialect)
    if reader is None:
        return UnknownDialect(dialect)
    try:
        return reader.turn(body) if isinstance(body, dict) else None
    except ValueError:
        return None


def _model_stream(record: dict[str, Any]) -> Row:
    """One server-sent event: Model → App, named by its type, with what it carries."""
    payload = stream_payload(record)
    streamed = stream_text(payload)
    if dialect_of(record) == CHAT_DIALECT:
        said = chunk_label(record.get("data"), payload)
        return Row(seq=_seq(record), kind=_kind(record),
                   stage="stream", source="model", target="app", label=said.label,
                   detail=said.detail,
                   badges=[Badge(kind="event", text=f"event {record.get('index', '?')}")],
                   state="failed" if said.failed else "ok", message=True, streamed=streamed)
    kind = str(payload.get("type") or record.get("event") or "event")
    item = payload.get("item") if isinstance(payload.get("item"), dict) else None
    if isinstance(payload.get("delta"), str):
        detail = _quote(payload["delta"])
    elif item is not None and kind in (wire.OUTPUT_ITEM_ADDED, wire.OUTPUT_ITEM_DONE):
        name, space = item.get("name"), item.get("namespace")
        named = f"{space}.{name}" if isinstance(space, str) else name
        named = named or item.get("call_id") or item.get("id") or ""
        detail = f"{item.get('type')} {named}".strip()
    else:
        detail = str(payload.get("message") or "")
    failed = kind in (wire.RESPONSE_FAILED, wire.STREAM_ERROR)
    state: RowState = "failed" if failed else "warn" if kind == wire.RESPONSE_INCOMPLETE else "ok"
    return Row(seq=_seq(record), kind=_kind(record),
               stage="stream", source="model", target="app", label=kind.removeprefix("response."),
               detail=detail, badges=[Badge(kind="event", text=f"event {record.get('index', '?')}")],
               state=state, message=True, streamed=streamed)


def stream_payload(record: dict[str, Any]) -> dict[str, Any]:
    """A ``model_stream`` record's data, parsed ({} when it is not a JSON object)."""
    try:
        value = json_fast.loads(record["data"]) if isinstance(record.get("data"), str) else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def stream_text(payload: dict[str, Any]) -> str | None:
    """The text a stream event carries (what the model was writing): an ``output_text``
    delta, or a chat chunk's content; None when it carries none."""
    if payload.get("type") == wire.OUTPUT_TEXT_DELTA and isinstance(payload.get("delta"), str):
        return str(payload["delta"])
    return chunk_text(payload)


def _response_state(http_state: RowState, status: Any) -> RowState:
    if http_state == "failed" or status == FAILED:
        return "failed"
    return "warn" if status in (INCOMPLETE, CANCELLED) else "ok"


def _response_detail(body: Any, read: ModelTurn | UnknownDialect | None) -> str:
    """What the model answered: calls by name, or the start of its text, or the error."""
    if isinstance(read, UnknownDialect):
        return f"{read}: not drawn"
    if not isinstance(body, dict):
        return str(body)
    if isinstance(body.get("error"), dict):  # the error object OpenAI-style APIs share
        return str(body["error"].get("message", ""))
    named: list[str] = []
    items: list[Any] = read.output if read is not None else []  # as received: any JSON
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("type") == FUNCTION_CALL:
            named.append(f"function_call {item.get('name')}")
        elif item.get("type") == MESSAGE:
            named.append("message " + _quote(_message_text(item)))
        elif (searched := search_item_text(item)) is not None:
            named.append(searched)
        else:
            named.append(str(item.get("type")))
    return ", ".join(_runs(named)) or "no output items"


def _message_text(item: dict[str, Any]) -> str:
    texts = [str(part.get("text") or part.get("refusal") or "") for part in _items(item.get("content"))
             if isinstance(part, dict)]
    return " ".join(texts)


def _runs(names: list[str]) -> list[str]:
    """``a, a, a, b`` → ``a ×3, b`` (a turn of a hundred calls stays one line)."""
    counted: list[tuple[str, int]] = []
    for name in names:
        if counted and counted[-1][0] == name:
            counted[-1] = (name, counted[-1][1] + 1)
        else:
            counted.append((name, 1))
    return [name if n == 1 else f"{name} ×{n}" for name, n in counted]


# -- MCP side -------------------------------------------------------------------------------


def _mcp(record: dict[str, Any]) -> Row:
    server = str(record.get("server") or "?")
    lane = server_lane(server)
    outgoing = record.get("direction") == "out"
    message = _mapping(record.get("message"))
    label, detail, state = _mcp_text(record, message)
    return Row(
        seq=_seq(record), kind=_kind(record),
        stage=_mcp_stage(record), source="app" if outgoing else lane,
        target=lane if outgoing else "app", label=label, detail=detail,
        badges=_ids(record, mcp_id=record.get("mcp_id"), server=server),
        elapsed=seconds(record.get("elapsed")), state=state, message=True,
        call_id=_text_or_none(record.get("call_id")),
    )


def _mcp_stage(record: dict[str, Any]) -> str:
    method = record.get("method")
    if record.get("kind") == MCP_SERVER_REQUEST:
        return "ask"  # the server asks toolrelay (sampling, elicitation, roots...)
    if record.get("kind") == MCP_REPLY:
        return "reply"
    if method in CALL_METHODS and (method == "tools/call" or record.get("call_id") is not None):
        return "call" if record.get("kind") == MCP_REQUEST else "result"
    if method in ("initialize", "notifications/initialized"):
        return "connect"
    if method == "tools/list":
        return "discover"
    return "mcp"


def _mcp_text(record: dict[str, Any], message: dict[str, Any]) -> tuple[str, str, RowState]:
    kind = record.get("kind")
    method = str(record.get("method") or message.get("method") or "")
    if kind == MCP_UNPAIRED:
        return "unpaired response", "an answer to no pending request: " + compact(message), "failed"
    tasked = task_text(record, message)  # a tool call run as an MCP task: task_rows.py
    if tasked is not None:
        return tasked
    if "error" in message:
        error = _mapping(message["error"])
        refused = kind == MCP_REPLY and error.get("code") == -1  # the user (or policy) said no
        state: RowState = "warn" if refused else "failed"
        return f"error {error.get('code', '?')}", str(error.get("message", "")), state
    if kind == MCP_REPLY:
        return reply_text(_mapping(message.get("result")))
    if kind == MCP_RESPONSE:
        return _mcp_result(method, message.get("result"))
    params = message.get("params")
    if kind == MCP_SERVER_REQUEST:
        return asked_text(method, _mapping(params))
    if method == "tools/call" and isinstance(params, dict):
        retried = retry_text(params.get("name"), params)
        if retried is not None:
            return retried
        return f"tools/call {params.get('name')}", "arguments " + compact(params.get("arguments")), "ok"
    reported = reported_text(method, _mapping(params), record.get("call_id")) or listen_text(method, message)
    if reported is not None:
        return reported
    if method == "resources/read" and isinstance(params, dict):
        return f"resources/read {params.get('uri')}", "", "ok"
    return method or "message", compact(params) if params else "", "ok"


def _mcp_result(method: str, result: Any) -> tuple[str, str, RowState]:
    if not isinstance(result, dict):
        return "result", compact(result), "ok"
    if method in ("tools/call", "tasks/result"):  # a task's result is its tools/call's
        asking = input_required_text(result)
        if asking is not None:
            return asking
        text = _content_text(result.get("content"))
        if result.get("isError") is True:
            return "result · isError", text, "failed"
        return "result", text, "ok"
    if method == "resources/read":
        contents = [item for item in _items(result.get("contents")) if isinstance(item, dict)]
        shown = [str(item["text"]) if isinstance(item.get("text"), str)
                 else f"[blob {item.get('mimeType', '')}]" for item in contents]
        return f"{len(contents)} content(s)", " ".join(shown), "ok"
    if method == "tools/list":
        names = [str(tool.get("name")) for tool in _items(result.get("tools")) if isinstance(tool, dict)]
        return f"{len(names)} tools", ", ".join(names), "ok"
    if method == "initialize":
        info = _mapping(result.get("serverInfo"))
        server = f"{info.get('name', '?')} {info.get('version', '')}".strip()
        return "initialized", f"{server} · MCP {result.get('protocolVersion', '?')}", "ok"
    return "result", compact(result), "ok"


def _content_text(content: Any) -> str:
    parts = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict):
            parts.append(str(part.get("text", "")) if part.get("type") == "text" else f"[{part.get('type')}]")
    return " ".join(parts)


# -- the application's steps -----------------------------------------------------------------


def _call_parsed(record: dict[str, Any]) -> Row:
    text = str(record.get("arguments_text") or "")
    error = record.get("error")
    return Row(
        seq=_seq(record), kind=_kind(record),
        stage="parse", source="app", target="app",
        label=f"parse {record.get('alias')} arguments" + (" · invalid" if error else ""),
        detail=f"{error} — text {text}" if error else text, badges=_ids(record),
        state="failed" if error else "ok", call_id=_text_or_none(record.get("call_id")),
    )


def _call_routed(record: dict[str, Any]) -> Row:
    digest = record.get("digest")
    return Row(
        seq=_seq(record), kind=_kind(record),
        stage="route", source="app", target="app",
        label=f"route {record.get('alias')} → {record.get('server')} / {record.get('tool')}",
        detail=f"declared with definition {digest}" if isinstance(digest, str) else "",
        badges=_ids(record), call_id=_text_or_none(record.get("call_id")),
    )


def _call_outcome(record: dict[str, Any]) -> Row:
    outcome = _mapping(record.get("outcome"))
    status = str(outcome.get("status", "?"))
    return Row(
        seq=_seq(record), kind=_kind(record),
        stage="outcome", source="app", target="app", label=f"outcome {outcome_words(outcome)}",
        detail=str(outcome.get("message") or ""),
        badges=_ids(record, mcp_id=outcome.get("mcp_id")), elapsed=seconds(outcome.get("elapsed")),
        state=_outcome_state(status), call_id=_text_or_none(record.get("call_id")),
    )


def outcome_words(outcome: Mapping[str, Any]) -> str:
    """The outcome's status as recorded (``tool_error``), except a refusal that names what
    refused: ``refused by policy``, not the status name ``refused_by_hook``."""
    status, refused_by = str(outcome.get("status", "?")), outcome.get("refused_by")
    return status_words(status, refused_by) if isinstance(refused_by, str) else status


def _outcome_state(status: str) -> RowState:
    """A cancelled call was stopped with its run, not failed by its server: amber."""
    return "ok" if status == "ok" else "warn" if status == "cancelled" else "failed"


def _feedback(record: dict[str, Any]) -> Row:
    output = _mapping(record.get("item")).get("output")
    text = output if isinstance(output, str) else f"[{_count(output, 'part')}]"
    return Row(
        seq=_seq(record), kind=_kind(record),
        stage="feedback", source="app", target="app", label=FUNCTION_CALL_OUTPUT,
        detail=text, badges=_ids(record), state="failed" if text.startswith(ERROR_PREFIX) else "ok",
        call_id=_text_or_none(record.get("call_id")),
    )


def _declarations(record: dict[str, Any]) -> Row:
    tools = list(function_tools_by_alias(record.get("tools")))  # a namespaced one as namespace.name
    withheld = [f"{entry.get('alias')} ({entry.get('reason')})" for entry in _items(record.get("withheld"))
                if isinstance(entry, dict)]
    said = f"; withheld: {', '.join(withheld)}" if withheld else ""
    return Row(seq=_seq(record), kind=_kind(record), stage="declare", source="app", target="app",
               label=f"declare {len(tools)} tools ({record.get('reason', 'initial')})",
               detail=", ".join(tools) + said)


def _run_start(record: dict[str, Any]) -> Row:
    return Row(seq=_seq(record), kind=_kind(record),
               stage="task", source="user", target="app", label=str(record.get("task") or ""),
               detail=f"model {record.get('model')} · context {record.get('context_mode')}"
                      + _settings_of(record))


def _settings_of(record: dict[str, Any]) -> str:
    """The request settings a run declared (``--request-settings``, the sampling options)."""
    settings = record.get("settings")
    if not isinstance(settings, dict) or not settings:
        return ""
    return " · request settings " + json.dumps(settings, ensure_ascii=False, separators=(",", ":"))


def _run_resumed(record: dict[str, Any]) -> Row:
    return Row(seq=_seq(record), kind=_kind(record), stage="task", source="user", target="app",
               label=f"resumed at turn {record.get('turn')} (the run had been stopped)",
               detail=str(record.get("note") or ""))


def _user_turn(record: dict[str, Any]) -> Row:
    """A conversation's next message: a task row, the user → toolrelay."""
    return Row(seq=_seq(record), kind=_kind(record),
               stage="task", source="user", target="app", label=str(record.get("task") or ""),
               detail=f"user turn {record.get('number')} of the conversation, at turn {record.get('turn')}")


def _run_end(record: dict[str, Any]) -> Row:
    status = str(record.get("status") or "?")
    final = record.get("final_text")
    return Row(seq=_seq(record), kind=_kind(record), stage="answer", source="app", target="user",
               label=str(final) if final else f"run {status}",
               detail=f"{status}: {record.get('reason', '')}",
               state="ok" if status == "completed" else "failed")


# -- servers and notices ----------------------------------------------------------------------


def _server_note(record: dict[str, Any], label: str, detail: str, state: RowState = "ok") -> Row:
    lane = server_lane(str(record.get("server") or "?"))
    return Row(seq=_seq(record), kind=_kind(record),
               stage="server", source=lane, target=lane, label=label, detail=detail,
               badges=_ids(record, server=str(record.get("server") or "?")), state=state)


def _server_starting(record: dict[str, Any]) -> Row:
    return _server_note(record, f"start ({record.get('transport')})", str(record.get("target") or ""))


def _server_ready(record: dict[str, Any]) -> Row:
    info = _mapping(record.get("server_info"))
    return _server_note(record, f"ready · {info.get('name', '?')} {info.get('version', '')}",
                        f"MCP {record.get('protocol_version')}")


def _server_exited(record: dict[str, Any]) -> Row:
    expected = record.get("expected") is True
    label = "closed" if expected else f"exited unexpectedly (code {record.get('returncode')})"
    return _server_note(record, label, str(record.get("stderr_tail") or ""), "ok" if expected else "failed")


def _mcp_invalid(record: dict[str, Any]) -> Row:
    return _server_note(record, f"invalid line: {record.get('reason')}", str(record.get("preview") or ""),
                        "failed")


def _mcp_dropped(record: dict[str, Any]) -> Row:
    """A flood: how many unasked messages were left out of the record, and of what kind."""
    detail = ", ".join(f"{name} × {count}" for name, count in _mapping(record.get("methods")).items())
    label = (f"{record.get('count')} unasked messages not recorded (over {record.get('limit')} "
             f"per {record.get('window')} s)")
    return _server_note(record, label, detail, "warn")


def _notice(record: dict[str, Any]) -> Row:
    lane = server_lane(str(record["server"])) if record.get("server") else "app"
    level = str(record.get("level") or "info")
    state: RowState = "failed" if level == "error" else "warn" if level == "warning" else "ok"
    return Row(seq=_seq(record), kind=_kind(record),
               stage="notice", source=lane, target=lane, label=f"{level}: {record.get('text', '')}",
               state=state)


def _other(record: dict[str, Any]) -> Row:
    fields = {k: v for k, v in record.items() if k not in ("seq", "time", "run", "kind")}
    return Row(seq=_seq(record), kind=_kind(record),
               stage="event", source="app", target="app", label=str(record.get("kind")),
               detail=compact(fields))


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _count(value: Any, noun: str) -> str:
    n = len(value) if isinstance(value, list) else 0 if value is None else 1
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _quote(text: str) -> str:
    return f"“{clip(text, 80)}”"


def seconds(value: Any) -> float | None:
    """A time or duration field, or None when a (tampered) record holds something else."""
    if type(value) is float:  # nearly always (300,000 a 10,000-call run): a fifth of the tests below
        return value
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def whole(value: Any, default: int) -> int:
    """An integer field, or ``default`` when a (tampered) record holds something else."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


_DESCRIBERS: Final[dict[str, Describer]] = {
    **SEARCH_DESCRIBERS,
    **COMPACTION_DESCRIBERS,
    ModelRequestEvent.kind: _model_request,
    ModelResponseEvent.kind: _model_response,
    ModelStreamEvent.kind: _model_stream,
    CallParsed.kind: _call_parsed,
    CallRouted.kind: _call_routed,
    CallOutcomeEvent.kind: _call_outcome,
    FeedbackEvent.kind: _feedback,
    CatalogReady.kind: _declarations,
    RunStartEvent.kind: _run_start,
    RunResumedEvent.kind: _run_resumed,
    UserTurnEvent.kind: _user_turn,
    RunEndEvent.kind: _run_end,
    ServerStarting.kind: _server_starting,
    ServerReady.kind: _server_ready,
    ServerExitedEvent.kind: _server_exited,
    McpInvalid.kind: _mcp_invalid,
    McpDropped.kind: _mcp_dropped,
    Notice.kind: _notice,
    **AUTH_DESCRIBERS,
    **OTEL_DESCRIBERS,
    **PROXY_DESCRIBERS,
    **POLICY_DESCRIBERS,
    **DIRECT_CALL_DESCRIBERS,
}
"""Event kind → its row (MCP messages, recorded under their role, go to ``_mcp``)."""
