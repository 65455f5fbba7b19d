"""The official MCP python SDK (mcp 2.x) as a stdio server that traces itself, as its users
run it: the SDK's own ``OpenTelemetryMiddleware`` (on by default) makes a SERVER span for
each request, parented on the ``traceparent`` in the request's ``params._meta``; this
script only gives the process a tracer provider exporting over OTLP/HTTP to
``OTEL_EXPORTER_OTLP_ENDPOINT`` (each span sent as it ends).

Tools: echo(text), fail(text) (answers ``isError: true``).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource({"service.name": "sdk-server"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)

server = MCPServer("sdk-traced", log_level="WARNING")


@server.tool(description="Return the given text unchanged.", structured_output=False)
def echo(text: str) -> str:
    return text


@server.tool(description="Fail with the given text.", structured_output=False)
def fail(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


if __name__ == "__main__":
    try:
        server.run("stdio")
    finally:
        provider.shutdown()
