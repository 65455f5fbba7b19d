"""No gap between check and open: a directory swapped for a link mid-call never leaks.

Deterministically: the folder is swapped between ``locate`` and ``reopen``, and what is
read is still the checked file. Under load: a thread keeps swapping ``root/swap`` between
a real folder and a symlink to an outside folder holding SECRET, while the client reads
through it. Every answer must be the inside text, the denial, or "not found" (the moment
between the swaps) — never SECRET, never an internal error.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import require_or_skip
from toolrelay.files import FileService, root_from_argument
from toolrelay.files.failures import ToolFailure
from toolrelay.files.sandbox import KERNEL_LOCATE, Sandbox
from toolrelay.server.app import CallContext

from .helpers import DENIED, SECRET, RawClient

CALLS = 300


def _swap_layout(tmp_path: Path) -> tuple[Path, Path]:
    """root/swap/f.txt says "inside"; outside/f.txt holds SECRET (where a swapped link leads)."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "swap").mkdir(parents=True)
    outside.mkdir()
    (root / "swap" / "f.txt").write_text("inside\n")
    (outside / "f.txt").write_text(f"{SECRET}\n")
    return root, outside


@pytest.fixture
def swapping(tmp_path: Path) -> Iterator[Path]:
    root, outside = _swap_layout(tmp_path)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            os.rename(root / "swap", root / "parked")
            os.symlink(outside, root / "swap")
            os.unlink(root / "swap")
            os.rename(root / "parked", root / "swap")

    thread = threading.Thread(target=swap)
    thread.start()
    try:
        yield root
    finally:
        stop.set()
        thread.join()


def _allowed(text: str) -> bool:
    return text in ("inside\n", "[FILE] f.txt", DENIED) or text.startswith(
        ("No such file or directory", "size: 7\n")
    )


def test_swap_race_over_stdio(swapping: Path) -> None:
    with RawClient(str(swapping)) as client:
        texts = [
            client.call("read_text_file", {"path": "swap/f.txt", "head": 5})["content"][0]["text"]
            for _ in range(CALLS)
        ]
    assert not any(SECRET in text for text in texts)
    assert all(_allowed(text) for text in texts), {text for text in texts if not _allowed(text)}


@pytest.mark.parametrize(
    ("tool", "path"),
    [("read_text_file", "swap/f.txt"), ("get_file_info", "swap/f.txt"), ("list_directory", "swap")],
)
def test_swap_race_on_the_portable_path(swapping: Path, tool: str, path: str) -> None:
    service = FileService([root_from_argument(str(swapping))], kernel_locate=False)
    context = CallContext(client_roots=None)
    texts = []
    for _ in range(CALLS):
        result = service.call(tool, {"path": path}, context)
        assert isinstance(result, dict)
        texts.append(result["content"][0]["text"])
    assert not any(SECRET in text for text in texts)
    assert all(_allowed(text) for text in texts), {text for text in texts if not _allowed(text)}


def test_a_link_that_turns_into_a_folder_while_resolving_is_denied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """realpath's readlink meets a folder (EINVAL) when a link is swapped back mid-walk."""
    (tmp_path / "f.txt").write_text("inside\n")
    sandbox = Sandbox([root_from_argument(str(tmp_path))], kernel_locate=False)

    def swapped_mid_walk(path: str, *, strict: bool = False) -> str:
        raise OSError(errno.EINVAL, "Invalid argument", path)

    monkeypatch.setattr("toolrelay.files.sandbox.os.path.realpath", swapped_mid_walk)
    with pytest.raises(ToolFailure) as raised:
        sandbox.locate("f.txt")
    assert raised.value.message == DENIED


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "portable"])
def test_what_was_checked_is_what_is_opened(tmp_path: Path, kernel: bool) -> None:
    """Deterministic: swap the folder for an outside link between locate() and reopen()."""
    if kernel and not KERNEL_LOCATE:
        require_or_skip("O_PATH and /proc/self/fd are Linux-only")
    root, outside = _swap_layout(tmp_path)
    sandbox = Sandbox([root_from_argument(str(root))], kernel_locate=kernel)
    located = sandbox.locate("swap/f.txt")
    os.rename(root / "swap", root / "parked")
    os.symlink(outside, root / "swap")
    try:
        fd = sandbox.reopen(located, os.O_RDONLY, "swap/f.txt")
    finally:
        located.close()
    with os.fdopen(fd) as handle:
        assert handle.read() == "inside\n"  # the checked file, now at parked/f.txt
    with pytest.raises(ToolFailure) as raised:  # asked afresh, the path now leads outside
        sandbox.locate("swap/f.txt")
    assert raised.value.message == DENIED


def test_a_folder_swapped_during_the_portable_walk_is_denied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """realpath saw a folder; by the walk it is a link: the answer is the denial, not ENOTDIR."""
    root, outside = _swap_layout(tmp_path)
    sandbox = Sandbox([root_from_argument(str(root))], kernel_locate=False)
    resolve = os.path.realpath

    calls = []

    def resolve_then_swap(path: str, *, strict: bool = False) -> str:
        """First resolution: then swap to the link. Any later one: swap back first."""
        calls.append(path)
        if len(calls) > 1 and (root / "swap").is_symlink():
            os.unlink(root / "swap")
            os.rename(root / "parked", root / "swap")
        real = resolve(path, strict=strict)
        if len(calls) == 1:
            os.rename(root / "swap", root / "parked")
            os.symlink(outside, root / "swap")
        return real

    monkeypatch.setattr("toolrelay.files.sandbox.os.path.realpath", resolve_then_swap)
    with pytest.raises(ToolFailure) as raised:
        sandbox.locate("swap/f.txt")
    assert raised.value.message == DENIED
