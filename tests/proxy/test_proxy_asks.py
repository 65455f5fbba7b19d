"""What an upstream asks during a call, asked of the host: server-everything's sampling and
elicitation tools behind the proxy, the SDK as a host that declares sampling and
elicitation (its callbacks answer). A 2025 host is asked by a server request of the
proxy's on the call's stream, over stdio and over HTTP, and the upstream gets the host's
answer; the transcript pairs the upstream's request id with the proxy's request to the host,
and verifies. A host that declares neither is answered by the proxy's own settings
(``test_proxy_everything.py``)."""

from __future__ import annotations

import copy
import functools
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as t
import pytest
from mcp.client import Client
from mcp.client.context import ClientRequestContext

from conftest import PYTHON
from testkit import everything
from toolrelay.verify import load_run
from toolrelay.verify import verify as check
from toolrelay.verify.explain import explain
from toolrelay.view.rows import describe

from .proxy_helpers import (
    WOBBLY,
    events,
    http_proxy,
    proxy_args,
    script_entry,
    stdio_proxy,
    verify,
    verify_tampered,
    write_config,
)

SAMPLED = "a line the host's model wrote"


def _ev_config(everything_server: list[str], folder: Path) -> Path:
    config = folder / "ev.json"
    config.write_text(json.dumps(everything.stdio_config(everything_server, [str(folder)])), encoding="utf-8")
    return config


@pytest.fixture
def ev_config(everything_server: list[str], tmp_path: Path) -> Path:
    return _ev_config(everything_server, tmp_path)


class Asked:
    """The SDK host's callbacks, and what they were asked."""

    def __init__(self) -> None:
        self.sampling: list[t.CreateMessageRequestParams] = []
        self.elicitation: list[t.ElicitRequestParams] = []

    async def sample(self, context: ClientRequestContext,
                     params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        self.sampling.append(params)
        return t.CreateMessageResult(role="assistant", content=t.TextContent(type="text", text=SAMPLED),
                                     model="host-model", stop_reason="endTurn")

    async def elicit(self, context: ClientRequestContext, params: t.ElicitRequestParams) -> t.ElicitResult:
        self.elicitation.append(params)
        return t.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True})


async def _ask_through(server: Any, mode: str, asked: Asked) -> dict[str, str]:
    said: dict[str, str] = {}
    async with Client(server, mode=mode, sampling_callback=asked.sample,
                      elicitation_callback=asked.elicit) as client:
        for tool, arguments in (("trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 5}),
                                ("trigger-elicitation-request", {})):
            with anyio.fail_after(60):
                result = await client.call_tool(f"ev__{tool}", arguments)
            said[tool] = " ".join(b.text for b in result.content if isinstance(b, t.TextContent))
    return said


def _check(said: dict[str, str], asked: Asked, transcript: Path) -> None:
    assert SAMPLED in said["trigger-sampling-request"] and "host-model" in said["trigger-sampling-request"]
    assert "- Name: Ada Lovelace" in said["trigger-elicitation-request"]
    assert "Say hi" in str(asked.sampling[0].messages[0].content)  # the upstream's request, as it asked
    assert asked.elicitation[0].message == "Please provide inputs for the following fields:"
    recorded = events(transcript)
    asks = [e for e in recorded if e["kind"] == "proxy_ask"]
    assert [(a["method"], a["answered_by"], a["outcome"]) for a in asks] == [
        ("sampling/createMessage", "host", "sampled"), ("elicitation/create", "host", "accept")]
    upstream = {e["mcp_id"]: e for e in recorded if e["kind"] == "mcp_server_request"}
    for ask in asks:  # paired: the upstream's own request, and the proxy's to the host
        assert upstream[ask["upstream_id"]]["call_id"] == ask["key"]
        assert ask["host_request_id"] is not None
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "answered by the host" in checked.stdout


@pytest.fixture(scope="module")
def stdio_run(everything_server: list[str], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    folder = tmp_path_factory.mktemp("asks")
    transcript = folder / "proxy.jsonl"
    asked = Asked()
    proxy = stdio_proxy(_ev_config(everything_server, folder), transcript, "--protocol-version", "2025-11-25")
    return transcript, (anyio.run(_ask_through, proxy, "legacy", asked), asked)


def test_a_stdio_host_is_asked_what_the_upstream_asks(stdio_run: tuple[Path, Any]) -> None:
    transcript, (said, asked) = stdio_run
    _check(said, asked, transcript)


def test_an_http_host_is_asked_on_the_calls_stream(ev_config: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "proxy.jsonl"
    asked = Asked()
    with http_proxy(ev_config, transcript, "--protocol-version", "2025-11-25") as url:
        said = anyio.run(_ask_through, url, "legacy", asked)
    _check(said, asked, transcript)
    lines = copy.deepcopy(events(transcript))  # the HTTP host leg is on the wire: another answer is caught
    answer = next(e for e in lines if e["kind"] == "proxy_host" and e["direction"] == "out")
    sent = next(e for e in lines if e["kind"] == "proxy_wire" and e["host"] == 1 and "result" in e["message"]
                and e["message"]["id"] == answer["host_id"])
    sent["message"]["result"]["content"][0]["text"] = "something else"
    copied = tmp_path / "tampered.jsonl"
    copied.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    checked = verify(copied)
    assert checked.returncode == 1
    assert "no message sent to the host on the wire is this answer" in checked.stdout


def _check_modern(said: dict[str, str], asked: Asked, transcript: Path) -> None:
    assert SAMPLED in said["trigger-sampling-request"]
    assert "- Name: Ada Lovelace" in said["trigger-elicitation-request"]
    recorded = events(transcript)
    asks = [e for e in recorded if e["kind"] == "proxy_ask"]
    assert [(a["method"], a["answered_by"], a["outcome"]) for a in asks] == [
        ("sampling/createMessage", "host", "sampled"), ("elicitation/create", "host", "accept")]
    rounds = [(e["key"], e["direction"], e.get("round")) for e in recorded if e["kind"] == "proxy_host"]
    assert rounds == [(key, way, n) for key in ("h1", "h2") for n in (0, 1) for way in ("in", "out")]
    asked_first = next(e for e in recorded if e["kind"] == "proxy_host" and e["direction"] == "out")
    assert asked_first["message"]["result"]["resultType"] == "input_required"
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "answered by the host (the proxy's request 'ask-1')" in checked.stdout
    assert "2 rounds: 1 answered input_required, then the answer" in checked.stdout


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_2026_host_answers_input_required_and_retries(
    ev_config: Path, tmp_path: Path, transport: str,
) -> None:
    transcript = tmp_path / "proxy.jsonl"
    asked = Asked()
    if transport == "stdio":
        proxy = stdio_proxy(ev_config, transcript, "--protocol-version", "2025-11-25")
        said = anyio.run(_ask_through, proxy, "2026-07-28", asked)
    else:
        with http_proxy(ev_config, transcript, "--protocol-version", "2025-11-25") as url:
            said = anyio.run(_ask_through, url, "2026-07-28", asked)
    _check_modern(said, asked, transcript)
    wire = {e.get("host") for e in events(transcript) if e["kind"] == "proxy_wire"}
    assert wire == ({None} if transport == "stdio" else {0})  # HTTP: the exchanges, as host 0
    if transport == "stdio":  # each tampered copy is rejected on the link it breaks
        for tamper, broken in MODERN_TAMPERED.values():
            lines = copy.deepcopy(events(transcript))
            tamper(lines)
            copied = tmp_path / "tampered.jsonl"
            copied.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
            checked = verify(copied)
            assert checked.returncode == 1 and broken in checked.stdout, checked.stdout


def _retried_with_another_state(lines: list[dict[str, Any]]) -> None:
    retry = next(e for e in lines if e["kind"] == "proxy_host" and e.get("round") == 1)
    retry["message"]["params"]["requestState"] = "forged"


def _retry_answered_otherwise(lines: list[dict[str, Any]]) -> None:
    retry = next(e for e in lines if e["kind"] == "proxy_host" and e.get("round") == 1)
    retry["message"]["params"]["inputResponses"]["ask-1"]["content"]["text"] = "not what the host said"


def _first_round_answered_twice(lines: list[dict[str, Any]]) -> None:
    first = next(e for e in lines if e["kind"] == "proxy_host" and e["direction"] == "out")
    lines.append({**copy.deepcopy(first), "seq": lines[-1]["seq"] + 1})


MODERN_TAMPERED: dict[str, tuple[Callable[[list[dict[str, Any]]], None], str]] = {
    "a retry with another state": (_retried_with_another_state, "round 1 does not carry back the request"),
    "the host's answer altered": (_retry_answered_otherwise, "the host's answer recorded is not in a retry"),
    "a round answered twice": (_first_round_answered_twice, "round 0 is answered 2 times"),
}


def test_a_request_state_the_proxy_did_not_give_is_refused(tmp_path: Path) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}
    retry = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "wob__echo", "arguments": {"text": "x"}, "requestState": "made-up",
        "inputResponses": {"ask-1": {"action": "decline"}}, "_meta": meta}}
    command = [PYTHON, *proxy_args(_wobbly_with_roots(tmp_path), tmp_path / "proxy.jsonl")]
    done = subprocess.run(command, input=json.dumps(retry) + "\n", capture_output=True, text=True, timeout=60)
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["error"]["code"] == -32602
    assert answer["error"]["message"] == (
        "Invalid params: this requestState is not one toolrelay proxy gave, or its call was given up "
        "(no retry came within 120 s, the proxy's --input-wait) and cancelled")


def _asks(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in lines if e["kind"] == "proxy_ask"]


def _host_answer_altered(lines: list[dict[str, Any]]) -> None:
    _asks(lines)[0]["host_answer"]["result"]["content"]["text"] = "something else"


def _upstream_told_otherwise(lines: list[dict[str, Any]]) -> None:
    ask = _asks(lines)[1]
    reply = next(e for e in lines if e["kind"] == "mcp_reply" and e["mcp_id"] == ask["upstream_id"])
    reply["message"]["result"]["action"] = "decline"


def _ask_of_another_call(lines: list[dict[str, Any]]) -> None:
    _asks(lines)[0]["key"] = _asks(lines)[1]["key"]


def _answered_twice(lines: list[dict[str, Any]]) -> None:
    ask = _asks(lines)[0]
    reply = next(e for e in lines if e["kind"] == "mcp_reply" and e["mcp_id"] == ask["upstream_id"])
    lines.append({**copy.deepcopy(reply), "seq": lines[-1]["seq"] + 1})


def _asked_off_the_wire(lines: list[dict[str, Any]]) -> None:
    _asks(lines)[1]["host_request_id"] = 99


TAMPERED: dict[str, tuple[Callable[[list[dict[str, Any]]], None], str]] = {
    "the host's answer altered": (_host_answer_altered, "what went upstream is not the host's answer"),
    "the upstream told otherwise": (_upstream_told_otherwise, "what went upstream is not the host's answer"),
    "an ask moved to another call": (_ask_of_another_call, "was not asked during this host call"),
    "an ask answered twice": (_answered_twice, "was answered 2 times"),
    "the host asked off the wire": (_asked_off_the_wire, "the proxy's request 99 to the host is not on"),
}


@pytest.mark.parametrize("case", list(TAMPERED))
def test_a_tampered_copy_is_rejected(stdio_run: tuple[Path, Any], tmp_path: Path, case: str) -> None:
    tamper, said = TAMPERED[case]
    checked = verify_tampered(stdio_run[0], tamper, tmp_path)
    assert checked.returncode == 1, checked.stdout
    assert "BROKEN link" in checked.stdout and said in checked.stdout


def test_explain_and_view_draw_the_asks(stdio_run: tuple[Path, Any]) -> None:
    run = load_run(stdio_run[0])
    text = explain(run, check(run))
    assert "ev asks    sampling/createMessage (upstream id 0) → asked of the host (id 1): sampled" in text
    assert "ev asks    elicitation/create (upstream id 1) → asked of the host (id 2): accept" in text
    rows = [describe(event, 0.0) for event in events(stdio_run[0])]
    drawn = [(row.source, row.target, row.label) for row in rows if row.kind == "proxy_ask"]
    assert drawn == [("app", "user", "ev asks sampling/createMessage → the host: sampled"),
                     ("app", "user", "ev asks elicitation/create → the host: accept")]


# -- roots, and the proxy's own answers (the wobbly server asks what it is told to) ----------

FORM = {"message": "Your favourite colour?", "requestedSchema": {
    "type": "object", "properties": {"colour": {"type": "string", "default": "blue"}}}}


def _wobbly_with_roots(folder: Path) -> Path:
    entry = script_entry(WOBBLY)
    entry["toolrelay"]["roots"] = [str(folder)]
    return write_config(folder, {"wob": entry})


async def _wobbly_asks(server: Any, mode: str, asks: list[dict[str, Any]], **callbacks: Any) -> list[Any]:
    async with Client(server, mode=mode, **callbacks) as client:
        said = []
        for ask in asks:
            with anyio.fail_after(30):
                result = await client.call_tool("wob__ask", ask)
            block = result.content[0]
            said.append(json.loads(block.text) if isinstance(block, t.TextContent) else None)
        return said


async def _host_roots(context: ClientRequestContext) -> t.ListRootsResult:
    return t.ListRootsResult(roots=[t.Root(uri="file:///home/host/project", name="project")])


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_host_that_declares_roots_is_asked_for_them(tmp_path: Path, mode: str) -> None:
    transcript = tmp_path / "proxy.jsonl"
    proxy = stdio_proxy(_wobbly_with_roots(tmp_path), transcript)
    said = anyio.run(functools.partial(_wobbly_asks, proxy, mode, [{"method": "roots/list"}],
                                       list_roots_callback=_host_roots))
    assert said == [{"roots": [{"name": "project", "uri": "file:///home/host/project"}]}]
    recorded = [e for e in events(transcript) if e["kind"] == "proxy_ask"]
    assert [(e["method"], e["answered_by"], e["outcome"]) for e in recorded] == [
        ("roots/list", "host", "listed")]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "roots/list of server wob (its id 100) answered by the host" in checked.stdout


def test_a_host_that_declares_nothing_gets_the_proxys_own_answers(tmp_path: Path) -> None:
    config = _wobbly_with_roots(tmp_path)
    asks = [{"method": "roots/list"}, {"method": "elicitation/create", "params": FORM}]
    said = anyio.run(_wobbly_asks, stdio_proxy(config, tmp_path / "declined.jsonl"), "legacy", asks)
    own = {"roots": [{"name": tmp_path.name, "uri": tmp_path.resolve().as_uri()}]}  # the entry's roots
    assert said == [own, {"action": "decline"}]
    transcript = tmp_path / "defaults.jsonl"
    proxy = stdio_proxy(config, transcript, "--elicit", "defaults")
    said = anyio.run(_wobbly_asks, proxy, "legacy", asks[1:])
    assert said == [{"action": "accept", "content": {"colour": "blue"}}]
    recorded = [e for e in events(transcript) if e["kind"] == "proxy_ask"]
    assert [(e["answered_by"], e["outcome"]) for e in recorded] == [("proxy", "accept")]
    assert recorded[0]["reason"] == "the host did not declare elicitation; --elicit defaults"
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout


def test_an_unknown_elicit_choice_is_refused(tmp_path: Path) -> None:
    done = subprocess.run([PYTHON, *proxy_args(_wobbly_with_roots(tmp_path), tmp_path / "t.jsonl"),
                           "--elicit", "ask"], input="", capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "argument --elicit: invalid choice: 'ask' (choose from 'decline', 'defaults')" in done.stderr


async def _refuse(context: ClientRequestContext, params: t.CreateMessageRequestParams) -> t.ErrorData:
    return t.ErrorData(code=-1, message="the user said no")


def test_a_hosts_refusal_reaches_the_upstream_as_its_error(tmp_path: Path) -> None:
    transcript = tmp_path / "proxy.jsonl"
    sample = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}
    said = anyio.run(functools.partial(_wobbly_asks, stdio_proxy(_wobbly_with_roots(tmp_path), transcript),
                                       "legacy", [{"method": "sampling/createMessage", "params": sample}],
                                       sampling_callback=_refuse))
    assert said == [{"code": -1, "message": "the user said no"}]
    recorded = [e for e in events(transcript) if e["kind"] == "proxy_ask"]
    assert [(e["answered_by"], e["outcome"]) for e in recorded] == [("host", "refused")]
    rows = [describe(event, 0.0) for event in events(transcript)]
    assert [row.label for row in rows if row.kind == "proxy_ask"] == [
        "wob asks sampling/createMessage → the host: refused"]
    checked = verify(transcript, "--all")
    assert checked.returncode == 0, checked.stdout
    assert "answered by the host (the proxy's request 1): refused" in checked.stdout
