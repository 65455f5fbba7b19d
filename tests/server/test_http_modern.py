"""``toolrelay files --http`` in the MCP 2026-07-28 era, on the wire: one POST per request,
no initialize, no session; the envelope and its headers checked, ``server/discover``
answered, the revision's error codes and HTTP statuses; the same Host/token/size checks
as the handshake era, whose paths are unchanged beside it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from http_helpers import BASE_HEADERS, open_session, post, rpc_error

from testkit.mcp_http import files_http_process

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
}
TOKEN = "s3cret-token"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("modern-root")
    (root / "a.txt").write_text("alpha\n", encoding="utf-8")
    with files_http_process(root, "--max-message-bytes", "65536") as served:
        yield served


@pytest.fixture()
def client() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=30) as http:
        yield http


def modern(
    client: httpx2.Client, url: str, method: str, params: dict[str, Any] | None = None, *,
    msg_id: int = 7, headers: dict[str, str] | None = None,
) -> httpx2.Response:
    """POST one modern request with the headers its body implies (overridable)."""
    params = {"_meta": META, **(params or {})}
    sent = {"mcp-protocol-version": VERSION, "mcp-method": method}
    if method == "tools/call":
        sent["mcp-name"] = str(params.get("name"))
    sent.update(headers or {})
    body = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    return post(client, url, body, headers=sent)


def test_discover_names_the_revision_the_tools_and_the_server(client: httpx2.Client, url: str) -> None:
    reply = modern(client, url, "server/discover")
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in reply.headers
    result = reply.json()["result"]
    assert result["supportedVersions"] == [VERSION]
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "toolrelay-files"
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")


def test_tools_are_listed_and_called_without_initialize(client: httpx2.Client, url: str) -> None:
    listed = modern(client, url, "tools/list").json()["result"]
    assert "read_text_file" in [tool["name"] for tool in listed["tools"]]
    assert listed["resultType"] == "complete"
    called = modern(client, url, "tools/call", {"name": "read_text_file", "arguments": {"path": "a.txt"}})
    assert called.status_code == 200
    result = called.json()["result"]
    assert result["content"][0]["text"] == "alpha\n" and result["resultType"] == "complete"
    assert called.json()["id"] == 7


@pytest.mark.parametrize("meta", [None, {"io.modelcontextprotocol/clientCapabilities": {}},
                                  {"io.modelcontextprotocol/protocolVersion": VERSION}])
def test_a_request_without_its_envelope_is_invalid_params(
    client: httpx2.Client, url: str, meta: dict[str, Any] | None
) -> None:
    params = {} if meta is None else {"_meta": meta}
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": params}
    reply = post(client, url, body, headers={"mcp-protocol-version": VERSION, "mcp-method": "tools/list"})
    assert reply.status_code == 400
    assert rpc_error(reply)["code"] == -32602 and reply.json()["id"] == 3


@pytest.mark.parametrize("headers", [
    {"mcp-protocol-version": "2025-11-25-not"}, {"mcp-method": "tools/list"}, {"mcp-name": "list_directory"},
])
def test_headers_that_contradict_the_body_are_a_mismatch(
    client: httpx2.Client, url: str, headers: dict[str, str]
) -> None:
    reply = modern(client, url, "tools/call", {"name": "read_text_file", "arguments": {"path": "a.txt"}},
                   headers=headers)
    assert reply.status_code == 400 and rpc_error(reply)["code"] == -32020


def test_an_unknown_revision_is_told_which_are_served(client: httpx2.Client, url: str) -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    reply = modern(client, url, "server/discover", {"_meta": meta},
                   headers={"mcp-protocol-version": "2099-01-01"})
    assert reply.status_code == 400
    error = rpc_error(reply)
    assert error["code"] == -32022 and error["data"] == {"supported": [VERSION], "requested": "2099-01-01"}


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel", "prompts/list", "no/such"])
def test_methods_outside_the_revision_are_not_found(client: httpx2.Client, url: str, method: str) -> None:
    reply = modern(client, url, method)
    assert reply.status_code == 404 and rpc_error(reply)["code"] == -32601


def test_get_and_delete_have_no_meaning(client: httpx2.Client, url: str) -> None:
    headers = {"accept": "text/event-stream", "mcp-protocol-version": VERSION}
    for method in ("GET", "DELETE"):
        reply = client.request(method, url, headers=headers)
        assert reply.status_code == 405 and reply.headers["allow"] == "POST"


def test_a_notification_is_acknowledged(client: httpx2.Client, url: str) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert post(client, url, note, headers={"mcp-protocol-version": VERSION}).status_code == 202


def test_the_handshake_era_is_unchanged_beside_it(client: httpx2.Client, url: str) -> None:
    session = open_session(client, url)
    tools = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert len(post(client, url, tools, session=session).json()["result"]["tools"]) == 6
    bogus = post(client, url, tools, session=session, headers={"mcp-protocol-version": "1999-01-01"})
    assert bogus.status_code == 400 and "unsupported MCP-Protocol-Version" in rpc_error(bogus)["message"]


def test_host_size_and_token_checks_apply(tmp_path: Path, client: httpx2.Client) -> None:
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    env = {**os.environ, "TOOLRELAY_TOKEN": TOKEN}
    with files_http_process(tmp_path, "--max-message-bytes", "4096", env=env) as guarded:
        assert modern(client, guarded, "tools/list").status_code == 401
        auth = {"authorization": f"Bearer {TOKEN}"}
        assert modern(client, guarded, "tools/list", headers=auth).status_code == 200
        foreign = {**auth, "host": "evil.example.com"}
        assert modern(client, guarded, "tools/list", headers=foreign).status_code == 403
        padded = {"_meta": META, "pad": "x" * 8000}
        huge = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": padded}
        sent = {**BASE_HEADERS, **auth, "mcp-protocol-version": VERSION, "mcp-method": "tools/list"}
        assert client.post(guarded, content=json.dumps(huge), headers=sent).status_code == 413
