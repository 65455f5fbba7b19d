"""Client roots in detail, with the raw driver: which URIs count, caching, narrowing rules."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from toolrelay.files.roots import DISJOINT_CLIENT_ROOTS, UNUSABLE_CLIENT_ROOTS, narrow
from toolrelay.files.sandbox import Root

from .helpers import DENIED, RawClient


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for folder in ("a/inner", "b", "with space"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "a" / "x.txt").write_text("x\n")
    (tmp_path / "a" / "inner" / "z.txt").write_text("z\n")
    (tmp_path / "b" / "y.txt").write_text("y\n")
    (tmp_path / "with space" / "s.txt").write_text("s\n")
    (tmp_path / "link-to-b").symlink_to(tmp_path / "b")
    return tmp_path


def test_unusable_uris_are_ignored(tree: Path) -> None:
    roots = ["https://example.com/a", "file://otherhost/a", "file:relative", f"file://{tree}/missing",
             (tree / "a" / "x.txt").as_uri(), (tree / "b").as_uri()]
    with RawClient(roots=roots) as client:
        assert client.text("list_allowed_directories", {}) == f"Allowed directories:\n{tree / 'b'}"
        log = client.stderr()
    assert "ignoring client root 'https://example.com/a': not a local file:// URI" in log
    assert f"ignoring client root '{(tree / 'a' / 'x.txt').as_uri()}': not a directory" in log


def test_only_unusable_uris_leave_nothing(tree: Path) -> None:
    with RawClient(str(tree), roots=["https://example.com/"]) as client:
        assert client.error("read_text_file", {"path": "a/x.txt"}) == UNUSABLE_CLIENT_ROOTS


def test_client_roots_are_resolved_and_decoded(tree: Path) -> None:
    spaced = f"file://{quote(str(tree / 'with space'))}"
    with RawClient(str(tree), roots=[(tree / "link-to-b").as_uri(), spaced]) as client:
        assert client.text("list_allowed_directories", {}) == (
            f"Allowed directories:\n{tree / 'b'}\n{tree / 'with space'}")
        assert client.text("read_text_file", {"path": "y.txt"}) == "y\n"
        assert client.text("read_text_file", {"path": f"{tree}/link-to-b/y.txt"}) == "y\n"
        assert client.text("read_text_file", {"path": "s.txt"}) == "s\n"
        assert client.error("read_text_file", {"path": f"{tree}/a/x.txt"}) == DENIED


def test_roots_are_asked_once_and_again_after_list_changed(tree: Path) -> None:
    with RawClient(str(tree), roots=[(tree / "a").as_uri()]) as client:
        for _ in range(3):
            assert client.text("read_text_file", {"path": "x.txt"}) == "x\n"
        assert client.roots_requests == 1
        client.set_roots([(tree / "a" / "inner").as_uri()])
        assert client.error("read_text_file", {"path": f"{tree}/a/x.txt"}) == DENIED
        assert client.text("read_text_file", {"path": "z.txt"}) == "z\n"
        assert client.roots_requests == 2


def test_client_root_outside_is_disjoint(tree: Path) -> None:
    with RawClient(str(tree / "a"), roots=[(tree / "b").as_uri(), "file:///"]) as client:
        # "/" contains the server's root, so the intersection is the server's root itself
        assert client.text("list_allowed_directories", {}) == f"Allowed directories:\n{tree / 'a'}"
    with RawClient(str(tree / "a"), roots=[(tree / "b").as_uri()]) as client:
        assert client.error("list_directory", {"path": "."}) == DISJOINT_CLIENT_ROOTS


def test_empty_client_list_keeps_the_command_line_roots(tree: Path) -> None:
    with RawClient(str(tree / "a"), roots=[]) as client:
        assert client.text("read_text_file", {"path": "x.txt"}) == "x\n"


def _root(path: str) -> Root:
    return Root(real=path, given=path)


@pytest.mark.parametrize(("server", "client", "expected"), [
    (["/data"], ["/data/project"], ["/data/project"]),
    (["/data/project"], ["/data"], ["/data/project"]),
    (["/data"], ["/data-evil"], []),  # a sibling with the same prefix is not inside
    (["/data", "/srv"], ["/srv/x", "/data", "/other"], ["/srv/x", "/data"]),
    (["/data"], ["/data/a", "/data/a/b", "/data/a"], ["/data/a"]),  # nested repeats folded
    (["/"], ["/data"], ["/data"]),
])
def test_narrow_is_the_intersection_of_subtrees(
    server: list[str], client: list[str], expected: list[str]
) -> None:
    found = narrow([_root(path) for path in server], [_root(path) for path in client])
    assert [root.real for root in found] == expected
