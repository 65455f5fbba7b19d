"""The offer chain: a listed tool that a filter withholds (the config's ``deny``, a library
filter) is never offered to the model, is shown with its reason by ``toolrelay tools``,
and is recorded with it in the transcript, where ``verify`` holds the declarations to it
and ``view`` lists it."""

from __future__ import annotations

import asyncio
import copy
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
from testkit.transcripts import transcript_events
from toolrelay.client.config import builtin_file_server
from toolrelay.verify import load_run, verify
from toolrelay.view.build import build_trace

DENIED = {"alias": "fs__search_files", "server": "fs", "tool": "search_files",
          "reason": 'excluded by the config\'s "deny" rule "search_*"'}


class Without:
    """A library filter: withholds one tool by name, saying which server listed it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.seen: list[str] = []

    def withhold(self, listing: toolrelay.ServerListing) -> Mapping[str, str]:
        self.seen.append(f"{listing.server}: {len(listing.tools)} tool(s), {listing.config.name}")
        return {self.name: f"the test keeps {self.name} from the model"}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "toolrelay", *args], text=True, timeout=60, cwd=cwd)


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("offer")
    (root / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 31)))
    return root


def test_a_config_deny_is_withheld_with_the_rule_that_says_so(notes: Path, tmp_path: Path) -> None:
    entry = {"command": sys.executable, "args": ["-m", "toolrelay", "files", str(notes)],
             "toolrelay": {"deny": ["search_*"]}}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"fs": entry}}))
    commands = [("tools",), ("tools", "--json"), ("tools", "--all", "--json"),
                ("call", "fs__search_files", '{"path": ".", "pattern": "*"}')]
    with ThreadPoolExecutor(2) as pool:
        said = pool.map(lambda command: _cli(*command, "--config", str(config), cwd=notes), commands)
        table, plain, every, called = said
    assert table.returncode == 0, table.stderr
    assert "\n5 tool(s) from 1 server(s); 1 withheld\n" in table.stdout
    assert ('  - fs__search_files (fs/search_files) not offered: excluded by the config\'s "deny" rule '
            '"search_*"\n') in table.stdout
    offered = json.loads(plain.stdout)
    assert "fs__search_files" not in {tool["name"] for tool in offered} and len(offered) == 5
    assert json.loads(every.stdout) == {"tools": offered, "withheld": [DENIED]}
    assert called.returncode == 2
    assert called.stderr == ("toolrelay call: error: fs__search_files: server fs: tool search_files is not "
                             'offered: excluded by the config\'s "deny" rule "search_*"\n')


def test_a_library_filter_withholds_a_tool(notes: Path) -> None:
    kept = Without("read_multiple_files")

    async def main() -> tuple[list[str], list[dict[str, str]], str]:
        async with toolrelay.connect([builtin_file_server(notes)], filters=[kept]) as catalog:
            names = [tool["name"] for tool in catalog.declarations()]
            outcome = await catalog.call("fs__read_multiple_files", '{"paths": ["notes.txt"]}')
            return names, [entry.to_record() for entry in catalog.withheld], outcome.status

    names, withheld, status = asyncio.run(main())
    assert "fs__read_multiple_files" not in names and len(names) == 5
    assert withheld == [{"alias": "fs__read_multiple_files", "server": "fs", "tool": "read_multiple_files",
                         "reason": "the test keeps read_multiple_files from the model"}]
    assert status == "unknown_tool"  # never sent to the server
    assert kept.seen == ["fs: 6 tool(s), fs"]  # the raw listing: built-in filters withheld none


def test_something_that_is_not_a_filter_is_refused_before_any_server_starts() -> None:
    def by_name(listing: toolrelay.ServerListing) -> dict[str, str]:
        return {}

    with pytest.raises(toolrelay.ToolrelayError) as refused:
        toolrelay.connect(filters=[Without("x"), by_name])  # type: ignore[list-item]
    assert str(refused.value) == (
        "filters[1] (function) is not a tool filter: it needs a withhold(listing) method returning "
        "{tool name: reason} (toolrelay.ToolFilter)")
    assert refused.value.exit_code == 2


@pytest.fixture(scope="module")
def filtered_run(notes: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    transcript = tmp_path_factory.mktemp("run") / "run.jsonl"
    result = toolrelay.run("Read the first 3 lines of notes.txt", model="offline", transcript=transcript,
                           config=[builtin_file_server(notes)], filters=[Without("search_files")])
    assert result.completed and [call.status for call in result.calls] == ["ok"]
    return transcript


def _events(transcript: Path) -> list[dict[str, Any]]:
    return transcript_events(transcript)


def test_the_model_is_never_offered_a_withheld_tool(filtered_run: Path) -> None:
    events = _events(filtered_run)
    offered = [[tool["name"] for tool in e["body"]["tools"]] for e in events if e["kind"] == "model_request"]
    assert len(offered) == 2 and all("fs__read_text_file" in names for names in offered)
    assert not any("fs__search_files" in names for names in offered)
    declared = next(e for e in events if e["kind"] == "declarations")
    assert declared["withheld"] == [{"alias": "fs__search_files", "server": "fs", "tool": "search_files",
                                     "reason": "the test keeps search_files from the model"}]
    proc = _cli("verify", str(filtered_run), cwd=filtered_run.parent)
    assert proc.returncode == 0, proc.stdout
    drawn = next(row for row in build_trace(events).rows() if row.stage == "declare")
    assert drawn.detail.endswith("; withheld: fs__search_files (the test keeps search_files from the model)")


def test_verify_rejects_a_tool_both_offered_and_withheld(filtered_run: Path, tmp_path: Path) -> None:
    events = copy.deepcopy(_events(filtered_run))
    declared = next(e for e in events if e["kind"] == "declarations")
    declared["withheld"].append({"alias": "fs__read_text_file", "server": "fs", "tool": "read_text_file",
                                 "reason": "made up"})
    path = tmp_path / "tampered.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    verdict = verify(load_run(path))
    assert verdict.broken is not None and verdict.broken.link == "next_input"
    assert verdict.broken.message == (
        "the declarations (initial) offer fs__read_text_file (fs/read_text_file), which they record as "
        "withheld (made up): a withheld tool is never offered")
