"""Tool search end to end on the 500-tool catalog (20 real stdio servers), with the offline
stand-in on loopback: the scripted model searches, loads, calls two tools on two servers
and answers, under ``--declare namespaces``, ``--tool-search hosted`` and ``--tool-search
client``, streamed and not. Every request body is one the openai types accept, and each
transcript verifies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from search_helpers import ANSWER, CALLS, SearchRun, declared_names, search_run

from testkit.openai_wire import check_body
from toolrelay.errors import UsageError
from toolrelay.offline.script import parse_script
from toolrelay.verify import load_run, verify


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("search-modes")


MODES = [("namespaces", True), ("hosted", True), ("client", True), ("hosted", False), ("client", False)]
MODE_IDS = [f"{mode}-{'stream' if streamed else 'whole'}" for mode, streamed in MODES]


@pytest.mark.parametrize(("mode", "stream"), MODES, ids=MODE_IDS)
def test_the_model_searches_loads_calls_two_servers_and_answers(root: Path, mode: str, stream: bool) -> None:
    done = search_run(root, mode, stream=stream)
    _answered(mode, done)
    _declares(mode, done)
    _searched(mode, done)
    verdict = verify(load_run(done.transcript))
    assert verdict.broken is None, verdict.broken
    assert verdict.finished


def _answered(mode: str, done: SearchRun) -> None:
    assert done.result.status == "completed", done.result.reason
    assert done.result.final_text == ANSWER["message"]
    assert [(c.alias, c.server, c.tool, c.status) for c in done.result.calls] == [
        ("github.search_issues", "github", "search_issues", "ok"),
        ("slack.send_message", "slack", "send_message", "ok"),
    ]
    for body in done.requests:
        check_body(body)
    assert len(done.requests) == (3 if mode == "client" else 2)


def _declares(mode: str, done: SearchRun) -> None:
    tools = done.requests[0]["tools"]
    names, others = declared_names(tools)
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


def _searched(mode: str, done: SearchRun) -> None:
    """The searches are kept, replayed and (client) answered, one output per call."""
    if mode == "namespaces":
        return
    last = done.requests[-1]["input"]
    kinds = [item.get("type") for item in last]
    assert kinds.count("tool_search_call") == 1 and kinds.count("tool_search_output") == 1
    call = next(item for item in last if item.get("type") == "tool_search_call")
    output = next(item for item in last if item.get("type") == "tool_search_output")
    assert output["call_id"] == call["call_id"]
    assert call["execution"] == output["execution"] == ("client" if mode == "client" else "server")
    loaded, _ = declared_names(output["tools"])
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




# -- what a search may load, and what may be called ------------------------------------------


def test_a_client_search_never_loads_a_withheld_tool(root: Path) -> None:
    script = {"turns": [{"search": {"query": "create a github issue", "limit": 8}}, ANSWER]}
    done = search_run(root, "client", script=script, deny={"github": ["create_*"]}, count=3)
    [search] = done.records("tool_search")
    found = [hit["alias"] for hit in search["hits"]]
    assert found and all(not alias.startswith("github.create_") for alias in found)
    assert "github.get_issue" in found or "github.update_issue" in found  # the rest of github is there
    loaded, _ = declared_names(search["item"]["tools"])
    assert "github.create_issue" not in loaded
    assert verify(load_run(done.transcript)).broken is None


def test_always_loaded_tools_are_declared_up_front_in_both_modes(root: Path) -> None:
    script = {"turns": [{"calls": [CALLS[1]]}, ANSWER]}  # no search: slack.send_message is loaded
    for mode in ("client", "hosted"):
        done = search_run(root, mode, script=script, always_load=("slack.send_*", "calendar__*"), count=3)
        names, others = declared_names(done.requests[0]["tools"])
        spaces = {t["name"]: t for t in done.requests[0]["tools"] if t["type"] == "namespace"}
        kept = {f"{space}.{inner['name']}" for space, t in spaces.items() for inner in t["tools"]
                if inner.get("defer_loading") is not True}
        calendar = {name for name in names if name.startswith("calendar.")}
        assert kept == {"slack.send_message", *calendar} and len(calendar) == 25, mode
        assert others == ["tool_search"]
        assert len(names) == (75 if mode == "hosted" else 26)
        assert [c.status for c in done.result.calls] == ["ok"], mode
        [declarations] = done.records("declarations")
        assert sorted(declarations["tool_search"]["always_load"]) == sorted(kept)
        assert verify(load_run(done.transcript)).broken is None, mode


def test_a_call_to_a_tool_no_search_loaded_is_refused_and_told(root: Path) -> None:
    script = {"turns": [{"calls": [CALLS[0]]}, ANSWER]}  # the model calls without searching
    done = search_run(root, "client", script=script, count=2)
    [call] = done.result.calls
    assert call.status == "refused_by_hook"
    [output] = [i for i in done.requests[1]["input"] if i.get("type") == "function_call_output"]
    assert "github.search_issues is not loaded: its definition is found by tool search" in output["output"]
    assert verify(load_run(done.transcript)).broken is None


def test_a_scripted_search_needs_a_declared_tool_search(root: Path) -> None:
    done = search_run(root, "namespaces", script={"turns": [{"search": {"query": "issues"}}]}, count=1)
    assert done.result.status == "failed"
    assert "the script searches for tools, but the request declares no tool_search tool" in done.result.reason


@pytest.mark.parametrize(("search", "said"), [
    ({"query": ""}, 'turns[0].search: expected an object {"query": "text", "limit": N} with a '
                     'non-empty query'),
    ({"query": "x", "limit": 0}, "turns[0].search: limit must be a whole number from 1, got 0"),
    ({"query": "x", "top": 3}, "turns[0].search: unknown key 'top' (expected query, limit)"),
])
def test_bad_search_entries_are_usage_errors(search: dict[str, Any], said: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_script({"turns": [{"search": search}]})
    assert str(caught.value) == f"script <script>: {said}"
