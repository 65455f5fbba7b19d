"""Roots from the config and toolrelay's own file server together: the server narrows the
directories it was started with to the client's roots, and follows a change of them. Roots
are declared only where the user names them (the config's ``roots``, ``--root``): a file
server started on a directory keeps it whatever the current directory, both toolrelay's
and the Node reference server (which replaces its directories with a client's roots)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from conftest import PYTHON
from toolrelay.client.config import load_config
from toolrelay.client.connection import Connection
from toolrelay.events import EventStream


def test_the_file_server_narrows_to_the_configured_roots_and_follows_their_change(tmp_path: Path) -> None:
    served = tmp_path / "served"
    (served / "notes").mkdir(parents=True)
    (served / "notes" / "in.txt").write_text("inside\n")
    (served / "out.txt").write_text("outside\n")
    config_file = tmp_path / "mcp.json"
    entry = {"command": PYTHON, "args": ["-m", "toolrelay", "files", str(served)],
             "toolrelay": {"roots": ["served/notes"]}}  # relative: against the config's folder
    config_file.write_text(json.dumps({"mcpServers": {"files": entry}}))
    [config] = load_config(config_file, environ={})

    async def scenario() -> list[tuple[bool, str]]:
        seen = []
        connection = Connection(config, EventStream(), log_dir=tmp_path)
        await connection.start()
        try:
            for path in (served / "notes" / "in.txt", served / "out.txt"):
                result = (await connection.call_tool("read_text_file", {"path": str(path)})).result or {}
                seen.append((bool(result.get("isError")), result["content"][0]["text"]))
            connection.set_roots([served])  # the server is told, and asks again
            result = (await connection.call_tool("read_text_file", {"path": str(served / "out.txt")})).result
            seen.append((bool((result or {}).get("isError")), (result or {})["content"][0]["text"]))
        finally:
            await connection.close()
        return seen

    inside, outside, widened = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert inside == (False, "inside\n")
    assert outside == (True, "Access denied - path outside allowed directories")
    assert widened == (False, "outside\n")


@pytest.fixture(params=["toolrelay files", "node reference server"])
def file_server(request: pytest.FixtureRequest) -> list[str]:
    """The command that starts a file server on the directories appended to it."""
    if request.param == "toolrelay files":
        return [PYTHON, "-m", "toolrelay", "files"]
    node: list[str] = request.getfixturevalue("node_fs_server")
    return node


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A served directory with a file and a subdirectory, and the current directory (``elsewhere``)
    with a file of its own, outside what is served."""
    (tmp_path / "data" / "sub").mkdir(parents=True)
    (tmp_path / "data" / "top.txt").write_text("top\n")
    (tmp_path / "data" / "sub" / "deep.txt").write_text("deep\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "here.txt").write_text("here\n")
    return tmp_path / "data"


def read(server: list[str], data: Path, path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """``toolrelay call fs__read_text_file`` from the directory beside ``data``, with a
    Claude Desktop style config that starts ``server`` on ``data`` (no ``roots`` key)."""
    cwd = data.parent / "elsewhere"
    entry = {"command": server[0], "args": [*server[1:], str(data)]}
    (cwd / "mcp.json").write_text(json.dumps({"mcpServers": {"fs": entry}}))
    arguments = json.dumps({"path": str(path)})
    command = [PYTHON, "-m", "toolrelay", "call", "fs__read_text_file", arguments, "--config", "mcp.json"]
    return subprocess.run([*command, *options], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_without_roots_a_server_keeps_the_directory_it_was_started_on(file_server: list[str],
                                                                     data: Path) -> None:
    served = read(file_server, data, data / "top.txt")
    assert (served.returncode, served.stdout.splitlines()[0]) == (0, "top"), served.stderr
    here = read(file_server, data, data.parent / "elsewhere" / "here.txt")
    assert here.returncode == 1
    assert "Access denied - path outside allowed directories" in here.stdout


def test_root_tells_every_server_the_directories_named(file_server: list[str], data: Path) -> None:
    inside = read(file_server, data, data / "sub" / "deep.txt", "--root", str(data / "sub"))
    assert (inside.returncode, inside.stdout.splitlines()[0]) == (0, "deep"), inside.stderr
    beside = read(file_server, data, data / "top.txt", "--root", str(data / "sub"))
    assert beside.returncode == 1
    assert "Access denied - path outside allowed directories" in beside.stdout
