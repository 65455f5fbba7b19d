"""In-process servers (toolrelay.inprocess_servers): a catalog over the file service with no process,
recorded in the same shape as over stdio."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from toolrelay.assembly.catalogs import connect
from toolrelay.client.config import ServerConfig, builtin_file_server
from toolrelay.errors import UsageError
from toolrelay.events import Event, EventStream, McpMessage
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.relay.stages.parse import FunctionCall


def _run_catalog(config: ServerConfig, root: Path) -> tuple[list[Event], list[str], str]:
    seen: list[Event] = []
    events = EventStream()
    events.subscribe(seen.append)

    async def scenario() -> tuple[list[str], str]:
        # pinned: the in-process server speaks the handshake era only, the file server both
        async with connect([config], events=events, log_dir=root.parent / "logs",
                           protocol_version="2025-11-25") as catalog:
            tools = sorted(route.tool for route in catalog.routes)
            alias = next(route.alias for route in catalog.routes if route.tool == "read_text_file")
            arguments = json.dumps({"path": str(root / "a.txt"), "head": 2})
            outcome = await catalog.call(FunctionCall(call_id="call_1", name=alias, arguments_text=arguments))
            assert outcome.status == "ok", outcome
            return tools, outcome.result["content"][0]["text"]

    tools, text = asyncio.run(asyncio.wait_for(scenario(), 60))
    return seen, tools, text


def _shape(event: Event) -> tuple[Any, ...]:
    """What a transcript reader relies on: the kind, the fields, and for MCP messages the
    role, method and id."""
    record = event.to_record()
    fields = tuple(sorted(record))
    if isinstance(event, McpMessage):
        return (event.role, event.method, event.mcp_id, event.call_id, fields)
    return (record["kind"], fields)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    (folder / "a.txt").write_text("one\ntwo\nthree\n")
    return folder


def test_a_catalog_over_the_in_process_file_server_lists_and_calls(root: Path) -> None:
    events, tools, text = _run_catalog(in_process_file_server(root), root)
    assert "read_text_file" in tools and "list_allowed_directories" in tools
    assert text == "one\ntwo\n"  # what `head -n 2` prints
    starting = next(e for e in events if e.event_kind == "server_starting")
    assert (starting.server, starting.transport) == ("fs", "inprocess")


def test_events_have_the_same_shape_as_over_stdio(root: Path) -> None:
    in_process, *_ = _run_catalog(in_process_file_server(root), root)
    over_stdio, *_ = _run_catalog(builtin_file_server(root), root)
    assert [_shape(e) for e in in_process] == [_shape(e) for e in over_stdio]
    assert [e.message for e in in_process if isinstance(e, McpMessage)] == [
        e.message for e in over_stdio if isinstance(e, McpMessage)]


def test_a_missing_root_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        in_process_file_server(tmp_path / "nowhere")
    assert str(caught.value) == f"ROOT {str(tmp_path / 'nowhere')!r} does not exist"
