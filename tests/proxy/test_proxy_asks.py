"""What an upstream asks during a call, asked of the host: server-everything's sampling and
elicitation tools behind the proxy, the SDK as a host that declares sampling and
elicitation (its callbacks answer). A 2025 host is asked by a server request of the
proxy's on the call's stream, over stdio and over HTTP, and the upstream gets the host's
answer; the transcript pairs the upstream's request id with the proxy's request to the host,
and verifies. A host that declares neither is answered by the proxy's own settings
(``test_proxy_everything.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as t
import pytest
from mcp.client import Client
from mcp.client.context import ClientRequestContext

from testkit import everything

from .proxy_helpers import events, http_proxy, stdio_proxy, verify

SAMPLED = "a line the host's model wrote"


@pytest.fixture
def ev_config(everything_server: list[str], tmp_path: Path) -> Path:
    config = tmp_path / "ev.json"
    config.write_text(json.dumps(everything.stdio_config(everything_server, [str(tmp_path)])), encoding="utf-8")
    return config


class Asked:
    """The SDK host's callbacks, and what they were asked."""

    def __init__(self) -> None:
        self.sampling: list[t.CreateMessageRequestParams] = []
        self.elicitation: list[t.ElicitRequestParams] = []

    async def sample(self, context: ClientRequestContext,
                     params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        self.sampling.append(params)
        return t.CreateMessageResult(role="assistant", content=t.TextContent(type="text", text=SAMPLED),
                                     model="host-model", stop_reason="endTurn")

    async def elicit(self, context: ClientRequestContext, params: t.ElicitRequestParams) -> t.ElicitResult:
        self.elicitation.append(params)
        return t.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True})


async def _ask_through(server: Any, mode: str, asked: Asked) -> dict[str, str]:
    said: dict[str, str] = {}
    async with Client(server, mode=mode, sampling_callback=asked.sample,
                      elicitation_callback=asked.elicit) as client:
        for tool, arguments in (("trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 5}),
                                ("trigger-elicitation-request", {})):
            with anyio.fail_after(60):
                result = await client.call_tool(f"ev__{tool}", arguments)
            said[tool] = " ".join(b.text for b in result.content if isinstance(b, t.TextContent))
    return said


def _check(said: dict[str, str], asked: Asked, transcript: Path) -> None:
    assert SAMPLED in said["trigger-sampling-request"] and "host-model" in said["trigger-sampling-request"]
    assert "- Name: Ada Lovelace" in said["trigger-elicitation-request"]
    assert "Say hi" in str(asked.sampling[0].messages[0].content)  # the upstream's request, as it asked
    assert asked.elicitation[0].message == "Please provide inputs for the following fields:"
    recorded = events(transcript)
    asks = [e for e in recorded if e["kind"] == "proxy_ask"]
    assert [(a["method"], a["answered_by"], a["outcome"]) for a in asks] == [
        ("sampling/createMessage", "host", "sampled"), ("elicitation/create", "host", "accept")]
    upstream = {e["mcp_id"]: e for e in recorded if e["kind"] == "mcp_server_request"}
    for ask in asks:  # paired: the upstream's own request, and the proxy's to the host
        assert upstream[ask["upstream_id"]]["call_id"] == ask["key"]
        assert ask["host_request_id"] is not None
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "answered by the host" in checked.stdout


def test_a_stdio_host_is_asked_what_the_upstream_asks(ev_config: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "proxy.jsonl"
    asked = Asked()
    proxy = stdio_proxy(ev_config, transcript, "--protocol-version", "2025-11-25")
    _check(anyio.run(_ask_through, proxy, "legacy", asked), asked, transcript)


def test_an_http_host_is_asked_on_the_calls_stream(ev_config: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "proxy.jsonl"
    asked = Asked()
    with http_proxy(ev_config, transcript, "--protocol-version", "2025-11-25") as url:
        said = anyio.run(_ask_through, url, "legacy", asked)
    _check(said, asked, transcript)
