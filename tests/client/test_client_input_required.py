"""toolrelay's client answering 2026-07-28 ``input_required`` (``client/host/input_required.py``)
against a scripted modern stdio server: it declares its capabilities in every request's
``_meta``, answers elicitation and sampling with the host's callbacks and retries with a
new id, echoing ``requestState`` unchanged; a server that keeps asking, asks for an unknown
method, or asks for roots that are not offered is a protocol error saying so."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from client_helpers import Recorder, open_connection, run

from testkit.servers import MODERN_INPUT_SERVER
from toolrelay.client.config import ServerConfig
from toolrelay.client.host import Host, accept_defaults
from toolrelay.client.host.input_required import MAX_ROUNDS
from toolrelay.client.host.sampling import SamplingRequest
from toolrelay.errors import ProtocolError
from toolrelay.events import McpMessage


async def _sample(request: SamplingRequest) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "Hello"}, "model": "m1",
            "stopReason": "endTurn"}


def server(tmp_path: Path, mode: str, **fields: Any) -> ServerConfig:
    """The server in ``mode``, told ``tmp_path`` as its root unless ``fields`` say otherwise."""
    return ServerConfig(name="m", transport="stdio", command=sys.executable,
                        args=(str(MODERN_INPUT_SERVER), mode), **{"roots": (str(tmp_path),), **fields})


async def _call(config: ServerConfig, log_dir: Path, host: Host | None = None) -> tuple[Any, list[Any]]:
    recorder = Recorder()
    async with open_connection(config, log_dir, recorder, protocol_version="2026-07-28",
                               host=host) as connection:
        try:
            answer: Any = (await connection.call_tool("t", {}, call_id="call_1")).raise_for_error()
        except ProtocolError as exc:
            answer = exc
        sent = [e for e in recorder.seen if isinstance(e, McpMessage) and e.method == "tools/call"
                and e.direction == "out"]
        return answer, sent


def test_elicitation_and_sampling_are_answered_and_the_state_echoed(tmp_path: Path) -> None:
    host = Host(elicitor=accept_defaults, sampler=_sample)
    answer, sent = run(_call(server(tmp_path, "ask"), tmp_path, host))
    seen = json.loads(answer["content"][0]["text"])
    assert seen["responses"] == {
        "form": {"action": "accept", "content": {"age": 30}},
        "ask": {"role": "assistant", "content": {"type": "text", "text": "Hello"}, "model": "m1",
                "stopReason": "endTurn"},
    }
    assert seen["state"] == "s-1"
    assert seen["caps"] == {"roots": {}, "sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}},
                            "extensions": {"io.modelcontextprotocol/tasks": {}}}
    ids = [e.message["id"] for e in sent]
    assert len(ids) == 2 and ids[0] != ids[1] and all(e.call_id == "call_1" for e in sent)
    assert "inputResponses" not in sent[0].message["params"]


def test_without_a_model_the_sampling_input_fails_the_call_saying_why(tmp_path: Path) -> None:
    answer, _ = run(_call(server(tmp_path, "ask"), tmp_path, Host(elicitor=accept_defaults)))
    assert isinstance(answer, ProtocolError)
    assert str(answer).startswith("server m asked 'ask' (sampling/createMessage) during tools/call t, "
                                  "which toolrelay could not answer: toolrelay has no model")


def test_a_server_that_keeps_asking_is_given_up_on(tmp_path: Path) -> None:
    answer, sent = run(_call(server(tmp_path, "forever"), tmp_path))
    assert isinstance(answer, ProtocolError) and len(sent) == MAX_ROUNDS + 1
    assert str(answer) == (f"server m still answered tools/call t input_required after {MAX_ROUNDS} rounds; "
                           "toolrelay gave up")
    assert answer.mcp_id == sent[-1].message["id"]


def test_an_unknown_input_method_is_a_clear_error(tmp_path: Path) -> None:
    answer, sent = run(_call(server(tmp_path, "unknown"), tmp_path))
    assert isinstance(answer, ProtocolError) and len(sent) == 1
    assert "asking 'x' for 'tasks/get', which is not an input request toolrelay answers" in str(answer)


@pytest.mark.parametrize("offer", [False, True])
def test_roots_are_asked_only_when_offered(tmp_path: Path, offer: bool) -> None:
    answer, _ = run(_call(server(tmp_path, "roots", offer_roots=offer, roots=(str(tmp_path),)), tmp_path))
    if offer:

        seen = json.loads(answer["content"][0]["text"])
        assert seen["responses"]["r"]["roots"][0]["uri"] == tmp_path.as_uri() and seen["state"] is None
    else:
        assert isinstance(answer, ProtocolError)
        said = "(roots/list) during tools/call t, which toolrelay could not answer: Method not found"
        assert said in str(answer)


async def _call_twice(config: ServerConfig, log_dir: Path, other: Path) -> tuple[list[Any], list[str]]:
    recorder = Recorder()
    async with open_connection(config, log_dir, recorder, protocol_version="2026-07-28") as connection:
        first = (await connection.call_tool("t", {})).raise_for_error()
        connection.set_roots([other])
        second = (await connection.call_tool("t", {})).raise_for_error()
    sent = [e.method for e in recorder.seen if isinstance(e, McpMessage) and e.direction == "out"]
    return [json.loads(r["content"][0]["text"])["responses"]["r"]["roots"] for r in (first, second)], sent


def test_new_roots_are_sent_with_the_next_call_not_notified(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    answers, sent = run(_call_twice(server(tmp_path, "roots", roots=(str(tmp_path),)), tmp_path, other))
    assert [[r["uri"] for r in roots] for roots in answers] == [[tmp_path.as_uri()], [other.as_uri()]]
    assert "notifications/roots/list_changed" not in sent


async def _get_and_read(config: ServerConfig, log_dir: Path, host: Host) -> tuple[list[Any], list[Any]]:
    recorder = Recorder()
    async with open_connection(config, log_dir, recorder, protocol_version="2026-07-28",
                               host=host) as connection:
        prompt = await connection.request("prompts/get", {"name": "p"})
        resource = await connection.request("resources/read", {"uri": "file:///r.txt"})
    sent = [e for e in recorder.seen if isinstance(e, McpMessage) and e.direction == "out"
            and e.method in ("prompts/get", "resources/read")]
    texts = [prompt["messages"][0]["content"]["text"], resource["contents"][0]["text"]]
    return [json.loads(text) for text in texts], sent


def test_prompts_get_and_resources_read_follow_input_required_too(tmp_path: Path) -> None:
    host = Host(elicitor=accept_defaults, sampler=_sample)
    seen, sent = run(_get_and_read(server(tmp_path, "ask"), tmp_path, host))
    for answered in seen:
        assert answered["responses"]["form"] == {"action": "accept", "content": {"age": 30}}
        assert answered["responses"]["ask"]["model"] == "m1" and answered["state"] == "s-1"
    assert [e.method for e in sent] == ["prompts/get"] * 2 + ["resources/read"] * 2
    assert len({e.message["id"] for e in sent}) == 4  # each retry has its own id
    assert sent[1].message["params"]["name"] == "p" and sent[3].message["params"]["uri"] == "file:///r.txt"


def test_a_prompt_that_keeps_asking_is_given_up_on_naming_it(tmp_path: Path) -> None:
    async def get() -> None:
        async with open_connection(server(tmp_path, "forever"), tmp_path, Recorder(),
                                   protocol_version="2026-07-28") as connection:
            await connection.request("prompts/get", {"name": "p"})

    with pytest.raises(ProtocolError, match=f"^server m still answered prompts/get p input_required after "
                                            f"{MAX_ROUNDS} rounds; toolrelay gave up$"):
        run(get())
