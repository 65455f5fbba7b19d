"""Stage 7, result: how one tool call ended, as a value (never an exception).

Every function_call the model makes ends in exactly one ``CallOutcome``. Its ``status``
keeps the classes apart that peers tend to merge: a tool that ran and failed
(``tool_error``, MCP ``isError``) is not a result that breaks the tool's own
``outputSchema`` (``invalid_output``), which is not a JSON-RPC error (``protocol_error``), which is
not a dead channel (``transport_error``), which is not a call that never left toolrelay
(``invalid_arguments``, ``unknown_tool``, ``not_approved``, ``refused_by_hook`` — a
``CallHook`` said no (``refused_by`` names a policy's), ``duplicate_call_id``, ``cancelled``). The outcome
carries both id domains: the model's ``call_id`` and the MCP request id (``mcp_id``)
with its server and connection number, plus the exact JSON-RPC request and response.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from .parse import FunctionCall

__all__ = [
    "OUTCOME_STATUSES", "CallExchange", "CallOutcome", "CallRoute", "OutcomeStatus", "Verdict",
    "status_words",
]

OutcomeStatus = Literal[
    "ok",
    "tool_error",
    "invalid_output",
    "protocol_error",
    "transport_error",
    "invalid_arguments",
    "unknown_tool",
    "not_approved",
    "refused_by_hook",
    "duplicate_call_id",
    "cancelled",
]
OUTCOME_STATUSES: tuple[OutcomeStatus, ...] = (
    "ok",
    "tool_error",
    "invalid_output",
    "protocol_error",
    "transport_error",
    "invalid_arguments",
    "unknown_tool",
    "not_approved",
    "refused_by_hook",
    "duplicate_call_id",
    "cancelled",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CallRoute:
    """Where the call went: the server, the tool's own name there, and the connection."""

    server: str | None = None
    tool: str | None = None
    """The original MCP tool name on ``server``."""
    connection: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CallExchange:
    """The call on the wire: the MCP request id and the exact messages."""

    mcp_id: int | str | None = None
    request: dict[str, Any] | None = None
    """The exact JSON-RPC request sent."""
    response: dict[str, Any] | None = None
    """The exact JSON-RPC response received."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """How the call ended: its class and what it gave or why it failed."""

    status: OutcomeStatus
    message: str = ""
    """What went wrong, in words a model (and a person) can act on; empty for ``ok``."""
    result: dict[str, Any] | None = None
    """MCP ``CallToolResult`` for ``ok``, ``tool_error`` and ``invalid_output``."""
    error_code: int | None = None
    """JSON-RPC error code for ``protocol_error``."""
    error_data: Any = None
    transport_kind: str | None = None
    """For ``transport_error``: ``exited``, ``timeout``, ``too_large``, ``http`` or ``closed``."""
    refused_by: str | None = None
    """For ``refused_by_hook``: what refused when it named itself (``policy``); None: a hook."""


def status_words(status: str, refused_by: str | None = None) -> str:
    """How a call ended, in words for the user: ``tool error``, ``refused by hook``, and
    ``refused by policy`` for a policy's refusal (the status name stays ``refused_by_hook``
    in the record, which old transcripts keep)."""
    if status == "refused_by_hook" and refused_by:
        return f"refused by {refused_by}"
    return status.replace("_", " ")


_NOWHERE: Final = CallRoute()
_UNSENT: Final = CallExchange()


@dataclass(slots=True, kw_only=True)
class CallOutcome:
    """The end of one tool call, whatever happened to it: the call as the model made it,
    where it was routed, what went over the wire, and the verdict. The flat attributes
    (``call_id``, ``alias``, ``server``, ``tool``, ``mcp_id``, ``status``, ``message``,
    ``result``, ``request``, ``response``...) read those parts."""

    call: FunctionCall
    verdict: Verdict
    route: CallRoute = _NOWHERE
    exchange: CallExchange = _UNSENT
    arguments: dict[str, Any] | None = None
    """The object sent as MCP ``params.arguments`` (after null-stripping in strict mode)."""
    elapsed: float = 0.0
    sampling_refused: int = 0
    """Sampling requests the server sent during the call past its cap, each refused (-1)."""

    # -- the call, the route, the exchange and the verdict, read flat ---------------------

    @property
    def alias(self) -> str:
        """The name the model used."""
        return self.call.alias

    @property
    def call_id(self) -> str | None:
        """The model's id for this call (None for a direct ``toolrelay call``)."""
        return self.call.call_id or None

    @property
    def arguments_text(self) -> str | None:
        """The model's arguments exactly as sent (JSON text)."""
        return self.call.arguments_text

    @property
    def server(self) -> str | None:
        return self.route.server

    @property
    def tool(self) -> str | None:
        """The original MCP tool name on ``server``."""
        return self.route.tool

    @property
    def connection(self) -> int | None:
        return self.route.connection

    @property
    def mcp_id(self) -> int | str | None:
        return self.exchange.mcp_id

    @property
    def request(self) -> dict[str, Any] | None:
        """The exact JSON-RPC request sent."""
        return self.exchange.request

    @property
    def response(self) -> dict[str, Any] | None:
        """The exact JSON-RPC response received."""
        return self.exchange.response

    @property
    def status(self) -> OutcomeStatus:
        return self.verdict.status

    @property
    def message(self) -> str:
        """What went wrong; empty for ``ok``."""
        return self.verdict.message

    @property
    def result(self) -> dict[str, Any] | None:
        """MCP ``CallToolResult`` for ``ok``, ``tool_error`` and ``invalid_output``."""
        return self.verdict.result

    @property
    def error_code(self) -> int | None:
        return self.verdict.error_code

    @property
    def error_data(self) -> Any:
        return self.verdict.error_data

    @property
    def transport_kind(self) -> str | None:
        return self.verdict.transport_kind

    @property
    def refused_by(self) -> str | None:
        """What refused a ``refused_by_hook`` call when it named itself (``policy``)."""
        return self.verdict.refused_by

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def ran(self) -> bool:
        """Whether the tool was executed on its server (successfully or not)."""
        return self.status in ("ok", "tool_error")

    def to_record(self) -> dict[str, Any]:
        """The outcome for transcripts: class, ids and message. The exact messages are
        recorded as their own MCP events, so they are not repeated here."""
        record: dict[str, Any] = {
            "status": self.status,
            "alias": self.alias,
            "call_id": self.call_id,
            "server": self.server,
            "tool": self.tool,
            "mcp_id": self.mcp_id,
            "connection": self.connection,
            "elapsed": round(self.elapsed, 6),
        }
        if self.status != "ok":
            record["message"] = self.message
        if self.error_code is not None:
            record["error_code"] = self.error_code
        if self.error_data is not None:
            record["error_data"] = self.error_data
        if self.transport_kind is not None:
            record["transport_kind"] = self.transport_kind
        if self.sampling_refused:
            record["sampling_refused"] = self.sampling_refused
        if self.refused_by is not None:
            record["refused_by"] = self.refused_by
        return record
