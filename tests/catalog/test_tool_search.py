"""toolrelay's own tool search: the index ranks the offered tools for a query (names split at
snake_case, camelCase and kebab-case; names, titles, descriptions, parameter names), a
tool the offer chain withholds is never found, and ``toolrelay tools --search`` prints the
ranking (a table, or the hits as JSON) over the 500-tool catalog of 20 real servers."""

from __future__ import annotations

import asyncio
import fnmatch
import json
import subprocess
import sys
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import toolrelay
from testkit.processes import run
from testkit.servers import GROWING_SERVER, catalog_server
from toolrelay.client.config import ServerConfig
from toolrelay.relay.stages.tool_search import SearchEntry, ToolIndex, entry_for, query_terms


def _index(*entries: SearchEntry) -> ToolIndex:
    return ToolIndex.build(entries)


def _entry(server: str, tool: str, description: str = "", **more: Any) -> SearchEntry:
    return SearchEntry(alias=f"{server}__{tool}", server=server, tool=tool, description=description, **more)


def _aliases(index: ToolIndex, query: str, limit: int = 5) -> list[str]:
    return [hit.alias for hit in index.search(query, limit)]


def test_names_are_split_at_snake_camel_and_kebab_case() -> None:
    index = _index(_entry("a", "get_file_info"), _entry("b", "getFileInfo"), _entry("c", "get-file-info"),
                   _entry("d", "HTTPServerStatus"), _entry("e", "send_message"))
    assert sorted(_aliases(index, "file info")) == ["a__get_file_info", "b__getFileInfo", "c__get-file-info"]
    assert _aliases(index, "http server") == ["d__HTTPServerStatus"]
    assert query_terms("Listing the Issues, created") == ["list", "issu", "creat"]


def test_the_tool_name_outranks_a_word_in_a_description_and_unmatched_tools_are_left_out() -> None:
    index = _index(
        _entry("mail", "send_email", "Send a message now."),
        _entry("chat", "post_note", "Post a message; like an email, but to a channel."),
        _entry("files", "read_text_file", "Read a file."),
    )
    hits = index.search("email", 5)
    assert [hit.alias for hit in hits] == ["mail__send_email", "chat__post_note"]
    assert hits[0].score > hits[1].score > 0


def test_titles_parameter_names_and_the_server_name_are_searched() -> None:
    listed = {"name": "q", "title": "Run Query",
              "inputSchema": {"type": "object", "properties": {"sql": {"type": "string"},
                                                               "options": {"type": "object", "properties": {
                                                                   "timeoutMs": {"type": "integer"}}}}}}
    index = _index(entry_for("postgres__q", "postgres", listed), _entry("other", "noop", "Does nothing."))
    for query in ("run a query", "sql", "timeout", "postgres"):
        assert _aliases(index, query) == ["postgres__q"], query


def test_limit_ties_and_queries_with_nothing_to_look_for() -> None:
    index = _index(*(_entry(f"s{n}", "list_items", "List items.") for n in range(4)))
    assert _aliases(index, "items", 3) == ["s0__list_items", "s1__list_items", "s2__list_items"]
    assert index.search("the of a", 3) == [] and index.search("", 3) == []
    assert index.search("nothing-here", 3) == []
    with pytest.raises(ValueError, match=r"limit must be at least 1 \(got 0\)"):
        index.search("items", 0)


class Withhold:
    """A library filter keeping one tool from the model."""

    def __init__(self, name: str) -> None:
        self.name = name

    def withhold(self, listing: toolrelay.ServerListing) -> Mapping[str, str]:
        return {self.name: "kept from the model by the test"}


def test_the_catalog_index_follows_the_offer_a_filter_and_a_relisted_server() -> None:
    growing = ServerConfig(name="grow", transport="stdio", command=sys.executable,
                           args=(str(GROWING_SERVER),))

    async def main() -> tuple[list[str], list[str], list[str]]:
        async with toolrelay.connect([growing], filters=[Withhold("tool_1")]) as catalog:
            before = _aliases(catalog.search_index(), "tool grow")
            for alias in ("grow__grow", "grow__grow"):  # each call lists one more tool
                assert (await catalog.call(alias, "{}")).status == "ok"
            assert await catalog.refresh_if_changed()
            after = _aliases(catalog.search_index(), "tool_1 tool_2")
            return before, after, [entry.alias for entry in catalog.withheld]

    before, after, withheld = asyncio.run(main())
    assert before == ["grow__grow"]
    assert after[0] == "grow__tool_2" and withheld == ["grow__tool_1"]
    assert "grow__tool_1" not in after  # withheld: never found, though the query names it


# -- the 500-tool catalog, through the CLI -------------------------------------------------


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "toolrelay", "tools", *args], text=True, timeout=120, cwd=cwd)


@pytest.fixture(scope="module")
def big_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 20 catalog servers (500 tools), github's ``create_*`` tools denied by the config."""
    path = tmp_path_factory.mktemp("catalog") / "catalog.json"
    path.write_text(json.dumps(catalog_server.config(deny={"github": ["create_*"]})))
    return path


def test_the_catalog_is_twenty_servers_of_twenty_five_distinct_tools_and_variants_differ() -> None:
    servers = catalog_server.catalog()
    assert len(servers) == 20 and all(len({t["name"] for t in tools}) == 25 for tools in servers.values())
    assert catalog_server.tools_for("github") == servers["github"]  # the same name, the same tools
    variant = catalog_server.tools_for("github_3")
    assert variant != servers["github"] and len(variant) == 25
    assert sum(len(tools) for tools in catalog_server.catalog(400).values()) == 10_000


def test_a_search_over_the_500_tool_catalog_ranks_and_never_finds_a_denied_tool(big_catalog: Path) -> None:
    queries = [("--search", "create a github issue", "--limit", "4", "--json"),
               ("--search", "send a slack message to a channel", "--limit", "2")]
    with ThreadPoolExecutor(2) as pool:
        config = str(big_catalog)
        found, table = pool.map(lambda args: _cli(*args, "--config", config, cwd=big_catalog.parent), queries)
    github = [tool["name"] for tool in catalog_server.tools_for("github")]
    denied = [name for name in github if fnmatch.fnmatchcase(name, "create_*")]
    assert "create_issue" in denied
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert len(hits) == 4 and all(hit["server"] == "github" for hit in hits)
    assert "github__create_issue" not in {hit["alias"] for hit in hits}  # denied: never found
    assert [hit["score"] for hit in hits] == sorted((hit["score"] for hit in hits), reverse=True)
    assert set(hits[0]) == {"alias", "server", "tool", "score", "title", "description"}
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["ALIAS", "SERVER", "TOOL", "SCORE", "DESCRIPTION"]
    assert lines[1].startswith("slack__send_message  ") and "  Post a message to a Slack" in lines[1]
    offered = 500 - len(denied)
    assert lines[-1] == f"the 2 best of {offered} offered tool(s) for 'send a slack message to a channel'"


def test_a_catalog_server_runs_a_call(tmp_path: Path) -> None:
    config = tmp_path / "slack.json"
    config.write_text(json.dumps(catalog_server.config(count=2)))
    done = run([sys.executable, "-m", "toolrelay", "call", "slack__send_message",
                '{"channel_id": "C1", "text": "hi"}', "--config", str(config)],
               text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == 'slack.send_message done with {"channel_id": "C1", "text": "hi"}\n'


def test_a_query_that_matches_nothing_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("line 1\n")
    with ThreadPoolExecutor(2) as pool:
        table, listed = pool.map(lambda extra: _cli("--search", "zebra xylophone", *extra, cwd=tmp_path),
                                 ((), ("--json",)))
    assert table.returncode == 0
    assert table.stdout == "no offered tool matches 'zebra xylophone' (6 tool(s) searched)\n"
    assert listed.returncode == 0 and json.loads(listed.stdout) == []


REFUSED = {
    ("--limit", "3"): "--limit goes with --search QUERY",
    ("--search", ""): "--search needs words to look for (got '')",
    ("--search", "the of"): "--search needs words to look for (got 'the of')",
    ("--search", "file", "--limit", "0"): "argument --limit: must be a whole number of at least 1, not '0'",
    ("--search", "file", "--all", "--json"): "--search ranks the offered tools; it does not go with --all",
    ("--search", "file", "--report"): "--search ranks the offered tools; it does not go with --report",
}


def test_search_flags_that_cannot_work_are_refused_before_any_server_starts(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.json")  # read only after the flags were checked
    with ThreadPoolExecutor(3) as pool:
        finished = pool.map(lambda args: _cli(*args, "--config", missing, cwd=tmp_path), REFUSED)
        done = dict(zip(REFUSED, finished, strict=True))
    # the last line: argparse's own refusals (a --limit that is no count) print the usage first
    said = {args: (proc.returncode, proc.stderr.splitlines(keepends=True)[-1]) for args, proc in done.items()}
    assert said == {args: (2, f"toolrelay tools: error: {message}\n") for args, message in REFUSED.items()}
