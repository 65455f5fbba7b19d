"""What one connection answers when its server asks, revision by revision: the declared
capabilities, roots, sampling through the Host's callbacks (refusals are -1 and say which
option would allow them), elicitation (modes, policies), client-side tasks, and -32601
for the rest."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

import pytest

from toolrelay.client.host import (
    ElicitationAnswer,
    ElicitationRequest,
    Host,
    SamplingRequest,
    ServerRequests,
    accept_defaults,
    client_capabilities,
    declining,
    roots_from_paths,
)
from toolrelay.errors import RpcError
from toolrelay.protocol.jsonrpc import JSONObject, Request

FORM = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "default": 30}},
    "required": ["name"],
}
SAMPLE = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}],
    "maxTokens": 20,
    "systemPrompt": "Be brief.",
    "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}]},
}
ANSWER = {
    "role": "assistant",
    "content": {"type": "text", "text": "hi"},
    "model": "m1",
    "stopReason": "endTurn",
}


class Serving:
    """A ServerRequests at one revision, with what it told the user."""

    def __init__(
        self, version: str, host: Host | None = None, roots: tuple[str, ...] | None = ("/tmp",)
    ) -> None:
        self.notices: list[tuple[str, str]] = []
        self.held: list[int | str] = []
        """The MCP ids of the calls whose clock was held, each added when its hold is released."""
        found = roots_from_paths(roots) if roots is not None else None
        self.requests = ServerRequests(
            host or Host(),
            "srv",
            found,
            notify=lambda *n: self.notices.append(n),
            hold=lambda mcp_id: lambda: self.held.append(mcp_id),
        )
        self.requests.negotiated(version)

    async def ask(
        self, method: str, params: dict[str, Any] | None = None, call_id: str | None = "call_1",
        during: int | None = 7,
    ) -> Any:
        """Ask as the server would during our tools/call ``during`` (its MCP id), made for ``call_id``."""
        request = Request(id=1, method=method, params=params, raw={})
        answer = self.requests.answer(request, call_id, during=during)
        return await answer if isinstance(answer, Awaitable) else answer


def run(coroutine: Awaitable[Any]) -> Any:
    async def main() -> Any:
        return await coroutine

    return asyncio.run(main())


def error_of(coroutine: Awaitable[Any]) -> RpcError:
    with pytest.raises(RpcError) as caught:
        run(coroutine)
    return caught.value


@pytest.mark.parametrize(
    ("version", "capabilities"),
    [
        ("2024-11-05", {"roots": {"listChanged": True}, "sampling": {}}),
        ("2025-06-18", {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}),
        (
            "2025-11-25",
            {
                "roots": {"listChanged": True},
                "sampling": {"tools": {}},
                "elicitation": {"form": {}, "url": {}},
                "tasks": {
                    "list": {},
                    "cancel": {},
                    "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}},
                },
            },
        ),
        (
            "2026-07-28",
            {
                "roots": {},
                "sampling": {"tools": {}},
                "elicitation": {"form": {}, "url": {}},
                "extensions": {"io.modelcontextprotocol/tasks": {}},  # tasks left the core (SEP-2663)
            },
        ),
    ],
)
def test_each_revision_declares_its_own_shapes(version: str, capabilities: dict[str, Any]) -> None:
    assert client_capabilities(version) == capabilities
    assert "roots" not in client_capabilities(version, roots=False)


def test_roots_are_file_uris_of_the_configured_directories(tmp_path: Any) -> None:
    (tmp_path / "a b").mkdir()
    serving = Serving("2025-06-18", roots=(str(tmp_path / "a b"), str(tmp_path / "a b" / "..")))
    roots = run(serving.ask("roots/list"))["roots"]
    assert roots == [
        {"uri": (tmp_path / "a b").resolve().as_uri(), "name": "a b"},
        {"uri": tmp_path.resolve().as_uri(), "name": tmp_path.name},
    ]
    assert roots[0]["uri"].endswith("/a%20b")


def test_without_roots_roots_list_is_method_not_found() -> None:
    assert error_of(Serving("2025-06-18", roots=None).ask("roots/list")).code == -32601


def test_sampling_without_a_model_is_refused_with_minus_one_naming_the_option() -> None:
    serving = Serving("2025-06-18", Host(no_sampler_hint="pass --model"))
    error = error_of(serving.ask("sampling/createMessage", SAMPLE))
    assert (error.code, error.rpc_message) == (
        -1,
        "toolrelay has no model to answer sampling requests: pass --model",
    )
    assert serving.notices == [
        (
            "warning",
            "server srv asked the model for a message (sampling/createMessage); refused: pass --model",
        )
    ]


def test_sampling_asks_the_approver_then_the_model_and_gives_the_time_back_to_the_call() -> None:
    seen: list[SamplingRequest] = []

    async def approve(request: SamplingRequest) -> str | None:
        seen.append(request)
        return None

    async def sample(request: SamplingRequest) -> dict[str, Any]:
        return ANSWER

    serving = Serving("2025-06-18", Host(sampler=sample, approve_sampling=approve))
    assert run(serving.ask("sampling/createMessage", SAMPLE)) == ANSWER
    (request,) = seen
    assert (request.server, request.call_id, request.max_tokens, request.model_hints) == (
        "srv",
        "call_1",
        20,
        ["claude-3-sonnet"],
    )
    assert request.prompt_text() == "[system] Be brief.\n[user] Say hi"
    assert serving.held == [7]  # the tools/call's MCP id, not the model's call_id


def test_a_refused_sampling_request_is_minus_one_with_the_refusal() -> None:
    async def refuse(request: SamplingRequest) -> str | None:
        return "not approved (no terminal to ask on; rerun with --yes to approve sampling requests)"

    async def sample(request: SamplingRequest) -> dict[str, Any]:
        raise AssertionError("a refused request never reaches the model")

    error = error_of(
        Serving("2025-06-18", Host(sampler=sample, approve_sampling=refuse)).ask(
            "sampling/createMessage", SAMPLE
        )
    )
    assert error.code == -1 and error.rpc_message == (
        "User rejected sampling request: not approved (no terminal to ask on; rerun with --yes to approve "
        "sampling requests)"
    )


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"messages": "hi", "maxTokens": 5}, '"messages" must be an array'),
        ({"messages": [], "maxTokens": 0}, '"maxTokens" must be a positive integer'),
        (
            {**SAMPLE, "tools": [{"name": "t", "inputSchema": {"type": "object"}}]},
            "need the sampling.tools capability",
        ),
    ],
)
def test_malformed_sampling_requests_are_invalid_params(params: dict[str, Any], said: str) -> None:
    error = error_of(Serving("2025-06-18").ask("sampling/createMessage", params))
    assert error.code == -32602 and said in error.rpc_message


def test_at_2025_11_25_tool_use_must_be_answered_by_its_tool_result() -> None:
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "u1", "name": "t", "input": {}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "toolUseId": "u1", "content": []}]}
    mixed = {
        "role": "user",
        "content": [
            {"type": "tool_result", "toolUseId": "u1", "content": []},
            {"type": "text", "text": "and more"},
        ],
    }
    tools = [{"name": "t", "inputSchema": {"type": "object"}}]
    serving = Serving("2025-11-25")
    for messages, said in (
        ([use], "tool_use u1 has no tool_result"),
        ([use, mixed], "tool results only"),
        ([result], "answers no tool_use"),
    ):
        error = error_of(
            serving.ask("sampling/createMessage", {"messages": messages, "maxTokens": 5, "tools": tools})
        )
        assert error.code == -32602 and said in error.rpc_message
    # a well-formed exchange reaches the sampler (here: none, so it is refused)
    good = {"messages": [use, result], "maxTokens": 5, "tools": tools}
    assert error_of(serving.ask("sampling/createMessage", good)).code == -1


def test_elicitation_without_an_elicitor_is_declined_with_a_note() -> None:
    serving = Serving("2025-06-18", Host(no_elicitor_hint="nobody to ask"))
    answer = run(serving.ask("elicitation/create", {"message": "Your name?", "requestedSchema": FORM}))
    assert answer == {"action": "decline"}
    assert serving.notices == [
        ("warning", "server srv asked for input ('Your name?'); declined: nobody to ask")
    ]


def test_defaults_accepts_a_form_with_its_defaults_and_declines_a_url() -> None:
    serving = Serving("2025-11-25", Host(elicitor=accept_defaults))
    optional_name = {**FORM, "required": []}
    assert run(serving.ask("elicitation/create", {"message": "m", "requestedSchema": optional_name})) == {
        "action": "accept",
        "content": {"age": 30},
    }
    url = {"mode": "url", "message": "Sign in", "url": "https://example.com/x", "elicitationId": "e1"}
    assert run(serving.ask("elicitation/create", url)) == {"action": "decline"}
    assert [level for level, _ in serving.notices] == ["info", "warning"]
    assert serving.notices[0][1].endswith(
        "accepted with the form's defaults (--elicit defaults); without a default, left out: name"
    )


@pytest.mark.parametrize("name", [{"type": "string"}, {"type": "string", "minLength": 5, "default": "Al"}],
                         ids=["no default", "a default that does not fit"])
def test_defaults_declines_a_form_whose_required_field_has_no_fitting_default(name: JSONObject) -> None:
    serving = Serving("2025-11-25", Host(elicitor=accept_defaults))
    form = {**FORM, "properties": {**FORM["properties"], "name": name}}
    answer = run(serving.ask("elicitation/create", {"message": "Your name?", "requestedSchema": form}))
    assert answer == {"action": "decline"}
    assert serving.notices == [("warning", "server srv asked for input ('Your name?'); declined: --elicit "
                                           "defaults has no default for the required field(s) name")]


def test_url_mode_is_for_2025_11_25_and_reaches_the_elicitor_whole() -> None:
    url = {"mode": "url", "message": "Sign in", "url": "https://example.com/x", "elicitationId": "e1"}
    assert (
        "mode 'url' was not declared"
        in error_of(Serving("2025-06-18").ask("elicitation/create", url)).rpc_message
    )
    seen: list[ElicitationRequest] = []

    async def consent(request: ElicitationRequest) -> ElicitationAnswer:
        seen.append(request)
        return ElicitationAnswer("accept", {"ignored": True})

    assert run(Serving("2025-11-25", Host(elicitor=consent)).ask("elicitation/create", url)) == {
        "action": "accept"
    }
    assert (seen[0].mode, seen[0].url, seen[0].elicitation_id) == ("url", "https://example.com/x", "e1")


def test_before_2025_06_18_there_is_no_elicitation() -> None:
    error = error_of(
        Serving("2025-03-26").ask("elicitation/create", {"message": "m", "requestedSchema": FORM})
    )
    assert error.code == -32601


def test_a_task_augmented_request_is_a_task_followed_by_get_result_list_and_cancel() -> None:
    gate = asyncio.Event()

    async def slow(request: ElicitationRequest) -> ElicitationAnswer:
        await gate.wait()
        return ElicitationAnswer("accept", {"name": "Ada"})

    async def scenario() -> dict[str, Any]:
        serving = Serving("2025-11-25", Host(elicitor=slow))
        params = {"message": "m", "requestedSchema": FORM, "task": {"ttl": 1000}}
        created = await serving.ask("elicitation/create", params, call_id="call_7")
        task_id = created["task"]["taskId"]
        working = await serving.ask("tasks/get", {"taskId": task_id})
        waiting = asyncio.ensure_future(serving.ask("tasks/result", {"taskId": task_id}))
        gate.set()
        result = await waiting
        listed = await serving.ask("tasks/list", {})
        done = await serving.ask("tasks/get", {"taskId": task_id})
        late = None
        try:
            await serving.ask("tasks/cancel", {"taskId": task_id})
        except RpcError as exc:
            late = exc.rpc_message
        owner = serving.requests.call_of(
            Request(id=2, method="tasks/get", params={"taskId": task_id}, raw={})
        )
        return {
            "created": created["task"],
            "working": working,
            "result": result,
            "listed": listed,
            "done": done,
            "late": late,
            "owner": owner,
        }

    seen = run(scenario())
    assert seen["created"]["status"] == "working" and seen["created"]["ttl"] == 1000
    assert seen["working"]["status"] == "working"
    task_id = seen["created"]["taskId"]
    assert seen["result"] == {
        "action": "accept",
        "content": {"name": "Ada"},
        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": task_id}},
    }
    assert [t["taskId"] for t in seen["listed"]["tasks"]] == [task_id]
    assert seen["done"]["status"] == "completed"
    assert seen["late"] == f"Cannot cancel task {task_id}: it is already completed"
    assert seen["owner"] == "call_7"  # the server's follow-ups are recorded with the call


def test_a_refused_task_fails_and_its_result_is_the_refusal() -> None:
    async def scenario() -> tuple[dict[str, Any], RpcError]:
        serving = Serving("2025-11-25")
        created = await serving.ask("sampling/createMessage", {**SAMPLE, "task": {}})
        task_id = created["task"]["taskId"]
        with pytest.raises(RpcError) as caught:
            await serving.ask("tasks/result", {"taskId": task_id})
        return await serving.ask("tasks/get", {"taskId": task_id}), caught.value

    task, error = run(scenario())
    assert task["status"] == "failed" and task["statusMessage"].startswith("toolrelay has no model")
    assert error.code == -1


def test_cancelling_a_working_task_stops_it() -> None:
    started = asyncio.Event()

    async def forever(request: ElicitationRequest) -> ElicitationAnswer:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        serving = Serving("2025-11-25", Host(elicitor=forever))
        created = await serving.ask(
            "elicitation/create", {"message": "m", "requestedSchema": FORM, "task": {}}
        )
        await started.wait()
        task_id = created["task"]["taskId"]
        cancelled = await serving.ask("tasks/cancel", {"taskId": task_id})
        await asyncio.sleep(0)
        return cancelled, await serving.ask("tasks/get", {"taskId": task_id})

    cancelled, after = run(scenario())
    assert cancelled["status"] == after["status"] == "cancelled"


def test_tasks_are_only_served_at_2025_11_25_and_unknown_ids_are_invalid() -> None:
    assert error_of(Serving("2025-06-18").ask("tasks/get", {"taskId": "x"})).code == -32601
    assert error_of(Serving("2025-11-25").ask("tasks/get", {"taskId": "x"})).code == -32602


def test_what_toolrelay_does_not_offer_is_method_not_found() -> None:
    error = error_of(Serving("2025-11-25").ask("resources/list"))
    assert (error.code, error.rpc_message) == (
        -32601,
        "Method not found: resources/list (toolrelay does not offer it)",
    )


def test_declining_says_which_option_would_allow_an_answer() -> None:
    request = ElicitationRequest(server="s", call_id=None, mode="url", message="m", url="https://x.test/")
    answer = run(declining("--elicit decline")(request))
    assert answer == ElicitationAnswer(
        "decline", note="server s asked to open https://x.test/; declined: --elicit decline"
    )
