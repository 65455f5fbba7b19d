"""The Agents SDK over a catalog of MCP servers, as the catalog benches run it as their peer.

Its own module, importing nothing of toolrelay's: the peer's process (``catalog_startup_bench.py``
measures its start-up) loads only the Agents SDK.
"""

from __future__ import annotations

from typing import Any

__all__ = ["agents_catalog_run"]


async def agents_catalog_run(entries: dict[str, dict[str, Any]], base_url: str, *, task: str, model: str,
                             api_key: str) -> str:
    """One Agents SDK run of ``task`` over the config's stdio servers ``entries``, connected in
    parallel with their tool names prefixed by the server's (as toolrelay's catalog names
    them); its final output."""
    from agents import Agent, Runner, set_default_openai_client, set_tracing_disabled
    from agents.mcp import MCPServerManager, MCPServerStdio
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=base_url, api_key=api_key)
    set_default_openai_client(client, use_for_tracing=False)
    servers = [MCPServerStdio(params={"command": entry["command"], "args": entry["args"]}, name=name,
                              cache_tools_list=True) for name, entry in entries.items()]
    try:
        async with MCPServerManager(servers, connect_in_parallel=True, strict=True) as manager:
            agent = Agent(name="bench", instructions="You are a benchmark agent.", model=model,
                          mcp_servers=manager.active_servers,
                          mcp_config={"include_server_in_tool_names": True})
            return str((await Runner.run(agent, task)).final_output)
    finally:
        await client.close()
