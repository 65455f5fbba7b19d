"""Helpers for the sign-in tests: the CLI as a subprocess with its own state directory,
and a config naming the protected server."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from testkit.oauth_servers import OAuthServers
from testkit.processes import run


def toolrelay(*args: str, home: Path, timeout: float = 60, env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it, with ``home/state`` as its state directory and no terminal."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_OPENAI_"))}
    environment = {**inherited, "XDG_STATE_HOME": str(home / "state"), **(env or {})}
    return run([sys.executable, "-m", "toolrelay", *args], cwd=home, text=True, timeout=timeout,
               env=environment)


def write_config(home: Path, servers: OAuthServers, oauth: dict[str, Any] | None = None,
                 **others: dict[str, Any]) -> Path:
    """``home/mcp.json`` naming the protected server ``notes`` (and ``others``)."""
    entry: dict[str, Any] = {"url": servers.mcp_url}
    if oauth is not None:
        entry["toolrelay"] = {"oauth": oauth}
    path = home / "mcp.json"
    home.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": {"notes": entry, **others}}), encoding="utf-8")
    return path


def stored_files(home: Path) -> list[Path]:
    return sorted((home / "state" / "toolrelay" / "oauth").rglob("*.json"))


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def assert_no_secret(servers: OAuthServers, *texts: str) -> None:
    """No token or client secret the authorization server handed out shows in ``texts`` (nor
    its printable part, for one that ends in a line break)."""
    for secret in servers.issued_secrets():
        for text in texts:
            assert secret not in text
            assert secret.strip() not in text
