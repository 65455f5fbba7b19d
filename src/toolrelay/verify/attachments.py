"""The seed's attachments as projections of a run record, and back.

Each attachment file is a view of recorded events: ``request_N.json`` / ``response_N.json``
are the bodies of turn N's model request and response, ``mcp_request.json`` /
``mcp_response.json`` the exact JSON-RPC messages of the first executed call
(``mcp_request_2.json``... for later calls, in the model's call order). The two bundles
(``responses_roundtrip.json``, ``field_fragments.json``) are built here too, so ``demo``
writes and ``verify`` re-derives them with the same functions. ``place`` puts a file's
content back into the record, which is how verify checks the files themselves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from ..events import MCP_RESPONSE
from .record import CallTrace, RunRecord

__all__ = [
    "FIELD_FRAGMENTS",
    "ROUNDTRIP",
    "STREAMED",
    "TRANSCRIPT",
    "Slot",
    "bundles",
    "called_declarations",
    "executed",
    "field_fragments",
    "is_attachment",
    "mcp_tool",
    "no_call_text",
    "place",
    "roundtrip",
    "slots",
]

TRANSCRIPT: Final = "transcript.jsonl"
STREAMED: Final = "streamed"
"""A demo folder's subfolder: the walk-through run again, streamed (transcript and stream files)."""
ROUNDTRIP: Final = "responses_roundtrip.json"
FIELD_FRAGMENTS: Final = "field_fragments.json"
_NAME: Final = re.compile(r"^(request|response|mcp_request|mcp_response)(?:_(\d+))?\.json$")


@dataclass(slots=True, frozen=True)
class Slot:
    """Where one attachment file lives in the record: an event and its field."""

    name: str
    event: dict[str, Any]
    field: str
    """``body`` (model side) or ``message`` (MCP side)."""

    @property
    def value(self) -> Any:
        return self.event.get(self.field)


def executed(run: RunRecord) -> list[CallTrace]:
    """The calls that reached a server (a tools/call was recorded), in the model's order."""
    return [call for call in run.calls if call.mcp_requests]


def no_call_text(run: RunRecord) -> str:
    """Why no call of the run reached a server, saying only what the records show: a
    transcript cut before run_end cannot tell what the model would have asked for."""
    if run.calls:
        return f"no tool call reached a server ({len(run.calls)} asked for, none sent)"
    if run.run_end is not None:
        return "the model made no tool call"
    last = run.rounds[-1] if run.rounds else None
    if last is None or last.request is None:
        return "no tool call is recorded: the transcript ends before the first model request"
    if last.response is None:
        streamed = f" ({len(last.stream)} of its stream events are)" if last.stream else ""
        return (f"no tool call is recorded: the transcript ends before turn {last.turn}'s "
                f"response was recorded{streamed}")
    return f"no tool call is recorded: the transcript ends after turn {last.turn}'s response"


def slots(run: RunRecord) -> list[Slot]:
    """Every attachment file the run has, with the event it projects, in the run's order."""
    found: list[Slot] = []
    for current in run.rounds:
        if current.request is not None:
            found.append(Slot(f"request_{current.turn}.json", current.request, "body"))
        if current.response is not None:
            found.append(Slot(f"response_{current.turn}.json", current.response, "body"))
    for number, call in enumerate(executed(run), 1):
        suffix = "" if number == 1 else f"_{number}"
        found.append(Slot(f"mcp_request{suffix}.json", call.mcp_requests[0], "message"))
        if call.mcp_responses:
            found.append(Slot(f"mcp_response{suffix}.json", call.mcp_responses[0], "message"))
    return sorted(found, key=lambda slot: slot.event["seq"])


def is_attachment(name: str) -> bool:
    return _NAME.match(name) is not None


def place(slot: Slot, value: Any) -> None:
    """Put a file's content into the record in place of the event's field."""
    slot.event[slot.field] = value


# -- the bundles ----------------------------------------------------------------------------


def called_declarations(run: RunRecord) -> list[dict[str, Any]]:
    """For each tool the model called: its MCP declaration and the Responses one, side by side."""
    first = run.rounds[0].body if run.rounds else {}
    declared = first.get("tools")
    tools = {
        t["name"]: t
        for t in (declared if isinstance(declared, list) else [])
        if isinstance(t, dict) and isinstance(t.get("name"), str)
    }
    found: list[dict[str, Any]] = []
    seen: set[Any] = set()
    for call in run.calls:
        routed = call.first("routed")
        if routed is None or not isinstance(call.alias, str) or call.alias in seen:
            continue
        seen.add(call.alias)
        found.append(
            {
                "alias": call.alias,
                "server": routed.get("server"),
                "tool": routed.get("tool"),
                "mcp_tool": mcp_tool(run, routed.get("server"), routed.get("tool")),
                "function_tool": tools.get(call.alias),
            }
        )
    return found


def mcp_tool(run: RunRecord, server: Any, name: Any) -> dict[str, Any] | None:
    """The Tool object ``server`` listed as ``name`` (its latest tools/list answer)."""
    found: dict[str, Any] | None = None
    for event in run.mcp:
        if event["kind"] != MCP_RESPONSE or event.get("method") != "tools/list":
            continue
        if event.get("server") != server:
            continue
        result = event.get("message", {}).get("result")
        tools = result.get("tools") if isinstance(result, dict) else None
        for tool in tools if isinstance(tools, list) else []:
            if isinstance(tool, dict) and tool.get("name") == name:
                found = tool
    return found


def _link(call: CallTrace) -> dict[str, Any]:
    request = call.first("mcp_requests") or {}
    routed = call.first("routed") or {}
    return {
        "call_id": call.call_id,
        "turn": call.turn,
        "alias": call.alias,
        "server": routed.get("server"),
        "tool": routed.get("tool"),
        "connection": request.get("connection"),
        "mcp_id": request.get("mcp_id"),
        "status": call.status,
    }


def roundtrip(run: RunRecord) -> dict[str, Any]:
    """``responses_roundtrip.json``: declarations, every round, the MCP pairs, the id links."""
    pairs = [
        {
            "server": call.mcp_requests[0].get("server"),
            "connection": call.mcp_requests[0].get("connection"),
            "request": call.mcp_requests[0].get("message"),
            "response": call.mcp_responses[0].get("message") if call.mcp_responses else None,
        }
        for call in executed(run)
    ]
    return {
        "about": "one real toolrelay run: the exact model requests and responses, the MCP "
        "messages of every executed call, and the links between call_id and MCP id",
        "run_id": run.run_id,
        "context_mode": run.context_mode,
        "strict": run.strict,
        "declarations": called_declarations(run),
        "rounds": [
            {"turn": r.turn, "request": r.body, "response": r.response.get("body") if r.response else None}
            for r in run.rounds
        ],
        "mcp": pairs,
        "links": [_link(call) for call in run.calls],
    }


def field_fragments(run: RunRecord) -> dict[str, Any]:
    """``field_fragments.json``: the seed's fragments of the first executed call, side by side."""
    calls = executed(run)
    call = calls[0] if calls else (run.calls[0] if run.calls else None)
    if call is None:
        return {"about": no_call_text(run), "run_id": run.run_id}
    routed = call.first("routed") or {}
    feedback = call.first("feedbacks")
    declarations = [d for d in called_declarations(run) if d["alias"] == call.alias]
    return {
        "about": "the read_text_file walk-through's fragments from one real call: a rule, a value, a result",
        "run_id": run.run_id,
        "strict": run.strict,
        "declaration": declarations[0] if declarations else None,
        "call": call.item,
        "route": {"alias": call.alias, "server": routed.get("server"), "tool": routed.get("tool")},
        "mcp_request": call.mcp_requests[0].get("message") if call.mcp_requests else None,
        "mcp_response": call.mcp_responses[0].get("message") if call.mcp_responses else None,
        "feedback": feedback.get("item") if feedback else None,
    }


def bundles(run: RunRecord) -> dict[str, dict[str, Any]]:
    return {ROUNDTRIP: roundtrip(run), FIELD_FRAGMENTS: field_fragments(run)}
