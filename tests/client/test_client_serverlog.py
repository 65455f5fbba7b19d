"""A stdio server's stderr log file: private to the user (it may hold printed secrets)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from client_helpers import open_connection, run, stdio_config


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_servers_log_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    config = stdio_config("toolbox_server.py", "--stderr", "token=sk-live-0123456789")
    previous = os.umask(0o022)  # the usual umask: new files would be 0644
    try:
        async def scenario() -> None:
            async with open_connection(config, log_dir):
                pass

        run(scenario())
    finally:
        os.umask(previous)
    log_file = log_dir / "t.log"
    assert "token=sk-live-0123456789" in log_file.read_text()
    assert _mode(log_file) == 0o600
    assert _mode(log_dir) == 0o700


def test_a_log_file_left_readable_by_an_older_version_is_made_private(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    old = log_dir / "t.log"
    old.write_text("an earlier run\n")
    old.chmod(0o644)

    async def scenario() -> None:
        async with open_connection(stdio_config("minimal_echo_server.py"), log_dir):
            pass

    run(scenario())
    assert _mode(old) == 0o600
    assert old.read_text().startswith("an earlier run\n")
