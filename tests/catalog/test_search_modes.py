"""Tool search end to end on the 500-tool catalog (20 real stdio servers), with the offline
stand-in on loopback: the scripted model searches, loads, calls two tools on two servers
and answers, under ``--declare namespaces``, ``--tool-search hosted`` and ``--tool-search
client``, streamed and not. Every request body is one the openai types accept, and each
transcript verifies."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from testkit.openai_wire import check_body
from testkit.servers import catalog_server
from toolrelay.client.config import ServerConfig, load_config
from toolrelay.events import Event, EventStream
from toolrelay.offline import OfflineModel
from toolrelay.offline.script import parse_script
from toolrelay.relay.loop import RunResult
from toolrelay.relay.stages.consent import approve_all
from toolrelay.runner import RunOptions, run_async
from toolrelay.verify import load_run, verify

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


def servers(root: Path) -> list[ServerConfig]:
    path = root / "catalog.json"
    if not path.exists():
        path.write_text(json.dumps(catalog_server.config()), encoding="utf-8")
    return load_config(path)


def search_run(root: Path, mode: str, *, stream: bool = True, script: dict[str, Any] | None = None,
               **options: Any) -> SearchRun:
    """One scripted run over the 500-tool catalog in ``mode`` (namespaces, hosted, client)."""
    events = EventStream()
    seen: list[Event] = []
    events.subscribe(seen.append)
    transcript = root / f"{mode}-{'stream' if stream else 'whole'}-{len(list(root.iterdir()))}.jsonl"
    chosen = {"declare": "namespaces"} if mode == "namespaces" else {"tool_search": mode}
    with OfflineModel(parse_script(script or SCRIPTS[mode])) as model:
        opts = RunOptions(model="gpt-5.4", base_url=model.base_url, api_key=None, config=servers(root),
                          events=events, environ={}, stream=stream, transcript=transcript,
                          approve=approve_all, **chosen, **options)
        result = asyncio.run(run_async(TASK, opts))
        return SearchRun(result=result, requests=list(model.requests), events=seen, transcript=transcript)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("search-modes")


@pytest.fixture(scope="module", params=[("namespaces", True), ("hosted", True), ("client", True),
                                        ("hosted", False), ("client", False)],
                ids=lambda p: f"{p[0]}-{'stream' if p[1] else 'whole'}")
def moded(request: pytest.FixtureRequest, root: Path) -> tuple[str, SearchRun]:
    mode, stream = request.param
    return mode, search_run(root, mode, stream=stream)


def test_the_model_searches_loads_calls_two_servers_and_answers(moded: tuple[str, SearchRun]) -> None:
    mode, done = moded
    assert done.result.status == "completed", done.result.reason
    assert done.result.final_text == ANSWER["message"]
    assert [(c.alias, c.server, c.tool, c.status) for c in done.result.calls] == [
        ("github.search_issues", "github", "search_issues", "ok"),
        ("slack.send_message", "slack", "send_message", "ok"),
    ]
    for body in done.requests:
        check_body(body)
    assert len(done.requests) == (3 if mode == "client" else 2)


def _declared_names(tools: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(namespace.name of every declared function tool, the other entries' types)."""
    spaces = [t for t in tools if t["type"] == "namespace"]
    names = [f"{t['name']}.{inner['name']}" for t in spaces for inner in t["tools"]]
    return names, [t["type"] for t in tools if t["type"] != "namespace"]


def test_what_each_mode_declares(moded: tuple[str, SearchRun]) -> None:
    mode, done = moded
    tools = done.requests[0]["tools"]
    names, others = _declared_names(tools)
    if mode == "client":
        assert names == [] and others == ["tool_search"]
        assert tools[-1]["execution"] == "client" and tools[-1]["parameters"]["required"] == ["query"]
        return
    assert len(names) == 500
    deferred = [inner for t in tools if t["type"] == "namespace" for inner in t["tools"]
                if inner.get("defer_loading") is True]
    assert others == (["tool_search"] if mode == "hosted" else [])
    assert len(deferred) == (500 if mode == "hosted" else 0)
    assert tools[-1] == {"type": "tool_search"} or mode == "namespaces"


def test_searches_are_kept_replayed_and_answered(moded: tuple[str, SearchRun]) -> None:
    mode, done = moded
    if mode == "namespaces":
        return
    last = done.requests[-1]["input"]
    kinds = [item.get("type") for item in last]
    assert kinds.count("tool_search_call") == 1 and kinds.count("tool_search_output") == 1
    call = next(item for item in last if item.get("type") == "tool_search_call")
    output = next(item for item in last if item.get("type") == "tool_search_output")
    assert output["call_id"] == call["call_id"]
    assert call["execution"] == output["execution"] == ("client" if mode == "client" else "server")
    loaded, _ = _declared_names(output["tools"])
    assert {"github.search_issues", "slack.send_message"} <= set(loaded)
    assert all("defer_loading" not in inner for space in output["tools"] for inner in space["tools"])
    searches = done.records("tool_search")
    if mode == "client":
        [search] = searches
        assert search["call_id"] == call["call_id"] and search["item"] == output
        assert sorted(hit["alias"] for hit in search["hits"]) == sorted(loaded)  # grouped by namespace
        assert done.requests[1]["input"][-1] == output  # the answer follows the call
    else:
        assert searches == []  # the API searched: nothing for toolrelay to answer


def test_each_transcript_verifies(moded: tuple[str, SearchRun]) -> None:
    _, done = moded
    verdict = verify(load_run(done.transcript))
    assert verdict.broken is None, verdict.broken
    assert verdict.finished
