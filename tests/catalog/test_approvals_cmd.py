"""``toolrelay approvals [list|forget] [SERVER [TOOL]] [--config F] [--json]`` (issue 26):
the consent answers saved for later runs, read from and dropped in
``$XDG_STATE_HOME/toolrelay/approvals/``. An approval saved at a real terminal (``s``) is
listed; forgotten, the tool is asked about again (a later run without a terminal refuses
it). Unknown servers and tools are usage errors naming what is saved. Real subprocesses,
each test with a state folder of its own."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testkit.processes import run, spawned
from testkit.servers import RUG_SERVER
from toolrelay.cli.consent import CALL_QUESTION
from toolrelay.client.config import ServerConfig
from toolrelay.relay.approvals import ApprovalStore
from toolrelay.relay.catalog import servers_from

PLAN = {"turns": [{"calls": [{"name": "notes__write_note", "arguments": {"name": "n1", "text": "x"}}]},
                  {"message": "done"}]}


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "toolrelay", *args], text=True, timeout=60, cwd=cwd,
               stdin=subprocess.DEVNULL)


def rug_config(folder: Path, **servers: list[str]) -> dict[str, ServerConfig]:
    """The rug server under each name (its args after the script: another identity)."""
    entries = {name: {"command": sys.executable, "args": [str(RUG_SERVER), *extra]}
               for name, extra in servers.items()}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": entries}))
    return {server.name: server for server in servers_from(folder / "mcp.json")}


def asked(fd: int, seen: list[str], timeout: float = 60) -> None:
    """Terminal output until the consent question shows (all of it kept in ``seen``)."""
    ends = time.monotonic() + timeout
    while CALL_QUESTION not in "".join(seen):
        ready, _, _ = select.select([fd], [], [], max(0.0, ends - time.monotonic()))
        if not ready:
            raise AssertionError(f"no question on the terminal: {''.join(seen)}")
        seen.append(os.read(fd, 4096).decode(errors="replace"))


def saved_on(servers: dict[str, ServerConfig], **tools: list[str]) -> None:
    store = ApprovalStore()
    for name, names in tools.items():
        for tool in names:
            store.save(servers[name], tool, f"sha256:{tool}")


def test_an_approval_saved_at_the_terminal_is_listed_and_forgotten(tmp_path: Path,
                                                                   private_state: Path) -> None:
    rug_config(tmp_path, notes=[])
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    terminal, attached = os.openpty()
    command = [sys.executable, "-m", "toolrelay", "run", "go", "--config", "mcp.json", "--model", "offline",
               "--script", str(plan), "--json"]
    with spawned(command, cwd=tmp_path, text=True, stdin=attached, stdout=subprocess.PIPE,
                 stderr=attached) as proc:
        os.close(attached)
        seen: list[str] = []
        asked(terminal, seen)
        os.write(terminal, b"s\n")
        proc.communicate(timeout=60)
        os.close(terminal)
    assert proc.returncode == 0, "".join(seen)

    listed = cli("approvals", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()
    assert header.split() == ["SERVER", "TOOL", "SAVED", "TARGET"]
    assert row.split()[:2] == ["notes", "write_note"]  # then when, and the command line (cut to the width)
    assert row.split()[2].startswith(time.strftime("%Y-%m-%dT", time.gmtime()))
    (entry,) = json.loads(cli("approvals", "list", "notes", "--json", cwd=tmp_path).stdout)
    assert (entry["server"], entry["tool"], entry["target"]) == ("notes", "write_note",
                                                                 f"{sys.executable} {RUG_SERVER}")
    assert entry["digest"].startswith("sha256:") and Path(entry["file"]).parent == (
        private_state / "toolrelay" / "approvals")

    forgot = cli("approvals", "forget", "notes", "write_note", cwd=tmp_path)
    assert (forgot.returncode, forgot.stdout) == (
        0, "forgot the saved approvals of notes: write_note (asked about again)\n")
    assert not Path(entry["file"]).exists()
    assert cli("approvals", cwd=tmp_path).stdout.startswith("no saved approvals (in ")
    later = cli("run", "go", "--config", "mcp.json", "--model", "offline", "--script", str(plan), "--json",
                cwd=tmp_path)
    assert [call["status"] for call in json.loads(later.stdout)["calls"]] == ["not_approved"]


def test_forget_one_tool_keeps_the_others(tmp_path: Path, private_state: Path) -> None:
    servers = rug_config(tmp_path, notes=[], other=[])
    saved_on(servers, notes=["write_note", "erase_note"], other=["write_note"])
    done = cli("approvals", "forget", "notes", "erase_note", "--json", cwd=tmp_path)
    assert json.loads(done.stdout) == {"server": "notes", "forgotten": ["erase_note"]}
    left = [(e["server"], e["tool"]) for e in json.loads(cli("approvals", "--json", cwd=tmp_path).stdout)]
    assert left == [("notes", "write_note"), ("other", "write_note")]
    assert ApprovalStore().load(servers["notes"]) == {"write_note": "sha256:write_note"}


def test_config_narrows_to_its_servers_as_configured_now(tmp_path: Path, private_state: Path) -> None:
    servers = rug_config(tmp_path, notes=[], other=[])
    saved_on(servers, notes=["write_note"], other=["write_note"])
    rug_config(tmp_path, notes=["--started-another-way"], other=[])  # notes: another identity now
    shown = json.loads(cli("approvals", "--config", "mcp.json", "--json", cwd=tmp_path).stdout)
    assert [(e["server"], e["tool"]) for e in shown] == [("other", "write_note")]
    everything = json.loads(cli("approvals", "--json", cwd=tmp_path).stdout)
    assert [e["server"] for e in everything] == ["notes", "other"]


@pytest.mark.parametrize(("args", "said"), [
    (["forget", "nope"], "no saved approvals for server 'nope' (saved for: notes; in "),
    (["list", "nope", "--json"], "no saved approvals for server 'nope' (saved for: notes; in "),
    (["forget", "notes", "read_note"], "server notes has no saved approval of tool 'read_note' (saved: "
     "write_note)"),
    (["forget", "nope", "--config", "mcp.json"], "no server 'nope' in mcp.json (servers: notes)"),
], ids=["forget-server", "list-server", "forget-tool", "config-server"])
def test_an_unknown_server_or_tool_is_a_usage_error(tmp_path: Path, private_state: Path, args: list[str],
                                                     said: str) -> None:
    saved_on(rug_config(tmp_path, notes=[]), notes=["write_note"])
    done = cli("approvals", *args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"toolrelay approvals: error: {said}")


def test_an_unreadable_file_is_named(tmp_path: Path, private_state: Path) -> None:
    folder = private_state / "toolrelay" / "approvals"
    folder.mkdir(parents=True)
    (folder / "notes-0123.json").write_text("{not json")
    done = cli("approvals", cwd=tmp_path)
    assert done.returncode == 2
    said = ("toolrelay approvals: error: cannot read the saved approvals of a server in "
            f"{folder}/notes-0123.json")
    assert done.stderr.startswith(said) and done.stderr.rstrip().endswith("move it away")
