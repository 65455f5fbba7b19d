"""The same calls against the Node reference server and ours: a host can swap one for the other.

Tool names and argument names must match; results must match except for the documented,
deliberate differences (head/tail print exactly what coreutils print, head=0 is empty,
CRLF is kept, denials name nothing, times are ISO 8601). Search patterns are checked
against the reference's own glob library (minimatch).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolrelay.files.globbing import compile_glob

from .helpers import DENIED, RawClient

BOTH = "Cannot specify both head and tail parameters simultaneously"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("compat")
    (root / "abc.txt").write_bytes(b"a\nb\nc\n")
    (root / "open.txt").write_bytes(b"a\nb\nc")
    (root / "crlf.txt").write_bytes(b"l1\r\nl2\r\nl3\r\n")
    (root / "docs" / "deep").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("# a\n")
    (root / "docs" / "deep" / "b.md").write_text("# b\n")
    (root / "docs" / ".dot.md").write_text("dot\n")
    (root / "Zed.txt").write_text("z\n")
    return root


@pytest.fixture(scope="module")
def pair(root: Path, node_fs_server: list[str]) -> Iterator[tuple[RawClient, RawClient]]:
    with RawClient(str(root)) as ours, RawClient(str(root), command=node_fs_server) as node:
        yield ours, node


def both(pair: tuple[RawClient, RawClient], name: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
    ours, node = pair
    return ours.call(name, arguments), node.call(name, arguments)


def test_same_tool_names_and_arguments(pair: tuple[RawClient, RawClient]) -> None:
    ours, node = (client.request("tools/list").result["tools"] for client in pair)
    theirs = {tool["name"]: tool for tool in node}
    for tool in ours:
        reference = theirs[tool["name"]]  # every tool of ours exists there
        assert set(tool["inputSchema"]["properties"]) == set(reference["inputSchema"]["properties"])
        assert tool["inputSchema"].get("required", []) == reference["inputSchema"].get("required", [])
        assert tool["annotations"]["readOnlyHint"] is reference["annotations"]["readOnlyHint"] is True
        assert tool["annotations"]["openWorldHint"] is reference["annotations"]["openWorldHint"] is False
        content = tool["outputSchema"]["properties"]["content"]
        assert content == reference["outputSchema"]["properties"]["content"]


@pytest.mark.parametrize(("name", "arguments"), [
    ("read_text_file", {"path": "abc.txt"}),
    ("read_text_file", {"path": "open.txt", "head": 3}),
    ("read_text_file", {"path": "open.txt", "tail": 1}),
    ("read_text_file", {"path": "abc.txt", "tail": 5}),
    ("read_multiple_files", {"paths": ["abc.txt", "docs/a.md"]}),
    ("list_directory", {"path": "."}),
    ("list_directory", {"path": "docs"}),
    ("search_files", {"path": ".", "pattern": "**/*.md"}),
    ("search_files", {"path": ".", "pattern": "*.txt"}),
    ("search_files", {"path": ".", "pattern": "docs/**", "excludePatterns": ["**/deep"]}),
    ("search_files", {"path": ".", "pattern": "*.nothing"}),
    ("list_allowed_directories", {}),
])
def test_same_results(pair: tuple[RawClient, RawClient], name: str, arguments: dict[str, Any]) -> None:
    ours, theirs = both(pair, name, arguments)
    assert ours == theirs


@pytest.mark.parametrize(("arguments", "ours", "theirs"), [
    ({"path": "abc.txt", "head": 2}, "a\nb\n", "a\nb"),  # head -n 2 keeps the second newline
    ({"path": "open.txt", "head": 2}, "a\nb\n", "a\nb"),
    ({"path": "abc.txt", "tail": 1}, "c\n", ""),  # the reference returns N-1 lines here
    ({"path": "abc.txt", "tail": 2}, "b\nc\n", "c\n"),
    ({"path": "abc.txt", "head": 0}, "", "a\nb\nc\n"),  # 0 lines, not the whole file
    ({"path": "crlf.txt", "tail": 2}, "l2\r\nl3\r\n", "l3\n"),  # bytes kept, not rewritten
])
def test_documented_read_differences(
    pair: tuple[RawClient, RawClient], arguments: dict[str, Any], ours: str, theirs: str
) -> None:
    mine, reference = both(pair, "read_text_file", arguments)
    assert mine["content"][0]["text"] == ours
    assert reference["content"][0]["text"] == theirs


def test_errors_compared(pair: tuple[RawClient, RawClient], root: Path) -> None:
    mine, reference = both(pair, "read_text_file", {"path": "abc.txt", "head": 1, "tail": 1})
    assert mine["content"][0]["text"] == reference["content"][0]["text"] == BOTH
    mine, reference = both(pair, "read_text_file", {"path": "/etc/passwd"})
    assert mine["content"][0]["text"] == DENIED
    assert reference["content"][0]["text"] == f"{DENIED}: /etc/passwd not in {root}"  # names the roots
    assert mine["isError"] is reference["isError"] is True
    mine, reference = both(pair, "read_text_file", {"path": "abc.txt", "head": None})
    assert mine["isError"] is reference["isError"] is True  # both refuse null


def test_file_info_has_the_same_fields(pair: tuple[RawClient, RawClient]) -> None:
    mine, reference = both(pair, "get_file_info", {"path": "abc.txt"})

    def fields(result: dict[str, Any]) -> dict[str, str]:
        return dict(line.split(": ", 1) for line in result["content"][0]["text"].split("\n"))

    ours, theirs = fields(mine), fields(reference)
    assert list(ours) == list(theirs)
    for key in ("size", "isDirectory", "isFile", "permissions"):
        assert ours[key] == theirs[key]


PATTERNS = ["*.md", "**/*.md", "docs/**", "**", "*", "?.txt", "[ab].txt", "[!a]*.txt", "{a,b}/*.md",
            "docs/*/b.md", "**/deep/**", "a/**/b", "x{1..3}.txt", "\\*.txt", "*.{md,txt}", "**/",
            "b*/**/*.md"]
PATHS = ["a.md", ".a.md", "docs", "docs/a.md", "docs/deep", "docs/deep/b.md", "a.txt", "b.txt", "c.txt",
         "ab.txt", "a/b", "a/x/y/b", "b/c.md", "x2.txt", "x4.txt", "*.txt", "docs/.dot.md", "bx/c/d.md"]


def test_glob_patterns_match_like_minimatch(node_fs_server: list[str]) -> None:
    node, index = node_fs_server
    modules = Path(index).parents[3]  # .../node_modules
    script = (
        f"const {{minimatch}} = require({json.dumps(str(modules / 'minimatch'))});"
        f"const P = {json.dumps(PATTERNS)}, F = {json.dumps(PATHS)};"
        "console.log(JSON.stringify(P.map(p => F.map(f => minimatch(f, p, {dot: true})))));"
    )
    answer = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True)
    expected = json.loads(answer.stdout)
    mismatches = [
        (pattern, path, theirs)
        for pattern, their_row in zip(PATTERNS, expected, strict=True)
        for path, theirs in zip(PATHS, their_row, strict=True)
        if (compile_glob(pattern).fullmatch(path) is not None) != theirs
    ]
    assert mismatches == []


def test_invalid_utf8_and_unknown_arguments(pair: tuple[RawClient, RawClient], root: Path) -> None:
    (root / "bad.txt").write_bytes(b"ok\n\xff\n")
    mine, reference = both(pair, "read_text_file", {"path": "bad.txt"})
    assert reference["content"][0]["text"] == "ok\n\ufffd\n"  # silently replaced there
    assert mine["isError"] is True and "byte 0xff at byte offset 3" in mine["content"][0]["text"]
    mine, reference = both(pair, "read_text_file", {"path": "abc.txt", "heads": 1})
    assert reference["content"][0]["text"] == "a\nb\nc\n"  # the misspelt argument was ignored there
    assert mine["content"][0]["text"] == (
        'Invalid arguments: unknown argument "heads" (read_text_file takes path, head, tail)')


def test_a_fifo_blocks_the_reference_but_not_us(tmp_path: Path, node_fs_server: list[str]) -> None:
    os.mkfifo(tmp_path / "pipe")
    with RawClient(str(tmp_path)) as ours:
        assert ours.error("read_text_file", {"path": "pipe"}) == "Not a regular file: pipe (a FIFO)"
    node = RawClient(str(tmp_path), command=node_fs_server)
    try:
        with pytest.raises(TimeoutError):
            node.call("read_text_file", {"path": "pipe"}, timeout=2)
    finally:
        node.proc.kill()
        node.close()
