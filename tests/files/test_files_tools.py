"""The six tools over stdio with the raw driver: declarations, results and every error text."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolrelay.files.roots import NO_ROOTS

from .helpers import RawClient

BOTH = "Cannot specify both head and tail parameters simultaneously"
TOOL_NAMES = {"read_text_file", "read_multiple_files", "list_directory", "get_file_info", "search_files",
              "list_allowed_directories"}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tools")
    (root / "abc.txt").write_bytes(b"a\nb\nc\n")
    (root / "abc-open.txt").write_bytes(b"a\nb\nc")
    (root / "crlf.txt").write_bytes(b"l1\nl2\r\nl3")
    (root / "empty.txt").write_bytes(b"")
    (root / "bad.txt").write_bytes(b"ok\n\xff\nok\n")
    (root / "euro.txt").write_bytes("€".encode() * 2000)  # 6000 bytes, one line, 3-byte characters
    (root / "big.txt").write_bytes(b"x" * 2000 + b"\n")
    (root / "docs" / "deep").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("# a\n")
    (root / "docs" / "deep" / "b.md").write_text("# b\n")
    (root / "docs" / "deep" / "c.txt").write_text("c\n")
    (root / ".hidden.md").write_text("h\n")
    return root


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[RawClient]:
    with RawClient(str(root)) as client:
        yield client


@pytest.fixture(scope="module")
def small(root: Path) -> Iterator[RawClient]:
    """A server whose results carry at most 1 KiB of text."""
    with RawClient(str(root), "--max-result-bytes", "1K") as client:
        yield client


def test_initialize_and_declarations(server: RawClient) -> None:
    assert server.init.result["serverInfo"]["name"] == "toolrelay-files"
    tools = server.request("tools/list").result["tools"]
    assert {tool["name"] for tool in tools} == TOOL_NAMES
    for tool in tools:
        assert tool["description"] and tool["title"]
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["annotations"]["openWorldHint"] is False
        assert tool["inputSchema"]["type"] == "object"
        assert tool["outputSchema"]["required"] == ["content"]
    read = next(tool for tool in tools if tool["name"] == "read_text_file")
    assert set(read["inputSchema"]["properties"]) == {"path", "head", "tail"}
    assert read["inputSchema"]["required"] == ["path"]


@pytest.mark.parametrize(("name", "arguments", "expected"), [
    ("abc.txt", {"head": 2}, "a\nb\n"),
    ("abc.txt", {"head": 5}, "a\nb\nc\n"),
    ("abc.txt", {"head": 0}, ""),
    ("abc.txt", {"head": 2.0}, "a\nb\n"),
    ("abc.txt", {"tail": 1}, "c\n"),  # the reference server answers "" here
    ("abc.txt", {"tail": 2}, "b\nc\n"),
    ("abc.txt", {"tail": 5}, "a\nb\nc\n"),
    ("abc.txt", {"tail": 0}, ""),
    ("abc.txt", {}, "a\nb\nc\n"),
    ("abc-open.txt", {"tail": 1}, "c"),
    ("abc-open.txt", {"head": 3}, "a\nb\nc"),
    ("crlf.txt", {"head": 2}, "l1\nl2\r\n"),
    ("crlf.txt", {"tail": 5}, "l1\nl2\r\nl3"),
    ("empty.txt", {"head": 3}, ""),
    ("empty.txt", {"tail": 3}, ""),
    ("bad.txt", {"head": 1}, "ok\n"),  # only the lines asked for are decoded
])
def test_read_text_file(server: RawClient, name: str, arguments: dict[str, object], expected: str) -> None:
    result = server.call("read_text_file", {"path": name, **arguments})
    assert result == {"content": [{"type": "text", "text": expected}],
                      "structuredContent": {"content": expected}}


@pytest.mark.parametrize("value", [-1, 2.5, None, "5", True, [], {}, -0.5])
@pytest.mark.parametrize("key", ["head", "tail"])
def test_counts_must_be_non_negative_integers(server: RawClient, key: str, value: object) -> None:
    shown = json.dumps(value)
    expected = f'Invalid arguments: "{key}" must be a non-negative integer, got {shown}'
    assert server.error("read_text_file", {"path": "abc.txt", key: value}) == expected


@pytest.mark.parametrize("counts", [{"head": 1, "tail": 1}, {"head": 0, "tail": 5}, {"head": 3, "tail": 0},
                                    {"head": 0, "tail": 0}])
def test_head_and_tail_together(server: RawClient, counts: dict[str, int]) -> None:
    assert server.error("read_text_file", {"path": "abc.txt", **counts}) == BOTH


@pytest.mark.parametrize(("arguments", "expected"), [
    ({}, 'Invalid arguments: "path" is required'),
    ({"path": 5}, 'Invalid arguments: "path" must be a string, got 5'),
    ({"path": None}, 'Invalid arguments: "path" must be a string, got null'),
    ({"path": "abc.txt", "heads": 2},
     'Invalid arguments: unknown argument "heads" (read_text_file takes path, head, tail)'),
    ({"path": "\ud800"}, 'Invalid arguments: "path" is not valid Unicode text (it holds a lone surrogate)'),
])
def test_argument_errors(server: RawClient, arguments: dict[str, object], expected: str) -> None:
    assert server.error("read_text_file", arguments) == expected


def test_other_tools_check_their_arguments(server: RawClient) -> None:
    assert server.error("read_multiple_files", {"paths": []}) == (
        'Invalid arguments: "paths" must hold at least 1 item')
    assert server.error("read_multiple_files", {"paths": "abc.txt"}) == (
        'Invalid arguments: "paths" must be an array of strings, got "abc.txt"')
    assert server.error("search_files", {"path": "."}) == 'Invalid arguments: "pattern" is required'
    assert server.error("search_files", {"path": ".", "pattern": "*", "excludePatterns": [1]}) == (
        'Invalid arguments: "excludePatterns" must be an array of strings, got [1]')
    assert server.error("list_allowed_directories", {"path": "."}) == (
        'Invalid arguments: unknown argument "path" (list_allowed_directories takes no arguments)')
    assert server.error("search_files", {"path": ".", "pattern": "[z-a]"}).startswith(
        "Invalid glob pattern '[z-a]': bad character range z-a")


def test_unknown_tool_is_a_protocol_error(server: RawClient) -> None:
    answer = server.exchange("tools/call", {"name": "write_file", "arguments": {"path": "x", "content": "y"}})
    assert answer.raw["error"] == {"code": -32602, "message": "Unknown tool: write_file"}
    assert server.text("read_text_file", {"path": "abc.txt"}) == "a\nb\nc\n"  # session unharmed


def test_file_errors(server: RawClient) -> None:
    assert server.error("read_text_file", {"path": "missing.txt"}) == "No such file or directory: missing.txt"
    assert server.error("read_text_file", {"path": "abc.txt/x"}) == "Not a directory: abc.txt/x"
    assert server.error("read_text_file", {"path": "docs"}) == "Not a regular file: docs (a directory)"
    assert server.error("list_directory", {"path": "abc.txt"}) == "Not a directory: abc.txt"
    assert server.error("search_files", {"path": "abc.txt", "pattern": "*"}) == "Not a directory: abc.txt"


def test_invalid_utf8_names_the_offset(server: RawClient) -> None:
    expected = ("Cannot read bad.txt: not valid UTF-8 text (invalid UTF-8 byte 0xff at byte offset 3); "
                "this tool reads text only")
    assert server.error("read_text_file", {"path": "bad.txt"}) == expected
    assert server.error("read_text_file", {"path": "bad.txt", "tail": 2}) == expected


def test_whole_read_above_the_cap_is_refused(small: RawClient) -> None:
    assert small.error("read_text_file", {"path": "big.txt"}) == (
        "File too large to read whole: big.txt holds 2,001 bytes, more than the 1,024-byte result limit. "
        "Use read_text_file with head or tail to read part of it.")
    assert small.text("read_text_file", {"path": "abc.txt"}) == "a\nb\nc\n"


@pytest.mark.parametrize(("mode", "part"), [("head", "first"), ("tail", "last")])
def test_a_line_longer_than_the_cap_is_cut_on_a_character(small: RawClient, mode: str, part: str) -> None:
    result = small.call("read_text_file", {"path": "euro.txt", mode: 1})
    text = "€" * 341  # 1,023 bytes: the 342nd character would cross the 1,024-byte cap
    note = (f"[truncated: the {mode} lines asked for hold more than the 1,024-byte result limit; "
            f"the text above is their {part} 1,023 bytes, cut on a character boundary]")
    assert result == {
        "content": [{"type": "text", "text": text}, {"type": "text", "text": note}],
        "structuredContent": {"content": text, "truncated": True},
    }


def test_read_multiple_files(server: RawClient, small: RawClient) -> None:
    assert server.text("read_multiple_files", {"paths": ["abc.txt", "missing.txt", "docs/a.md"]}) == (
        "abc.txt:\na\nb\nc\n\n\n---\nmissing.txt: Error - No such file or directory: missing.txt\n---\n"
        "docs/a.md:\n# a\n\n")
    # the files share one budget: after abc.txt's 6 bytes, 1,018 are left for big.txt
    text = small.text("read_multiple_files", {"paths": ["abc.txt", "big.txt"]})
    assert text == (
        "abc.txt:\na\nb\nc\n\n\n---\nbig.txt: Error - File too large to read whole: big.txt holds "
        "2,001 bytes, more than the 1,018 bytes left of this call's 1,024-byte limit. "
        "Use read_text_file with head or tail to read part of it.")


def test_list_directory(server: RawClient, root: Path) -> None:
    assert server.text("list_directory", {"path": "docs"}) == "[FILE] a.md\n[DIR] deep"
    listing = server.text("list_directory", {"path": str(root)}).split("\n")
    assert listing == sorted(listing, key=lambda line: line.split(" ", 1)[1])
    assert "[FILE] .hidden.md" in listing and "[DIR] docs" in listing
    assert server.error("list_directory", {"path": "nope"}) == "No such file or directory: nope"


def test_list_directory_is_capped(small: RawClient, tmp_path: Path) -> None:
    many = tmp_path / "many"  # outside small's root: use a fresh server
    many.mkdir()
    for index in range(200):
        (many / f"file-{index:04d}.txt").write_text("")
    with RawClient(str(many), "--max-result-bytes", "1K") as client:
        result = client.call("list_directory", {"path": "."})
    assert result["structuredContent"]["truncated"] is True
    assert result["content"][1]["text"] == (
        "[truncated: the directory holds more entries than fit in 1,024 bytes]")
    assert 0 < len(result["content"][0]["text"].split("\n")) < 200


def test_get_file_info(server: RawClient, root: Path) -> None:
    os.chmod(root / "abc.txt", 0o640)
    info = dict(line.split(": ", 1) for line in server.text("get_file_info", {"path": "abc.txt"}).split("\n"))
    assert list(info) == ["size", "created", "modified", "accessed", "isDirectory", "isFile", "permissions"]
    assert (info["size"], info["isDirectory"], info["isFile"]) == ("6", "false", "true")
    assert info["permissions"] == "640"
    assert info["modified"].endswith("+00:00") and info["modified"][:4].isdigit()
    folder = dict(line.split(": ", 1) for line in server.text("get_file_info", {"path": "docs"}).split("\n"))
    assert (folder["isDirectory"], folder["isFile"]) == ("true", "false")


def test_search_files(server: RawClient, root: Path) -> None:
    def search(pattern: str, **extra: object) -> list[str]:
        text = server.text("search_files", {"path": ".", "pattern": pattern, **extra})
        if text == "No matches found":
            return []
        return [path.removeprefix(f"{root}/") for path in text.split("\n")]

    assert search("*.md") == [".hidden.md"]
    assert search("**/*.md") == [".hidden.md", "docs/a.md", "docs/deep/b.md"]
    assert search("docs/**") == ["docs/a.md", "docs/deep", "docs/deep/b.md", "docs/deep/c.txt"]
    assert search("**/*.{md,txt}", excludePatterns=["docs/deep"]) == [
        ".hidden.md", "abc-open.txt", "abc.txt", "bad.txt", "big.txt", "crlf.txt", "docs/a.md",
        "empty.txt", "euro.txt"]
    assert search("*.nothing") == []
    assert server.text("search_files", {"path": "docs/deep", "pattern": "*"}) == (
        f"{root}/docs/deep/b.md\n{root}/docs/deep/c.txt")


def test_list_allowed_directories(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    (real / "sub" / "f.txt").write_text("f\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "g.txt").write_text("g\n")
    (tmp_path / "alias").symlink_to(real)
    with RawClient(str(tmp_path / "alias"), str(other)) as client:
        assert client.text("list_allowed_directories", {}) == f"Allowed directories:\n{real}\n{other}"
        # the root may be named in the form it was given, or resolved; relative paths try each root
        assert client.text("read_text_file", {"path": f"{tmp_path}/alias/sub/f.txt"}) == "f\n"
        assert client.text("read_text_file", {"path": f"{real}/sub/f.txt"}) == "f\n"
        assert client.text("read_text_file", {"path": "g.txt"}) == "g\n"


def test_stdout_is_protocol_only_and_logs_go_to_stderr() -> None:
    client = RawClient()  # every stdout line must decode as JSON-RPC, or the driver fails
    assert client.error("list_allowed_directories", {}) == NO_ROOTS
    log = client.stderr()
    assert client.close() == 0  # EOF on stdin ends the session cleanly
    assert "toolrelay files: no ROOT given: serving only the directories the client declares as roots" in log
