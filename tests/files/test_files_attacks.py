"""The attack corpus: every path trick from the reject list, against every path tool.

Each case must answer exactly ``Access denied - path outside allowed directories`` (or,
for read_multiple_files, that text for the path) and no byte of an outside file — all of
which hold SECRET — may appear anywhere in any answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from .helpers import DENIED, SECRET, RawClient, Tree, build_tree


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    return build_tree(tmp_path_factory.mktemp("attacks"))


@pytest.fixture(scope="module")
def server(tree: Tree) -> Iterator[RawClient]:
    with RawClient(str(tree.root), env={"HOME": str(tree.home)}) as client:
        yield client


# case → path ({root} and {outside} are the tree's folders)
ATTACKS = {
    "dotdot relative": "../outside/secret.txt",
    "dotdot embedded": "sub/../../outside/secret.txt",
    "dotdot deep": "sub/deeper/../../../outside/secret.txt",
    "dotdot absolute": "{root}/../outside/secret.txt",
    "absolute outside": "{outside}/secret.txt",
    "absolute outside dir": "{outside}",
    "etc passwd": "/etc/passwd",
    "double slash": "//etc/passwd",
    "dot slash": "/./etc/passwd",
    "root parent": "/..",
    "symlink file out": "link_out",
    "symlink chain out": "link_chain1",
    "symlink dir out": "link_dir_out",
    "through symlink dir": "link_dir_out/secret.txt",
    "dotdot after symlink": "link_dir_out/../outside/secret.txt",
    "symlink loop": "loop_a",
    "through symlink loop": "loop_a/x",
    "dangling out": "dangling_out",
    "device behind symlink": "zero",
    "nul byte": "notes.txt\x00.png",
    "nul byte outside": "{outside}/secret.txt\x00",
    "sibling prefix": "{root}-evil/secret.txt",
    "sibling prefix dir": "{root}-evil",
    "quote suffix": "{root}'",
    "quote suffix file": "{root}'/secret.txt",
    "trailing space": "{root} ",
    "trailing space file": "{root} /secret.txt",
    "home tilde": "~/secret.txt",
    "home tilde alone": "~",
    "tilde user": "~root/secret.txt",
}
CASES = list(ATTACKS)


def attack_path(tree: Tree, case: str) -> str:
    return ATTACKS[case].format(root=tree.root, outside=tree.outside)


PATH_TOOLS = ["read_text_file", "list_directory", "get_file_info", "search_files"]


def _arguments(tool: str, path: str) -> dict[str, object]:
    return {"path": path, "pattern": "**"} if tool == "search_files" else {"path": path}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("tool", PATH_TOOLS)
def test_attack_is_denied_exactly(server: RawClient, tree: Tree, tool: str, case: str) -> None:
    path = attack_path(tree, case)
    started = time.monotonic()
    result = server.call(tool, _arguments(tool, path))
    assert time.monotonic() - started < 5  # answered at once: nothing blocked (FIFO, device)
    assert result == {"content": [{"type": "text", "text": DENIED}], "isError": True}


@pytest.mark.parametrize("case", CASES)
def test_attack_is_denied_in_read_multiple_files(server: RawClient, tree: Tree, case: str) -> None:
    path = attack_path(tree, case)
    text = server.text("read_multiple_files", {"paths": [path, "notes.txt"]})
    assert text == f"{path}: Error - {DENIED}\n---\nnotes.txt:\none\ntwo\nthree\n\n"
    assert SECRET not in text


def test_no_answer_ever_held_a_secret(server: RawClient, tree: Tree) -> None:
    """Every tool over every case, plus the whole tree listed and searched: no SECRET anywhere."""
    answers = []
    for path in (attack_path(tree, case) for case in CASES):
        for tool in PATH_TOOLS:
            answers.append(server.call(tool, _arguments(tool, path)))
        answers.append(server.call("read_text_file", {"path": path, "head": 1}))
        answers.append(server.call("read_text_file", {"path": path, "tail": 1}))
    answers.append(server.call("search_files", {"path": str(tree.root), "pattern": "**"}))
    answers.append(server.call("list_directory", {"path": "."}))
    answers.append(server.call("list_allowed_directories", {}))
    wire = json.dumps(answers)
    assert SECRET not in wire
    assert str(tree.outside) not in wire  # not even the outside paths are echoed
    assert str(tree.home) not in wire


def test_search_offers_only_what_resolves_inside(server: RawClient, tree: Tree) -> None:
    found = set(server.text("search_files", {"path": ".", "pattern": "**"}).split("\n"))
    root = str(tree.root)
    assert f"{root}/link_in" in found and f"{root}/link_dir_in" in found  # links that stay inside
    assert f"{root}/sub/deeper" in found and f"{root}/notes.txt" in found
    for name in ("link_out", "link_chain1", "link_chain2", "sub/link_chain3", "link_dir_out",
                 "loop_a", "loop_b", "dangling_out", "zero"):
        assert f"{root}/{name}" not in found
    assert not any("secret.txt" in path for path in found)  # link_dir_out is never entered


def test_quoted_root_is_taken_literally(server: RawClient, tree: Tree) -> None:
    """A quoted absolute path is a relative name inside the root, never unquoted into the root."""
    for path in (f'"{tree.root}"', f"'{tree.root}'", f'"{tree.root}/../outside/secret.txt"'):
        message = server.error("read_text_file", {"path": path})
        assert message == f"No such file or directory: {path}"
        assert server.error("list_directory", {"path": path}) == f"No such file or directory: {path}"


def test_literal_names_that_look_like_tricks(server: RawClient) -> None:
    for path in ("%2e%2e/outside/secret.txt", "..\\outside\\secret.txt", " notes.txt", "notes.txt "):
        assert server.error("read_text_file", {"path": path}) == f"No such file or directory: {path}"


def test_links_inside_the_root_are_followed(server: RawClient, tree: Tree) -> None:
    assert server.text("read_text_file", {"path": "link_in"}) == "one\ntwo\nthree\n"
    assert server.text("list_directory", {"path": "link_dir_in"}) == ""
    assert server.text("read_text_file", {"path": "sub/deeper/../inner.txt"}) == "inner\n"
    assert server.text("read_text_file", {"path": f"{tree.root}/sub/../notes.txt", "head": 1}) == "one\n"


@pytest.mark.parametrize(("name", "kind"), [("fifo", "a FIFO"), ("sock", "a socket"), ("sub", "a directory")])
def test_special_files_are_not_regular(server: RawClient, name: str, kind: str) -> None:
    for arguments in ({"path": name}, {"path": name, "head": 1}, {"path": name, "tail": 1}):
        started = time.monotonic()
        assert server.error("read_text_file", arguments) == f"Not a regular file: {name} ({kind})"
        assert time.monotonic() - started < 5


def test_special_files_can_be_described_without_opening(server: RawClient) -> None:
    started = time.monotonic()
    info = server.text("get_file_info", {"path": "fifo"}).split("\n")
    assert time.monotonic() - started < 5
    assert info[4:6] == ["isDirectory: false", "isFile: false"]


def test_device_inside_a_root_is_not_a_regular_file(tree: Tree) -> None:
    """/dev/zero behind a link, with /dev also allowed: refused at once, never read."""
    with RawClient(str(tree.root), "/dev") as client:
        started = time.monotonic()
        for arguments in ({"path": "zero"}, {"path": "zero", "head": 1}, {"path": "/dev/zero", "tail": 1}):
            message = client.error("read_text_file", arguments)
            assert message == f"Not a regular file: {arguments['path']} (a character device)"
        assert time.monotonic() - started < 5


def test_dangling_link_inside_is_not_found(tree: Tree, tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("dangling")
    (root / "gone").symlink_to(root / "never-created.txt")
    with RawClient(str(root)) as client:
        assert client.error("read_text_file", {"path": "gone"}) == "No such file or directory: gone"


def test_tilde_is_expanded_then_checked(tree: Tree) -> None:
    """~ means the server's HOME: allowed when HOME lies inside a root."""
    with RawClient(str(tree.root), env={"HOME": str(tree.root / "sub")}) as client:
        assert client.text("read_text_file", {"path": "~/inner.txt"}) == "inner\n"
        assert client.error("read_text_file", {"path": "~/../../outside/secret.txt"}) == DENIED


def test_overlong_names_fail_cleanly(server: RawClient) -> None:
    long_name = "a" * 300
    assert server.error("read_text_file", {"path": long_name}) == f"File name too long: {long_name}"
    deep = "/".join(["b" * 200] * 30)
    assert server.error("get_file_info", {"path": deep}) == f"File name too long: {deep}"
