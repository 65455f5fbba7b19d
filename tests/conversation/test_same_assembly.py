"""A conversation and a batch task are assembled as a run is: from one config and one set
of run-level options (the config's policy, pins, tracing, prices, a hook of the caller's,
function tools, instructions), ``toolrelay.run_async``, ``Conversation.send`` and
``toolrelay.batch_async`` build relays with the same settings and hooks, and so do the same
thing: the same request to the model, the same calls refused by the same policy rule, the
same cost, the same spans, nothing pinned.

A run-level feature wired into one path only fails here. Real parts: the rug server as a
subprocess, the offline model over loopback, the SDK's in-memory span exporter."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import toolrelay
from testkit.servers import RUG_SERVER
from testkit.transcripts import transcript_events
from toolrelay.batches import BatchOptions
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
Event = dict[str, Any]


@toolrelay.tool(read_only=True)
def shout(text: str) -> str:
    """Say the text louder."""
    return text.upper()


class Seen:
    """The caller's own hook: the aliases it was asked about."""

    def __init__(self) -> None:
        self.aliases: list[str] = []

    async def before_call(self, call: FunctionCall, context: CallContext) -> str | None:
        self.aliases.append(call.alias)
        return None


@dataclass
class Taken:
    """What one path (a run, a conversation's first send, a batch's one task) did and was
    built with."""

    relay: Relay
    spans: list[str]
    seen: list[str]
    events: list[Event]
    transcript: Path
    pinned: list[Path]


Go = Callable[[toolrelay.RunOptions, Path], Coroutine[Any, Any, Path]]
"""Run ``TASK`` with the options, in the folder; the transcript it wrote."""


def folder_of(tmp_path: Path) -> Path:
    entry = {"command": sys.executable, "args": [str(RUG_SERVER)]}
    config = {"mcpServers": {"rug": entry}, "toolrelay": {"policy": {"rules": RULES}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "script.json").write_text(json.dumps({"turns": [{"calls": CALLS}, {"message": "done"}]}),
                                          encoding="utf-8")
    return tmp_path


def take(folder: Path, name: str, monkeypatch: pytest.MonkeyPatch, go: Go) -> Taken:
    """Run ``go`` on the shared options, with its own folder, spans and state folder."""
    own = folder / name
    own.mkdir()
    monkeypatch.setenv("XDG_STATE_HOME", str(own / "state"))  # where pins would be written
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
        instructions="Be brief.", prompt_cache_key="one-family")  # a batch's default is its own
    transcript = asyncio.run(go(options, own))
    provider.shutdown()
    (relay,) = built
    spans = sorted(span.name for span in exporter.get_finished_spans())
    return Taken(relay=relay, spans=spans, seen=seen.aliases, events=transcript_events(transcript),
                 transcript=transcript, pinned=sorted((own / "state").rglob("pins/*")))


async def by_run(options: toolrelay.RunOptions, folder: Path) -> Path:
    await toolrelay.run_async(TASK, replace(options, transcript=folder / "run.jsonl"))
    return folder / "run.jsonl"


async def by_conversation(options: toolrelay.RunOptions, folder: Path) -> Path:
    async with toolrelay.Conversation(options, transcript=folder / "chat.jsonl") as conversation:
        await conversation.send(TASK)
    return folder / "chat.jsonl"


async def by_batch(options: toolrelay.RunOptions, folder: Path) -> Path:
    batch = BatchOptions(out=folder / "out", run=options, concurrency=1)
    (result,) = [result async for result in toolrelay.batch_async([{"id": "t1", "task": TASK}], batch)]
    assert result.status == "completed", result.error
    return folder / "out" / result.transcript


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


def outcomes(events: list[Event]) -> list[tuple[str, str, str]]:
    """Each call's alias, status and (when it failed) message, as recorded, sorted (the calls
    run at once: they end in any order)."""
    return sorted((e["outcome"]["alias"], e["outcome"]["status"], e["outcome"].get("message", ""))
                  for e in events if e["kind"] == "call_outcome")


def first_request(events: list[Event]) -> dict[str, Any]:
    body = next(e["body"] for e in events if e["kind"] == "model_request")
    assert isinstance(body, dict)
    return body


def run_end(events: list[Event]) -> Event:
    (end,) = [e for e in events if e["kind"] == "run_end"]
    return end


def task_spans(spans: list[str]) -> list[str]:
    """The spans of the run itself (a batch adds its own around them)."""
    return [name for name in spans if name.startswith(("chat ", "execute_tool ", "invoke_agent "))]


def test_conversations_and_batch_tasks_are_assembled_with_every_run_level_setting_a_run_has(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = folder_of(tmp_path)
    run = take(folder, "run", monkeypatch, by_run)
    others = {"conversation": take(folder, "conversation", monkeypatch, by_conversation),
              "batch": take(folder, "batch", monkeypatch, by_batch)}

    for name, other in others.items():
        assert settings_of(other.relay) == settings_of(run.relay), name
    # and each setting is there (not merely missing from all alike)
    settings = settings_of(run.relay)
    assert settings["hooks"] == ["RunTracing", "Seen", "Policy", "CallIds"]
    assert settings["pins"] == {"rug": "off", "py": "off"}
    assert settings["prices"] is not None and "offline" in settings["prices"]
    assert settings["request"].instructions == "Be brief."

    denied = f"denied by policy rule #1 of {folder / 'mcp.json'}"
    for taken in (run, *others.values()):
        assert outcomes(taken.events) == [("py__shout", "ok", ""), ("rug__write_note", "ok", ""),
                                          ("rug__write_note", "refused_by_hook", denied)]
        assert sorted(taken.seen) == ["py__shout", "rug__write_note", "rug__write_note"]
        assert run_end(taken.events)["cost"]["total"] > 0
        assert "execute_tool write_note" in taken.spans and "invoke_agent toolrelay" in taken.spans
        assert taken.pinned == []  # pins off: the rug server (by default enforce) pinned nothing
        verdict = verify(load_run(taken.transcript))
        assert verdict.ok, verdict.broken

    for name, other in others.items():
        assert run_end(other.events)["cost"] == run_end(run.events)["cost"], name
        assert task_spans(other.spans) == task_spans(run.spans), name
        assert first_request(other.events) == first_request(run.events), name
