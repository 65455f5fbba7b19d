"""The portable confinement path (no O_PATH, no /proc: macOS, BSD), run in-process here.

The same attack corpus must be denied exactly, and ordinary reads must work, when the
sandbox walks down from the root with ``openat(O_NOFOLLOW)`` instead of asking the kernel
where an open descriptor lives.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
from typing import Any

import pytest

from toolrelay.files import FileService, root_from_argument
from toolrelay.server.app import CallContext

from .helpers import DENIED, SECRET, Tree, build_tree
from .test_files_attacks import CASES, PATH_TOOLS, attack_path


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    return build_tree(tmp_path_factory.mktemp("portable"))


@pytest.fixture(scope="module")
def portable(tree: Tree) -> FileService:
    return FileService([root_from_argument(str(tree.root))], kernel_locate=False)


def call(service: FileService, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    outcome = service.call(name, arguments, CallContext(client_roots=None))
    if inspect.isawaitable(outcome):
        async def settle() -> dict[str, Any]:
            return await outcome
        return asyncio.run(settle())
    assert isinstance(outcome, dict)
    return outcome


# "~" means this test process's HOME here, not the tree's home folder
@pytest.mark.parametrize("case", [case for case in CASES if not case.startswith("home")])
@pytest.mark.parametrize("tool", PATH_TOOLS)
def test_attack_is_denied_exactly(portable: FileService, tree: Tree, tool: str, case: str) -> None:
    path = attack_path(tree, case)
    arguments = {"path": path, "pattern": "**"} if tool == "search_files" else {"path": path}
    result = call(portable, tool, arguments)
    assert result == {"content": [{"type": "text", "text": DENIED}], "isError": True}


def test_ordinary_reads_work(portable: FileService, tree: Tree) -> None:
    def text(name: str, arguments: dict[str, Any]) -> str:
        result = call(portable, name, arguments)
        assert not result.get("isError"), result
        return str(result["content"][0]["text"])

    assert text("read_text_file", {"path": "notes.txt", "tail": 2}) == "two\nthree\n"
    assert text("read_text_file", {"path": "link_in", "head": 1}) == "one\n"
    assert text("read_text_file", {"path": f"{tree.root}/sub/deeper/../inner.txt"}) == "inner\n"
    assert text("list_directory", {"path": "sub"}) == "[DIR] deeper\n[FILE] inner.txt\n[FILE] link_chain3"
    assert text("list_directory", {"path": ""}).startswith("[FILE] dangling_out\n[FILE] fifo\n")
    found = text("search_files", {"path": ".", "pattern": "**/*.txt"}).split("\n")
    assert found == [f"{tree.root}/notes.txt", f"{tree.root}/sub/inner.txt"]
    assert text("get_file_info", {"path": "sub"}).split("\n")[4] == "isDirectory: true"
    wire = json.dumps([call(portable, "search_files", {"path": ".", "pattern": "**"})])
    assert SECRET not in wire and str(tree.outside) not in wire


@pytest.mark.parametrize(("name", "kind"), [("fifo", "a FIFO"), ("sock", "a socket")])
def test_special_files_are_not_regular(portable: FileService, name: str, kind: str) -> None:
    result = call(portable, "read_text_file", {"path": name})
    assert result["content"][0]["text"] == f"Not a regular file: {name} ({kind})"


def test_missing_and_dangling(portable: FileService, tree: Tree) -> None:
    result = call(portable, "read_text_file", {"path": "nope.txt"})
    assert result["content"][0]["text"] == "No such file or directory: nope.txt"
    os.symlink(tree.root / "never.txt", tree.root / "gone")
    try:
        result = call(portable, "read_text_file", {"path": "gone"})
        assert result["content"][0]["text"] == "No such file or directory: gone"
    finally:
        os.unlink(tree.root / "gone")
