"""toolrelay's client following tasks of the 2026-07-28 tasks extension
``io.modelcontextprotocol/tasks`` (SEP-2663; ``client/ext_tasks.py``), against the official
SDK's server carrying the extension as the locked 2026-07-28 spec says (``ttlMs``,
``pollIntervalMs``, no ``requestState``: one sent is refused), and as the older draft said
(``--draft``: ``ttlSeconds``, ``pollIntervalMilliseconds``, a ``requestState`` a poll must
echo, refused otherwise; its poll interval is honoured): the extension is declared
in every request, a ``resultType: "task"`` answer is polled with ``tasks/get`` to its end,
its input requests answered by the host in ``tasks/update``, a failed task's error and a
cancelled wait (``tasks/cancel``) reported; a 2025-11-25 connection gets plain answers."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from client_helpers import Recorder, async_wait_until, open_connection, run

from testkit.servers import SDK_TASKS_EXT_SERVER
from toolrelay.client.config import ServerConfig
from toolrelay.client.era_probe import modern_headers
from toolrelay.client.host import Host, accept_defaults
from toolrelay.errors import RequestTimeout, RpcError
from toolrelay.events import McpMessage

CONFIG = ServerConfig(name="x", transport="stdio", command=sys.executable, args=(str(SDK_TASKS_EXT_SERVER),))
DRAFT = ServerConfig(name="x", transport="stdio", command=sys.executable,
                     args=(str(SDK_TASKS_EXT_SERVER), "--draft"))
"""The server on the older draft the spec was locked from."""
EXTENSION = "io.modelcontextprotocol/tasks"


def _sent(recorder: Recorder, method: str | None = None) -> list[dict[str, Any]]:
    return [e.message for e in recorder.seen if isinstance(e, McpMessage) and e.direction == "out"
            and "method" in e.message and (method is None or e.message["method"] == method)]


def _answers(recorder: Recorder) -> dict[Any, dict[str, Any]]:
    return {e.message["id"]: e.message for e in recorder.seen if isinstance(e, McpMessage)
            and e.direction == "in" and "id" in e.message and "method" not in e.message}


async def _call(tool: str, arguments: dict[str, Any], log_dir: Path, *, version: str = "2026-07-28",
                host: Host | None = None, timeout: float | None = None, config: ServerConfig = CONFIG
                ) -> tuple[Any, Recorder]:
    recorder = Recorder()
    async with open_connection(config, log_dir, recorder, protocol_version=version, host=host) as connection:
        try:
            got: Any = await connection.call_tool(tool, arguments, call_id="call_1", timeout=timeout)
        except (RequestTimeout, RpcError) as exc:
            got = exc
        return got, recorder


def test_a_task_is_polled_to_its_result_in_the_locked_specs_terms(tmp_path: Path) -> None:
    exchange, recorder = run(_call("slow", {"text": "late hello", "seconds": 0.2}, tmp_path))
    assert exchange.raise_for_error()["content"] == [{"type": "text", "text": "late hello"}]
    call = _sent(recorder, "tools/call")[0]
    declared = call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert declared["extensions"] == {EXTENSION: {}}
    assert exchange.mcp_id == call["id"] and exchange.request == call
    polls, answers = _sent(recorder, "tasks/get"), _answers(recorder)
    assert len(polls) >= 2  # working at least once, then completed
    created = answers[call["id"]]["result"]
    assert created["resultType"] == "task" and created["taskId"] == "ext-task-1"
    assert (created["ttlMs"], created["pollIntervalMs"]) == (600_000, 20) and "requestState" not in created
    for poll in polls:  # the locked spec's params: the task's id alone (no requestState was given)
        assert set(poll["params"]) == {"taskId", "_meta"} and poll["params"]["taskId"] == "ext-task-1"
    assert answers[polls[-1]["id"]]["result"]["status"] == "completed"
    assert all(e.call_id == "call_1" for e in recorder.seen if isinstance(e, McpMessage)
               and str(e.message.get("method", "")).startswith("tasks/"))


def test_on_the_older_draft_each_poll_echoes_the_latest_request_state(tmp_path: Path) -> None:
    exchange, recorder = run(_call("slow", {"text": "late hello", "seconds": 0.2}, tmp_path, config=DRAFT))
    assert exchange.raise_for_error()["content"] == [{"type": "text", "text": "late hello"}]
    call = _sent(recorder, "tools/call")[0]
    polls, answers = _sent(recorder, "tasks/get"), _answers(recorder)
    assert len(polls) >= 2
    previous = answers[call["id"]]["result"]
    for poll in polls:  # each poll echoes the state of the task message before it
        assert poll["params"]["requestState"] == previous["requestState"]
        previous = answers[poll["id"]]["result"]
    assert previous["status"] == "completed"


def test_the_older_drafts_poll_interval_is_honoured(tmp_path: Path) -> None:
    """``pollIntervalMilliseconds`` 2500, above toolrelay's own 1 s default: the first poll
    waits for it (a client reading only ``pollIntervalMs`` would poll after 1 s)."""
    draft_slow_polls = ServerConfig(name="x", transport="stdio", command=sys.executable,
                                    args=(str(SDK_TASKS_EXT_SERVER), "--draft", "--poll-ms", "2500"))
    exchange, recorder = run(_call("slow", {"text": "hi", "seconds": 0}, tmp_path, config=draft_slow_polls))
    assert exchange.raise_for_error()["content"][0]["text"] == "hi"
    messages = [e for e in recorder.seen if isinstance(e, McpMessage)]
    call = next(e for e in messages if e.method == "tools/call" and e.direction == "out")
    created = next(e for e in messages if e.direction == "in" and e.mcp_id == call.mcp_id)
    assert created.message["result"]["pollIntervalMilliseconds"] == 2500
    first_poll = next(e for e in messages if e.method == "tasks/get" and e.direction == "out")
    assert first_poll.time - created.time >= 2.4


def test_a_task_asking_for_input_is_answered_by_the_host_in_tasks_update(tmp_path: Path) -> None:
    exchange, recorder = run(_call("ask", {}, tmp_path, host=Host(elicitor=accept_defaults)))
    assert exchange.raise_for_error()["content"][0]["text"] == "hello Ada"
    updates = _sent(recorder, "tasks/update")
    assert len(updates) == 1  # the key is answered once, however often a poll shows it
    given = updates[0]["params"]["inputResponses"]
    assert given == {"name-1": {"action": "accept", "content": {"name": "Ada"}}}
    assert updates[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


def test_without_an_elicitor_the_task_is_told_declined(tmp_path: Path) -> None:
    exchange, recorder = run(_call("ask", {}, tmp_path))
    assert exchange.raise_for_error()["content"][0]["text"] == "hello nobody"
    assert _sent(recorder, "tasks/update")[0]["params"]["inputResponses"]["name-1"]["action"] == "decline"


def test_a_failed_task_gives_its_json_rpc_error(tmp_path: Path) -> None:
    exchange, _ = run(_call("fail", {}, tmp_path))
    with pytest.raises(RpcError) as raised:
        exchange.raise_for_error()
    assert (raised.value.code, raised.value.rpc_message) == (-32001, "backend refused the job")


@pytest.mark.parametrize("draft", [False, True], ids=["locked", "draft"])
def test_a_task_past_the_call_timeout_is_cancelled(tmp_path: Path, draft: bool) -> None:
    got, recorder = run(_call("forever", {}, tmp_path, timeout=0.5, config=DRAFT if draft else CONFIG))
    assert isinstance(got, RequestTimeout)
    assert str(got) == ("tools/call forever (task ext-task-1) did not end within 0.5 s; toolrelay cancelled "
                        "the task (tasks/cancel)")
    cancel = _sent(recorder, "tasks/cancel")
    assert len(cancel) == 1 and cancel[0]["params"]["taskId"] == "ext-task-1"
    assert _answers(recorder)[cancel[0]["id"]]["result"]["resultType"] == "complete"
    if not draft:  # the locked spec's cancel names the task alone
        assert set(cancel[0]["params"]) == {"taskId", "_meta"}
        return
    # the latest state answered before the cancel went out (a poll still in flight at the
    # deadline is given up, its answer, if any, read later)
    seen = [e.message for e in recorder.seen if isinstance(e, McpMessage)]
    before = seen[:seen.index(cancel[0])]
    polls = {m["id"] for m in before if m.get("method") == "tasks/get"}
    answered = [m for m in before if "method" not in m and m.get("id") in polls]
    assert answered, "no poll was answered before the deadline"
    assert cancel[0]["params"]["requestState"] == answered[-1]["result"]["requestState"]


def test_a_plain_tool_and_a_2025_connection_are_not_tasks(tmp_path: Path) -> None:
    exchange, recorder = run(_call("plain", {"text": "now"}, tmp_path))
    assert exchange.raise_for_error()["content"][0]["text"] == "now" and not _sent(recorder, "tasks/get")
    exchange, recorder = run(_call("slow", {"text": "now"}, tmp_path, version="2025-11-25"))
    assert exchange.raise_for_error()["content"][0]["text"] == "now" and not _sent(recorder, "tasks/get")


def test_over_http_a_task_request_names_its_task_in_mcp_name() -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "toolrelay", "version": "0"}}
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        params = {"taskId": "ext-task-1", "_meta": meta}
        message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        headers = modern_headers(message)
        assert (headers["mcp-method"], headers["mcp-name"]) == (method, "ext-task-1")


def test_cancelling_the_call_cancels_its_task(tmp_path: Path) -> None:
    """Ctrl-C cancels the run's calls: a call the server made a task sends tasks/cancel first."""
    recorder = Recorder()

    def polled() -> bool:
        return any(isinstance(e, McpMessage) and e.direction == "in" and e.method == "tasks/get"
                   for e in recorder.seen)

    async def main() -> None:
        async with open_connection(CONFIG, tmp_path, recorder, protocol_version="2026-07-28") as connection:
            call = asyncio.ensure_future(connection.call_tool("forever", {}, call_id="call_1"))
            assert await async_wait_until(polled)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call

    run(main())
    cancels = [e for e in recorder.seen if isinstance(e, McpMessage) and e.method == "tasks/cancel"]
    assert [(e.direction, e.call_id) for e in cancels] == [("out", "call_1"), ("in", "call_1")]
    assert cancels[0].message["params"]["taskId"] == "ext-task-1"
    acknowledged = cancels[1].message["result"]  # an empty result, as the SEP says
    assert {key: value for key, value in acknowledged.items() if key != "_meta"} == {"resultType": "complete"}
