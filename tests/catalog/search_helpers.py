"""Runs over the catalog servers with the offline stand-in, for the tool-search tests: one
scripted run in a mode (namespaces, hosted, client), its requests, events and transcript."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testkit.servers import catalog_server
from toolrelay.client.config import ServerConfig, load_config
from toolrelay.events import Event, EventStream
from toolrelay.offline import OfflineModel
from toolrelay.offline.script import parse_script
from toolrelay.relay.loop import RunResult
from toolrelay.relay.stages.consent import approve_all
from toolrelay.runner import RunOptions, run_async

TASK = "Find the github issue about the login bug and tell #general on slack about it"
CALLS = [
    {"namespace": "github", "name": "search_issues",
     "arguments": {"owner": "acme", "repo": "web", "query": "login bug"}},
    {"namespace": "slack", "name": "send_message",
     "arguments": {"channel_id": "C1", "text": "login bug: #12"}},
]
ANSWER = {"message": "Found the issue and told #general."}
SCRIPTS: dict[str, dict[str, Any]] = {
    # every tool declared: no search, the model calls at once
    "namespaces": {"turns": [{"calls": CALLS}, ANSWER]},
    # the API searches and loads within the response, the calls follow in it
    "hosted": {"turns": [{"search": {"query": "search github issues send slack message", "limit": 6},
                          "calls": CALLS}, ANSWER]},
    # toolrelay answers the search; the next response calls what it loaded
    "client": {"turns": [{"search": {"query": "search github issues, send a slack message", "limit": 6}},
                         {"calls": CALLS}, ANSWER]},
}


@dataclass
class SearchRun:
    result: RunResult
    requests: list[dict[str, Any]]
    events: list[Event]
    transcript: Path

    def records(self, kind: str) -> list[dict[str, Any]]:
        return [event.to_record() for event in self.events if event.event_kind == kind]


def servers(root: Path, deny: dict[str, list[str]] | None = None, count: int = 20) -> list[ServerConfig]:
    """The first ``count`` catalog servers (``deny``: the config's deny patterns per server)."""
    path = root / f"catalog-{len(list(root.iterdir()))}.json"
    path.write_text(json.dumps(catalog_server.config(deny=deny, count=count)), encoding="utf-8")
    return load_config(path)


def search_run(root: Path, mode: str, *, stream: bool = True, script: dict[str, Any] | None = None,
               deny: dict[str, list[str]] | None = None, count: int = 20, **options: Any) -> SearchRun:
    """One scripted run over the 500-tool catalog in ``mode`` (namespaces, hosted, client)."""
    events = EventStream()
    seen: list[Event] = []
    events.subscribe(seen.append)
    transcript = root / f"{mode}-{'stream' if stream else 'whole'}-{len(list(root.iterdir()))}.jsonl"
    chosen = {"declare": "namespaces"} if mode == "namespaces" else {"tool_search": mode}
    with OfflineModel(parse_script(script or SCRIPTS[mode])) as model:
        config = servers(root, deny, count)
        opts = RunOptions(model="gpt-5.4", base_url=model.base_url, api_key=None, config=config,
                          events=events, environ={}, stream=stream, transcript=transcript,
                          approve=approve_all, **chosen, **options)
        result = asyncio.run(run_async(TASK, opts))
        return SearchRun(result=result, requests=list(model.requests), events=seen, transcript=transcript)


def declared_names(tools: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(namespace.name of every declared function tool, the other entries' types)."""
    spaces = [t for t in tools if t["type"] == "namespace"]
    names = [f"{t['name']}.{inner['name']}" for t in spaces for inner in t["tools"]]
    return names, [t["type"] for t in tools if t["type"] != "namespace"]
