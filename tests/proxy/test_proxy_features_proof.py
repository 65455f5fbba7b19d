"""Two servers' resources and prompts through one proxy, and the transcript as proof.

Two copies of the conformance fixtures server (``testkit/servers/conformance_features.py``,
over stdio) as ``a`` and ``b``, the SDK as the host: the lists hold both servers' items
under their names (``toolrelay://a/…``, ``b__…``), each read, get, completion and
subscription goes to the server its name reads back to, and the run verifies. Each
tampered copy is rejected on the link it breaks (a read's answer altered, two reads'
answers swapped, a list item dropped, a route sent to the other server, the upstream
request naming another URI); ``explain`` and ``view`` show the new requests."""

from __future__ import annotations

import subprocess
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as t
import pytest
from mcp import MCPError
from mcp.client import Client
from mcp.shared.exceptions import MCPDeprecationWarning

from conftest import PYTHON, REPO
from toolrelay.proxy.names import HostNames, uri_prefix
from toolrelay.proxy.offered import collisions
from toolrelay.verify import load_run
from toolrelay.verify import verify as check
from toolrelay.verify.explain import explain
from toolrelay.view.build import build_trace
from toolrelay.view.rows import describe

from .proxy_helpers import (
    events,
    proxy_args,
    script_entry,
    stdio_proxy,
    verify,
    verify_tampered,
    write_config,
)

FEATURES = REPO / "tests" / "testkit" / "servers" / "conformance_features.py"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("features")
    config = write_config(folder, {"a": script_entry(FEATURES), "b": script_entry(FEATURES)})
    transcript = folder / "proxy.jsonl"

    async def host() -> dict[str, Any]:
        proxy = stdio_proxy(config, transcript, "--protocol-version", "2025-11-25")  # upstream: subscribe
        async with Client(proxy, mode="legacy") as client:
            resources = await client.list_resources()
            templates = await client.list_resource_templates()
            prompts = await client.list_prompts()
            text = await client.read_resource("toolrelay://a/test://static-text")
            data = await client.read_resource("toolrelay://b/test://template/123/data")
            got = await client.get_prompt("b__test_prompt_with_arguments", {"arg1": "x", "arg2": "y"})
            ref = t.PromptReference(type="ref/prompt", name="a__test_prompt_with_arguments")
            completed = await client.complete(ref, {"name": "arg1", "value": "testV"})
            with warnings.catch_warnings():  # the SDK warns that 2026-07-28 has none; this is 2025-11-25
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.subscribe_resource("toolrelay://b/test://watched-resource")
            try:
                await client.read_resource("toolrelay://c/test://static-text")
                missing = ""
            except MCPError as exc:
                missing = str(exc)
            capabilities = client.session.server_capabilities
            return {
                "resources": sorted(r.uri for r in resources.resources),
                "templates": [r.uri_template for r in templates.resource_templates],
                "prompts": sorted(p.name for p in prompts.prompts),
                "text": [(c.uri, getattr(c, "text", None)) for c in text.contents],
                "data": [(c.uri, getattr(c, "text", None)) for c in data.contents],
                "got": [m.content.text for m in got.messages if isinstance(m.content, t.TextContent)],
                "completed": completed.completion.values, "missing": missing,
                "declared": capabilities.model_dump(exclude_none=True) if capabilities else {},
            }

    return transcript, anyio.run(host)


def test_both_servers_are_offered_under_their_names(recorded: tuple[Path, dict[str, Any]]) -> None:
    transcript, found = recorded
    assert found["resources"] == sorted(f"toolrelay://{s}/test://{n}" for s in "ab"
                                        for n in ("static-text", "static-binary", "watched-resource"))
    assert found["templates"] == [f"toolrelay://{s}/test://template/{{id}}/data" for s in "ab"]
    assert "a__test_simple_prompt" in found["prompts"] and "b__test_prompt_with_image" in found["prompts"]
    assert len(found["prompts"]) == 8
    text = "This is the content of the static text resource."
    assert found["text"] == [("toolrelay://a/test://static-text", text)]
    assert found["data"][0][0] == "toolrelay://b/test://template/123/data"
    assert '"123"' in str(found["data"][0][1])
    assert found["got"] == ["Prompt with arguments: arg1='x', arg2='y'"]
    assert found["completed"] == ["testValue1", "testValue2"]
    assert "Unknown resource: toolrelay://c/test://static-text" in found["missing"]
    assert found["declared"]["resources"]["subscribe"] is True and "completions" in found["declared"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "toolrelay://b/test://template/123/data → b/test://template/123/data" in checked.stdout
    assert "prompts/list: the 8 items of 2 upstream pages, as the offer names them" in checked.stdout
    subscribed = [e for e in events(transcript) if e["kind"] == "mcp_request"
                  and e["message"].get("method") == "resources/subscribe"]
    assert [(e["server"], e["message"]["params"]["uri"]) for e in subscribed] == [("b", "test://watched-resource")]


def test_names_read_back_exactly_and_prompt_clashes_are_named() -> None:
    names = HostNames(["a", "a/b", "x y"])
    for server in names.servers:
        for uri in ("test://t/{id}", "file:///tmp/a b", "toolrelay://a/nested"):
            assert names.upstream_uri(names.host_uri(server, uri)) == (server, uri)
    assert uri_prefix("a/b") == "toolrelay://a%2Fb/"
    assert names.upstream_uri("test://t/1") is None
    assert collisions([("x", "y__z"), ("x__y", "z")]) == [
        "x__y__z would name tool 'y__z' of server 'x' and tool 'z' of server 'x__y'"]


def _host_out(lines: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    keys = [e["key"] for e in lines
            if e["kind"] == "proxy_host" and e["direction"] == "in" and e["method"] == method]
    return [e for e in lines if e["kind"] == "proxy_host" and e["direction"] == "out" and e["key"] in keys]


def _alter(lines: list[dict[str, Any]]) -> None:
    _host_out(lines, "resources/read")[0]["message"]["result"]["contents"][0]["text"] = "altered"


def _swap(lines: list[dict[str, Any]]) -> None:
    first, second = (e["message"] for e in _host_out(lines, "resources/read")[:2])
    first["result"], second["result"] = second["result"], first["result"]


def _drop(lines: list[dict[str, Any]]) -> None:
    _host_out(lines, "resources/list")[0]["message"]["result"]["resources"].pop()


def _elsewhere(lines: list[dict[str, Any]]) -> None:
    route = next(e for e in lines
                 if e["kind"] == "proxy_route" and e["alias"] == "toolrelay://a/test://static-text")
    route["server"] = "b"


def _other_uri(lines: list[dict[str, Any]]) -> None:
    sent = next(e for e in lines
                if e["kind"] == "mcp_request" and e["message"].get("method") == "resources/read")
    sent["message"]["params"]["uri"] = "test://static-binary"


TAMPERED: dict[str, tuple[Callable[[list[dict[str, Any]]], None], str]] = {
    "read altered": (_alter, "resources/read: the host's result differs from the upstream result it answers"),
    "reads swapped": (_swap, "resources/read: the host's result differs from the upstream result it answers"),
    "list item dropped": (_drop, "resources/list: the host's list is not the upstream pages' items"),
    "sent elsewhere": (_elsewhere, "does not read back to b/test://static-text by the recorded offer"),
    "another uri upstream": (_other_uri, "it names 'test://static-binary', not 'test://static-text'"),
}


@pytest.mark.parametrize("case", list(TAMPERED))
def test_a_tampered_copy_is_rejected(
    recorded: tuple[Path, dict[str, Any]], tmp_path: Path, case: str,
) -> None:
    transcript, _ = recorded
    tamper, said = TAMPERED[case]
    checked = verify_tampered(transcript, tamper, tmp_path, "--all")
    assert checked.returncode == 1, checked.stdout
    assert "BROKEN" in checked.stdout and said in checked.stdout, checked.stdout


def test_explain_and_view_show_the_requests(recorded: tuple[Path, dict[str, Any]]) -> None:
    transcript, _ = recorded
    run = load_run(transcript)
    text = explain(run, check(run))
    assert "host → proxy   resources/read toolrelay://a/test://static-text" in text
    assert "proxy → a   resources/read test://static-text · connection 1 · upstream id" in text
    assert "decision       listed" in text
    recorded_events = events(transcript)
    assert [lane.title for lane in build_trace(recorded_events, check(run)).lanes][:2] == ["Host", "Proxy"]
    rows = [describe(event, 0.0) for event in recorded_events]
    labels = [row.label for row in rows if row.kind == "proxy_host"]
    assert "host: prompts/get b__test_prompt_with_arguments" in labels
    routes = [row.label for row in rows if row.kind == "proxy_route"]
    read = "toolrelay://b/test://template/123/data → forwarded b#1 id "
    assert any(label.startswith(read) for label in routes)


def _refused(tmp_path: Path, servers: dict[str, Any], *more: str) -> subprocess.CompletedProcess[str]:
    config = write_config(tmp_path, servers)
    return subprocess.run([PYTHON, *proxy_args(config, tmp_path / "proxy.jsonl", *more)], input="",
                          capture_output=True, text=True, timeout=60)


def test_two_prompts_that_would_share_a_name_refuse_the_start(tmp_path: Path) -> None:
    clash = {"x": script_entry(FEATURES, "--prompt-prefix", "y__"), "x__y": script_entry(FEATURES)}
    proc = _refused(tmp_path, clash)
    assert proc.returncode != 0
    assert "toolrelay proxy: error: prompt name collision: " in proc.stderr, proc.stderr
    assert ("x__y__test_simple_prompt would name prompt 'y__test_simple_prompt' of server 'x' and prompt "
            "'test_simple_prompt' of server 'x__y'") in proc.stderr, proc.stderr


def test_keep_names_fronts_one_server_only(tmp_path: Path) -> None:
    proc = _refused(tmp_path, {"a": script_entry(FEATURES), "b": script_entry(FEATURES)}, "--keep-names")
    assert proc.returncode != 0
    assert "--keep-names fronts one server, and the config has 2 (a, b)" in proc.stderr, proc.stderr
