"""The official SDK's low-level ``Server`` with a tool and resources but no resource
templates: only ``resources/list`` and ``resources/read`` have handlers, so
``resources/templates/list`` is answered -32601 (Method not found), as the SDK's
simple-pagination example does.

Run:  python sdk_plain_resources_server.py      (stdio)

Tool: link() answers with a resource_link to ``note://plain``. Resource: ``note://plain``
(text); any other URI is refused (-32602).
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

NOTE = "note://plain"


async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
    note = types.Resource(uri=NOTE, name="plain", mime_type="text/plain")
    return types.ListResourcesResult(resources=[note])


async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    if str(params.uri) != NOTE:
        raise MCPError(code=-32602, message=f"no such resource: {params.uri}")
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=NOTE, text="A plain note.")])


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    empty = {"type": "object", "properties": {}}
    link = types.Tool(name="link", description="Link to the note.", input_schema=empty)
    return types.ListToolsResult(tools=[link])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.ResourceLink(uri=NOTE, name="plain", mime_type="text/plain")])


server: Server[Any] = Server("sdk-plain-resources", on_list_tools=list_tools, on_call_tool=call_tool,
                             on_list_resources=list_resources, on_read_resource=read_resource)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
