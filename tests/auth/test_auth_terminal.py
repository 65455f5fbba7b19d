"""At a terminal, a command that meets a server needing a sign-in offers it: the person
answers, opens the URL (here an HTTP client following it, as a browser would; ``BROWSER``
is ``true``, so nothing else opens), and the command goes on with the server."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import httpx2
from auth_helpers import assert_no_secret, stored_files, write_config

from testkit.oauth_servers import OAuthServers
from testkit.processes import spawned


def _read_until(fd: int, wanted: str, seen: list[str], timeout: float = 60) -> str:
    """Terminal output until ``wanted`` shows (all of it kept in ``seen``)."""
    ends = time.monotonic() + timeout
    while wanted not in "".join(seen):
        ready, _, _ = select.select([fd], [], [], max(0.0, ends - time.monotonic()))
        if not ready:
            raise AssertionError(f"no {wanted!r} on the terminal: {''.join(seen)}")
        seen.append(os.read(fd, 4096).decode(errors="replace"))
    return "".join(seen)


def test_a_terminal_is_offered_the_sign_in_and_the_command_goes_on(tmp_path: Path) -> None:
    with OAuthServers() as servers:
        config = write_config(tmp_path, servers)
        environment = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "BROWSER": "true"}
        terminal, attached = os.openpty()
        command = [sys.executable, "-m", "toolrelay", "tools", "--config", str(config)]
        with spawned(command, cwd=tmp_path, env=environment, text=True, stdin=attached,
                     stdout=subprocess.PIPE, stderr=attached) as proc:
            os.close(attached)
            seen: list[str] = []
            offer = "server notes needs an OAuth sign-in. Sign in now in a browser? [Y/n] "
            _read_until(terminal, offer, seen)
            os.write(terminal, b"y\n")
            shown = _read_until(terminal, "Waiting for the sign-in to come back", seen)
            url = next(line.strip() for line in shown.splitlines() if line.strip().startswith("http"))
            assert httpx2.get(url, follow_redirects=True, timeout=30).status_code == 200
            out, _ = proc.communicate(timeout=60)
            os.close(terminal)
        assert proc.returncode == 0, "".join(seen)
        assert "notes__echo" in out
        assert len(stored_files(tmp_path)) == 1
        assert_no_secret(servers, out, "".join(seen))
