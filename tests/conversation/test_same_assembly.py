"""A conversation is assembled as a run is: from one config and one set of run-level
options (the config's policy, pins, tracing, prices, a hook of the caller's, function
tools, instructions), ``toolrelay.run_async`` and ``Conversation.send`` build relays with
the same settings and hooks, and so do the same thing: the same request to the model, the
same calls refused by the same policy rule, the same cost, the same spans, nothing pinned.

A run-level feature wired into one path only fails here. Real parts: the rug server as a
subprocess, the offline model over loopback, the SDK's in-memory span exporter."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import toolrelay
from testkit.servers import RUG_SERVER
from testkit.transcripts import transcript_events
from toolrelay.relay.loop import Relay
from toolrelay.relay.stages.context import CallContext
from toolrelay.relay.stages.parse import FunctionCall
from toolrelay.verify import load_run, verify

RULES = [
    {"tool": "write_*", "arguments": {"/name": "**/.ssh/**"}, "decision": "deny"},
    {"server": "*", "tool": "*", "decision": "allow"},
]
SSH = {"name": "/home/u/.ssh/id_rsa", "text": "x"}
CALLS = [
    {"name": "rug__write_note", "arguments": SSH},
    {"name": "rug__write_note", "arguments": {"name": "ok", "text": "x"}},
    {"name": "py__shout", "arguments": {"text": "hi"}},
]
PRICES = {"offline": {"input": 2.0, "output": 8.0}}
TASK = "write two notes and shout"


@toolrelay.tool(read_only=True)
def shout(text: str) -> str:
    """Say the text louder."""
    return text.upper()


class Seen:
    """The caller's own hook: the aliases it was asked about, in order."""

    def __init__(self) -> None:
        self.aliases: list[str] = []

    async def before_call(self, call: FunctionCall, context: CallContext) -> str | None:
        self.aliases.append(call.alias)
        return None


@dataclass
class Taken:
    """What one path (a run, or a conversation's first send) did and was built with."""

    result: toolrelay.RunResult
    relay: Relay
    spans: list[str]
    seen: list[str]
    transcript: Path
    pinned: list[Path]


def folder_of(tmp_path: Path) -> Path:
    entry = {"command": sys.executable, "args": [str(RUG_SERVER)]}
    config = {"mcpServers": {"rug": entry}, "toolrelay": {"policy": {"rules": RULES}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "script.json").write_text(json.dumps({"turns": [{"calls": CALLS}, {"message": "done"}]}),
                                          encoding="utf-8")
    return tmp_path


def take(folder: Path, name: str, monkeypatch: pytest.MonkeyPatch,
          go: Callable[[toolrelay.RunOptions], Coroutine[Any, Any, toolrelay.RunResult]]) -> Taken:
    """Run ``go`` on the shared options, with its own transcript, spans and state folder."""
    state = folder / f"state-{name}"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))  # where pins would be written
    built: list[Relay] = []
    plain_run = Relay.run

    async def spied(relay: Relay, *args: Any, **keywords: Any) -> toolrelay.RunResult:
        built.append(relay)  # whichever code built it: every path runs its relay
        return await plain_run(relay, *args, **keywords)

    monkeypatch.setattr(Relay, "run", spied)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    seen = Seen()
    options = toolrelay.RunOptions(
        model="offline", script=folder / "script.json", config=folder / "mcp.json", pins="off",
        tracer_provider=provider, prices=PRICES, hooks=(seen,), tools=[shout], stream=False,
        instructions="Be brief.", transcript=folder / f"{name}.jsonl")
    result = asyncio.run(go(options))
    provider.shutdown()
    (relay,) = built
    spans = sorted(span.name for span in exporter.get_finished_spans())
    return Taken(result, relay, spans, seen.aliases, folder / f"{name}.jsonl", sorted(state.rglob("pins/*")))


async def by_run(options: toolrelay.RunOptions) -> toolrelay.RunResult:
    return await toolrelay.run_async(TASK, options)


async def by_conversation(options: toolrelay.RunOptions) -> toolrelay.RunResult:
    async with toolrelay.Conversation(options) as conversation:
        return await conversation.send(TASK)


def settings_of(relay: Relay) -> dict[str, Any]:
    """The run-level settings a relay was built with, as comparable values."""
    return {
        "request": relay.settings,
        "hooks": [type(hook).__name__ for hook in relay.hooks],
        "limits": relay.limits,
        "strict": relay.strict,
        "prices": relay.prices,
        "pins": {name: connection.config.pins for name, connection in relay.catalog.connections.items()},
        "declare": relay.catalog.declare,
        "structured_output": relay.catalog.structured_output,
    }


def first_request(transcript: Path) -> dict[str, Any]:
    body = next(e["body"] for e in transcript_events(transcript) if e["kind"] == "model_request")
    assert isinstance(body, dict)
    return body


def test_a_conversation_is_assembled_with_every_run_level_setting_a_run_has(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = folder_of(tmp_path)
    run = take(folder, "run", monkeypatch, by_run)
    conversation = take(folder, "conversation", monkeypatch, by_conversation)

    assert settings_of(conversation.relay) == settings_of(run.relay)
    # and each setting is there (not merely missing from both alike)
    settings = settings_of(run.relay)
    assert settings["hooks"] == ["RunTracing", "Seen", "Policy", "CallIds"]
    assert settings["pins"] == {"rug": "off", "py": "off"}
    assert settings["prices"] is not None and "offline" in settings["prices"]
    assert settings["request"].instructions == "Be brief."

    denied = f"denied by policy rule #1 of {folder / 'mcp.json'}"
    for taken in (run, conversation):
        outcome = [(call.alias, call.status) for call in taken.result.calls]
        assert outcome == [("rug__write_note", "refused_by_hook"), ("rug__write_note", "ok"),
                           ("py__shout", "ok")]
        assert taken.result.calls[0].message == denied
        assert taken.seen == ["rug__write_note", "rug__write_note", "py__shout"]
        assert taken.result.cost["total"] > 0
        assert "execute_tool write_note" in taken.spans and "invoke_agent toolrelay" in taken.spans
        assert taken.pinned == []  # pins off: the rug server (by default enforce) pinned nothing
        verdict = verify(load_run(taken.transcript))
        assert verdict.ok, verdict.broken

    assert conversation.result.cost == run.result.cost
    assert conversation.spans == run.spans
    assert first_request(conversation.transcript) == first_request(run.transcript)
