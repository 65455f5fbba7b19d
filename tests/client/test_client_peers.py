"""The client against other implementations over stdio: the official SDK's server, the Node
reference file server, and toolrelay's own file server."""

from __future__ import annotations

from pathlib import Path

from client_helpers import Recorder, open_connection, run, stdio_config

from conftest import REPO, require_or_skip
from toolrelay.client.config import ServerConfig, builtin_file_server


def test_sdk_server_over_stdio(tmp_path: Path) -> None:
    recorder = Recorder()
    changed: list[str] = []

    async def scenario() -> list[str]:
        config = stdio_config("sdk_server.py", "stdio", name="sdk", roots=(str(tmp_path),))
        # the 2025 session's features (server requests mid-call, list_changed): pinned to it
        async with open_connection(config, tmp_path, recorder, protocol_version="2025-11-25") as conn:
            conn.on_tools_changed = changed.append
            assert (conn.protocol_version, conn.server_info["name"]) == ("2025-11-25", "sdk-test")
            assert conn.instructions == "SDK test server."
            texts = [tool["name"] for tool in await conn.list_tools()]
            for tool, arguments in (("echo", {"text": "sdk"}), ("chatty", {"text": "hey"}),
                                    ("ping_client", {}), ("ask_roots", {})):
                texts.append((await conn.call_tool(tool, arguments)).raise_for_error()["content"][0]["text"])
            unknown = (await conn.call_tool("no_such_tool", {})).raise_for_error()  # SDK 2.3: isError
            texts.append(f"{unknown['isError']}: {unknown['content'][0]['text']}")
            return texts

    texts = run(scenario())
    assert texts[:6] == ["echo", "add", "slow", "chatty", "ping_client", "ask_roots"]
    assert texts[6:9] == ["sdk", "hey", "client answered ping"]
    assert texts[9] == "roots answered"  # toolrelay offers the roots named
    assert texts[10] == "True: Unknown tool: no_such_tool"
    assert changed == ["sdk"]
    assert "mcp_server_request" in recorder.kinds() and "mcp_reply" in recorder.kinds()


def test_node_reference_file_server(tmp_path: Path, node_fs_server: list[str]) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    # the Node server narrows itself to the client's roots: offer it the folder it serves
    config = ServerConfig(name="nodefs", transport="stdio", command=node_fs_server[0],
                          args=(*node_fs_server[1:], str(tmp_path)), roots=[str(tmp_path)])

    async def scenario() -> tuple[list[str], dict, str]:
        async with open_connection(config, tmp_path / "logs") as conn:
            names = [tool["name"] for tool in await conn.list_tools()]
            result = (await conn.call_tool("read_text_file", {"path": str(tmp_path / "notes.txt")},
                                           call_id="call_n")).raise_for_error()
            return names, result, conn.stderr_tail()

    names, result, tail = run(scenario())
    assert "read_text_file" in names and "list_allowed_directories" in names
    assert result["content"][0]["text"] == "alpha\nbeta\ngamma\n"
    assert "Secure MCP Filesystem Server running on stdio" in tail


def test_toolrelay_file_server(tmp_path: Path) -> None:
    if not (REPO / "src/toolrelay/cli/files_cmd.py").exists():
        require_or_skip("toolrelay files is not built yet")
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\nthree\n")

    async def scenario() -> tuple[list[str], dict, dict]:
        async with open_connection(builtin_file_server(root), tmp_path / "logs") as conn:
            names = [tool["name"] for tool in await conn.list_tools()]
            arguments = {"path": str(root / "a.txt"), "head": 2}
            head = (await conn.call_tool("read_text_file", arguments)).raise_for_error()
            outside = (await conn.call_tool("read_text_file", {"path": "/etc/passwd"})).raise_for_error()
            return names, head, outside

    names, head, outside = run(scenario())
    assert "read_text_file" in names
    assert head["content"][0]["text"] == "one\ntwo\n"  # what `head -n 2` prints
    assert outside.get("isError") is True
