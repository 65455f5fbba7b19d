"""The attribute names toolrelay's spans carry, by the OpenTelemetry GenAI and MCP
semantic conventions (all "Development" there), and toolrelay's own, prefixed
``toolrelay.``; and the ``error.type`` of a call's outcome.

No opentelemetry import here: ``verify --otel`` reads these names from an OTLP JSON file
without the extra installed.
"""

from __future__ import annotations

from typing import Final

__all__ = ["AGENT_NAME", "error_type", "transport_of"]

AGENT_NAME: Final = "toolrelay"
INVOKE_AGENT: Final = "invoke_agent"
CHAT: Final = "chat"
EXECUTE_TOOL: Final = "execute_tool"
PROVIDER: Final = "openai"
"""``gen_ai.provider.name``: toolrelay speaks the OpenAI Responses API to every endpoint."""

OPERATION: Final = "gen_ai.operation.name"
PROVIDER_NAME: Final = "gen_ai.provider.name"
AGENT: Final = "gen_ai.agent.name"
REQUEST_MODEL: Final = "gen_ai.request.model"
REQUEST_STREAM: Final = "gen_ai.request.stream"
RESPONSE_ID: Final = "gen_ai.response.id"
RESPONSE_MODEL: Final = "gen_ai.response.model"
FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_TYPE: Final = "gen_ai.tool.type"
MCP_METHOD: Final = "mcp.method.name"
MCP_PROTOCOL_VERSION: Final = "mcp.protocol.version"
MCP_SESSION_ID: Final = "mcp.session.id"
JSONRPC_ID: Final = "jsonrpc.request.id"
RPC_STATUS_CODE: Final = "rpc.response.status_code"
NETWORK_TRANSPORT: Final = "network.transport"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"
ERROR_TYPE: Final = "error.type"
HTTP_STATUS: Final = "http.response.status_code"
PROMPT_NAME: Final = "gen_ai.prompt.name"
RESOURCE_URI: Final = "mcp.resource.uri"

RUN_ID: Final = "toolrelay.run.id"
RUN_STATUS: Final = "toolrelay.run.status"
TURN: Final = "toolrelay.turn"
SERVER: Final = "toolrelay.server"
ALIAS: Final = "toolrelay.alias"
EARLY: Final = "toolrelay.early"
"""True for a call started while its response was still streaming (``--early``)."""
OUTCOME: Final = "toolrelay.outcome"
"""The call's outcome class (``ok``, ``tool_error``, ``protocol_error``, ...)."""

TOOL_ERROR: Final = "tool_error"
"""``error.type`` of a tool that ran and failed (``isError: true``), as the MCP conventions say."""


def error_type(status: str, error_code: int | None, transport_kind: str | None) -> str | None:
    """A call outcome's ``error.type``: ``tool_error`` for ``isError``, the JSON-RPC code
    for a protocol error, the transport failure's kind (``exited``, ``timeout``...), else
    the outcome class itself; None for ``ok``."""
    if status == "ok":
        return None
    if status == "protocol_error" and error_code is not None:
        return str(error_code)
    if status == "transport_error" and transport_kind:
        return transport_kind
    return status


def transport_of(transport: str) -> str:
    """``network.transport``: ``pipe`` for a stdio server, ``inproc`` for one in this
    process, ``tcp`` for HTTP."""
    return {"stdio": "pipe", "inprocess": "inproc"}.get(transport, "tcp")
