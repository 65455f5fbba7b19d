"""Fixtures of the proxy tests: a folder to serve, and a config of two real upstream servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from .proxy_helpers import ECHO, files_entry, script_entry, write_config


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    return tmp_path


@pytest.fixture
def config(workspace: Path) -> Path:
    return write_config(workspace, {"fs": files_entry(workspace), "echo": script_entry(ECHO)})
