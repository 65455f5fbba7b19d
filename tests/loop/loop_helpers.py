"""Helpers for the relay loop's end-to-end tests: a workspace, the offline model with a
script (a stand-in for the hosted model: a real loopback HTTP server speaking the
Responses wire format), the real file service, and the events of the run.

The file service runs in-process by default (``toolrelay.inprocess_servers``: the same server
session, no process to start); a test where the process matters passes
``servers=[builtin_file_server(workspace)]``."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testkit.dialect import Dialect
from testkit.servers import MEDIA_SERVER, TOOLBOX_SERVER
from toolrelay.client.config import ServerConfig
from toolrelay.events import Event, EventStream
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.relay.loop import RunLimits, RunResult
from toolrelay.runner import RunOptions, run_async

TOOLBOX = TOOLBOX_SERVER
MEDIA = MEDIA_SERVER
NOTES = "".join(f"line {i}\n" for i in range(1, 31))


def named(alias: str, declare: str = "flat") -> dict[str, str]:
    """How a script names the tool ``server__tool``: so, or (``--declare namespaces``) as
    ``tool`` in namespace ``server``."""
    server, _, tool = alias.partition("__")
    return {"namespace": server, "name": tool} if declare == "namespaces" else {"name": alias}


def make_workspace(root: Path) -> Path:
    """A folder like the seed's /workspace: notes.txt (30 lines) and todo.md."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.txt").write_text(NOTES, encoding="utf-8")
    (root / "todo.md").write_text("- write tests\n- ship\n", encoding="utf-8")
    return root


def media_server(name: str = "media") -> ServerConfig:
    """The server whose results hold audio, a large image and a text/plain blob."""
    return ServerConfig(name=name, transport="stdio", command=sys.executable, args=(str(MEDIA),))


def toolbox_server(name: str = "box", *extra: str) -> ServerConfig:
    """The hostile test server (crash, hang, echo, ...) as a stdio server config."""
    return ServerConfig(name=name, transport="stdio", command=sys.executable, args=(str(TOOLBOX), *extra))


@dataclass
class Run:
    """A finished run: its result, the bodies the endpoint received in the loop's (Responses)
    vocabulary (``requests``) and exactly as sent (``wire``), all events, and its dialect."""

    result: RunResult
    requests: list[dict[str, Any]]
    events: list[Event] = field(default_factory=list)
    wire: list[dict[str, Any]] = field(default_factory=list)
    dialect: Dialect = field(default_factory=lambda: Dialect("responses"))

    def kinds(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.event_kind == kind]

    def records(self, kind: str) -> list[dict[str, Any]]:
        return [e.to_record() for e in self.kinds(kind)]

    def outputs(self, request_index: int) -> list[dict[str, Any]]:
        return [i for i in self.requests[request_index]["input"] if i.get("type") == "function_call_output"]

    def answer(self, turn: int) -> list[dict[str, Any]]:
        """The output items of the model's answer ``turn`` (0-based), in either dialect."""
        return self.dialect.output(self.records("model_response")[turn]["body"])


def run_script(
    workspace: Path,
    script: dict[str, Any] | None,
    task: str = "Read the first 20 lines of notes.txt",
    *,
    servers: list[ServerConfig] | None = None,
    dialect: Dialect | None = None,
    **options: Any,
) -> Run:
    """Run ``task`` against the offline model (following ``script``) and the file service;
    with a ``dialect``, over its wire (``--api``), every body checked against its types."""
    dialect = dialect or Dialect(options.pop("api", "responses"))
    events = EventStream()
    seen: list[Event] = []
    events.subscribe(seen.append)
    parsed = parse_script(script) if script is not None else None
    limits = options.pop("limits", RunLimits())
    with OfflineModel(parsed) as model:
        opts = RunOptions(
            model="gpt-4.1",
            base_url=model.base_url,
            api_key=None,
            config=servers if servers is not None else [in_process_file_server(workspace)],
            events=events,
            limits=limits,
            environ={},
            api=dialect.api,
            **options,
        )
        result = asyncio.run(run_async(task, opts))
        wire = list(model.requests)
    for body in wire:
        dialect.check(body)
    return Run(result=result, requests=[dialect.request(body) for body in wire], events=seen, wire=wire,
               dialect=dialect)
