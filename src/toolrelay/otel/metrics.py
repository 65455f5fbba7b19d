"""The metrics of a traced run, by the GenAI and MCP semantic conventions:

- ``gen_ai.client.operation.duration`` (s): each model turn, from its request to the answer
  that counted (retries included), with ``gen_ai.operation.name``, ``gen_ai.provider.name``,
  ``gen_ai.request.model``, ``gen_ai.response.model``, ``server.address``/``server.port``
  and ``error.type`` for a failed one;
- ``gen_ai.client.token.usage`` ({token}): each answer's input and output tokens
  (``gen_ai.token.type`` ``input`` / ``output``), with the same attributes;
- ``mcp.client.operation.duration`` (s): each MCP request toolrelay sent (``tools/call``
  and the others), with ``mcp.method.name``, ``gen_ai.tool.name``, ``mcp.protocol.version``,
  ``network.transport``, ``server.address``/``server.port``, ``error.type`` and
  ``rpc.response.status_code``;
- ``mcp.server.operation.duration`` (s): each ``tools/call`` the file server answered.

The instruments come from a ``MeterProvider`` (the global one unless told another: the CLI
sets it with its tracer provider), made once per provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from opentelemetry import metrics

from .._version import __version__
from . import conventions as c

__all__ = ["DURATION_BUCKETS", "TOKEN_BUCKETS", "RunMetrics", "ServerMetrics", "run_metrics"]

DURATION_BUCKETS: Final = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                           40.96, 81.92)
"""The conventions' advised boundaries for the duration histograms (seconds)."""
TOKEN_BUCKETS: Final = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
                        16777216, 67108864)
"""The conventions' advised boundaries for ``gen_ai.client.token.usage``."""

GEN_AI_DURATION: Final = "gen_ai.client.operation.duration"
GEN_AI_TOKENS: Final = "gen_ai.client.token.usage"
MCP_CLIENT_DURATION: Final = "mcp.client.operation.duration"
MCP_SERVER_DURATION: Final = "mcp.server.operation.duration"
TOKEN_TYPE: Final = "gen_ai.token.type"

_MODEL_KEYS: Final = (c.OPERATION, c.PROVIDER_NAME, c.REQUEST_MODEL, c.RESPONSE_MODEL, c.SERVER_ADDRESS,
                      c.SERVER_PORT, c.ERROR_TYPE)
_MCP_KEYS: Final = (c.MCP_METHOD, c.OPERATION, c.TOOL_NAME, c.MCP_PROTOCOL_VERSION, c.NETWORK_TRANSPORT,
                    c.SERVER_ADDRESS, c.SERVER_PORT, c.ERROR_TYPE, c.RPC_STATUS_CODE)
"""Only these go on a data point: ids (call, request, session) would make every point a series."""


def _picked(attributes: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: attributes[key] for key in keys if attributes.get(key) is not None}


class RunMetrics:
    """The client side's instruments."""

    def __init__(self, provider: Any = None) -> None:
        meter = metrics.get_meter("toolrelay", __version__, meter_provider=provider)
        self._model = meter.create_histogram(
            GEN_AI_DURATION, unit="s", description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS)
        self._tokens = meter.create_histogram(
            GEN_AI_TOKENS, unit="{token}", description="Number of input and output tokens used",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS)
        self._mcp = meter.create_histogram(
            MCP_CLIENT_DURATION, unit="s", description="The duration of the MCP request or notification "
            "as observed on the sender from the time it was sent until the response or ack is received",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS)

    def model_turn(self, seconds: float, attributes: Mapping[str, Any], tokens: Mapping[str, int]) -> None:
        """One model turn: its duration, and its tokens (``input``/``output`` → count)."""
        picked = _picked(attributes, _MODEL_KEYS)
        self._model.record(seconds, picked)
        usage = {key: value for key, value in picked.items() if key != c.ERROR_TYPE}
        for kind, count in tokens.items():
            self._tokens.record(count, {**usage, TOKEN_TYPE: kind})

    def mcp_request(self, seconds: float, attributes: Mapping[str, Any]) -> None:
        self._mcp.record(seconds, _picked(attributes, _MCP_KEYS))


class ServerMetrics:
    """The file server's instrument."""

    def __init__(self, provider: Any = None) -> None:
        meter = metrics.get_meter("toolrelay.files", __version__, meter_provider=provider)
        self._calls = meter.create_histogram(
            MCP_SERVER_DURATION, unit="s", description="MCP request or notification duration as observed "
            "on the receiver from the time it was received until the result or ack is sent",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS)

    def request(self, seconds: float, attributes: Mapping[str, Any]) -> None:
        self._calls.record(seconds, _picked(attributes, _MCP_KEYS))


_MADE: dict[int, tuple[Any, RunMetrics]] = {}


def run_metrics(provider: Any = None) -> RunMetrics:
    """The client instruments of ``provider`` (default: the global meter provider), made once."""
    source = provider if provider is not None else metrics.get_meter_provider()
    made = _MADE.get(id(source))
    if made is None or made[0] is not source:
        made = _MADE[id(source)] = (source, RunMetrics(provider))
    return made[1]
