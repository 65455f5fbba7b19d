"""Function tools in a run: served in process as ``py`` (or a named group) beside the
configured servers, recorded with MCP ids, verified, asked consent for, run early when
read-only; a tampered function result is caught."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from tools_module import SAVED, chatty, divide, get_weather, plain_add, refuse, save_note

import toolrelay
from testkit.transcripts import transcript_events
from toolrelay.client.host.elicitation import ElicitationAnswer, ElicitationRequest
from toolrelay.errors import UsageError
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.relay.stages.route import Route
from toolrelay.verify import load_run, verify


def write_script(tmp_path: Path, *calls: dict[str, Any]) -> Path:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"calls": list(calls)}]}), encoding="utf-8")
    return script


def events_of(path: Path) -> list[dict[str, Any]]:
    return transcript_events(path)  # request bodies rebuilt from their deltas


async def approve_all(route: Route, arguments: dict[str, Any]) -> str | None:
    return None


def model_outputs(transcript: Path) -> dict[str, str]:
    """call_id → the function_call_output the model was sent."""
    outputs = {}
    for event in events_of(transcript):
        if event["kind"] == "model_request":
            for item in event["body"].get("input", []):
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    outputs[item["call_id"]] = item["output"]
    return outputs


@pytest.fixture(autouse=True)
def _nothing_saved() -> None:
    SAVED.clear()


def test_two_functions_and_the_file_server_are_recorded_with_mcp_ids_and_verified(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\n")
    script = write_script(
        tmp_path,
        {"name": "py__get_weather", "arguments": {"city": "Oslo"}},
        {"name": "py__save_note", "arguments": {"text": "buy milk", "tags": ["home"]}},
        {"name": "fs__read_text_file", "arguments": {"path": "notes.txt"}},
    )
    transcript = tmp_path / "run.jsonl"
    result = toolrelay.run("go", model="offline", script=script, tools=[get_weather, save_note],
                           config=[in_process_file_server(tmp_path)], transcript=transcript,
                           approve=approve_all)
    assert result.status == "completed"
    assert [(c.server, c.tool, c.status) for c in result.calls] == [
        ("py", "get_weather", "ok"), ("py", "save_note", "ok"), ("fs", "read_text_file", "ok")]
    assert SAVED == ["buy milk"]
    weather = result.calls[0]
    assert weather.result is not None
    assert weather.result["structuredContent"] == {"city": "Oslo", "degrees": 21.5, "unit": "C"}
    events = events_of(transcript)
    sent = [e for e in events if e["kind"] == "mcp_request" and e.get("method") == "tools/call"]
    assert [(e["server"], e["mcp_id"], e["message"]["params"]["_meta"]["io.toolrelay/callId"]) for e in sent
            if e["server"] == "py"] == [("py", c.mcp_id, c.call_id) for c in result.calls[:2]]
    assert verify(load_run(transcript)).ok
    # a copy whose function result says something else than the model was told is rejected
    for event in events:
        if event["kind"] == "mcp_response" and event["server"] == "py" and event["mcp_id"] == weather.mcp_id:
            event["message"]["result"]["content"][0]["text"] = '{"city": "Oslo", "degrees": 35.0}'
            event["message"]["result"]["structuredContent"]["degrees"] = 35.0
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    verdict = verify(load_run(tampered))
    assert not verdict.ok and verdict.broken is not None
    assert weather.call_id is not None and weather.call_id in verdict.broken.message


def test_a_function_not_read_only_asks_consent_and_is_refused_without_approve(tmp_path: Path) -> None:
    asked: list[str] = []

    async def no(route: Route, arguments: dict[str, Any]) -> str | None:
        asked.append(route.tool)
        return "not now"

    script = write_script(tmp_path, {"name": "py__get_weather", "arguments": {"city": "Oslo"}},
                          {"name": "py__save_note", "arguments": {"text": "x"}})
    for approve in (no, None):
        result = toolrelay.run("go", model="offline", script=script, tools=[get_weather, save_note],
                               config=[], approve=approve)
        assert [c.status for c in result.calls] == ["ok", "not_approved"]
    assert asked == ["save_note"] and SAVED == []  # the read-only one is never asked about


def test_failures_reach_the_model_as_tool_errors_and_tracebacks_only_the_transcript(tmp_path: Path) -> None:
    script = write_script(tmp_path, {"name": "py__divide", "arguments": {"a": 1, "b": 0}},
                          {"name": "py__refuse", "arguments": {"reason": "rain"}})
    transcript = tmp_path / "run.jsonl"
    result = toolrelay.run("go", model="offline", script=script, tools=[divide, refuse], config=[],
                           transcript=transcript)
    assert [(c.status, c.message) for c in result.calls] == [
        ("tool_error", "ZeroDivisionError: float division by zero"), ("tool_error", "not today: rain")]
    told = model_outputs(transcript)
    assert told[result.calls[0].call_id or ""] == "Error (tool): ZeroDivisionError: float division by zero"
    assert "Traceback" not in json.dumps(told)
    [divided, refused] = [e["message"]["result"] for e in events_of(transcript)
                          if e["kind"] == "mcp_response" and e.get("method") == "tools/call"]
    assert divided["_meta"]["io.toolrelay/traceback"].startswith("Traceback (most recent call last)")
    assert 'in divide\n    return a / b' in divided["_meta"]["io.toolrelay/traceback"]
    assert "_meta" not in refused  # a deliberate failure has no traceback
    assert verify(load_run(transcript)).ok


def test_named_groups_and_plain_functions_beside_each_other(tmp_path: Path) -> None:
    script = write_script(tmp_path, {"name": "py__plain_add", "arguments": {"a": 2, "b": 3}},
                          {"name": "weather__get_weather", "arguments": {"city": "Bergen", "unit": "F"}})
    result = toolrelay.run("go", model="offline", script=script, config=[],
                           tools=[plain_add, toolrelay.tools_server("weather", [get_weather])],
                           approve=approve_all)
    assert [(c.server, c.status) for c in result.calls] == [("py", "ok"), ("weather", "ok")]
    assert result.calls[0].result is not None and result.calls[0].result["structuredContent"] == {"result": 5}


@pytest.mark.parametrize(("tools", "config", "message"), [
    ([get_weather, toolrelay.tool(lambda: "", name="get_weather")], [],
     "tools=: server py: two tools named get_weather (pass name= to one)"),
    ([toolrelay.tools_server("a", [divide]), toolrelay.tools_server("a", [refuse])], [],
     "tools=: two servers named a (give tools_server another name)"),
    ([get_weather], "FS", "tools=: the function server 'py' has the name of a configured server "
                          "(use toolrelay.tools_server('another', [...]))"),
    ([42], [], "tools=: toolrelay.tool needs a function, not int"),
    ([toolrelay.tools_server("b", [divide], colour="red")], [],
     "tools_server('b'): ServerConfig.__init__() got an unexpected keyword argument 'colour'"),
])
def test_tools_that_cannot_be_served_are_usage_errors(tmp_path: Path, tools: list[Any], config: Any,
                                                      message: str) -> None:
    if config == "FS":
        config = [in_process_file_server(tmp_path, name="py")]
    with pytest.raises(UsageError) as failed:
        toolrelay.run("go", model="offline", tools=tools, config=config)
    assert str(failed.value) == message


def test_the_context_reports_progress_logs_ids_and_asks_the_user(tmp_path: Path) -> None:
    asked: list[ElicitationRequest] = []

    async def elicit(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer(action="accept", content={"name": "Ada"})

    script = write_script(tmp_path, {"name": "py__chatty", "arguments": {"steps": 2}})
    transcript = tmp_path / "run.jsonl"
    result = toolrelay.run("go", model="offline", script=script, tools=[chatty], config=[], elicit=elicit,
                           transcript=transcript)
    [call] = result.calls
    assert call.status == "ok" and call.result is not None
    assert call.result["structuredContent"] == {"call_id": call.call_id, "mcp_id": call.mcp_id, "name": "Ada"}
    assert [(r.server, r.call_id, r.message) for r in asked] == [("py", call.call_id, "Your name?")]
    methods = [e.get("method") for e in events_of(transcript) if e["kind"].startswith("mcp_")
               and e.get("server") == "py"]
    assert methods.count("notifications/progress") == 2
    assert "notifications/message" in methods and "elicitation/create" in methods
    assert verify(load_run(transcript)).ok


def test_run_stream_and_connect_serve_functions_too(tmp_path: Path) -> None:
    script = write_script(tmp_path, {"name": "py__get_weather", "arguments": {"city": "Oslo"}})

    async def stream() -> list[str]:
        options = toolrelay.RunOptions(model="offline", script=script, tools=[get_weather], config=[])
        return [type(event).__name__ async for event in toolrelay.run_stream("go", options)]

    kinds = asyncio.run(stream())
    assert "CallStarted" in kinds and "CallFinished" in kinds and kinds[-1] == "RunFinished"

    async def direct() -> Any:
        async with toolrelay.connect([], tools=[get_weather]) as catalog:
            return await catalog.call("py__get_weather", '{"city": "Rome"}')

    outcome = asyncio.run(direct())
    assert outcome.status == "ok" and outcome.result["structuredContent"]["city"] == "Rome"


def test_a_local_batch_serves_the_functions_to_every_task(tmp_path: Path) -> None:
    script = write_script(tmp_path, {"name": "py__save_note", "arguments": {"text": "from a task"}})
    options = toolrelay.BatchOptions(out=tmp_path / "out", run=toolrelay.RunOptions(
        model="offline", script=script, tools=[save_note], config=[], approve=approve_all))
    results = list(toolrelay.batch([{"id": "a", "task": "one"}, {"id": "b", "task": "two"}], options))
    assert [r.status for r in results] == ["completed", "completed"] and SAVED == ["from a task"] * 2


def test_strict_mode_declares_functions_strictly_and_strips_the_nulls_it_adds(tmp_path: Path) -> None:
    script = write_script(tmp_path, {"name": "py__get_weather", "arguments": {"city": "Oslo", "unit": None}})
    transcript = tmp_path / "run.jsonl"
    result = toolrelay.run("go", model="offline", script=script, tools=[get_weather], config=[], strict=True,
                           transcript=transcript)
    [call] = result.calls
    assert call.status == "ok" and call.request is not None
    assert call.request["params"]["arguments"] == {"city": "Oslo"}  # the default applies
    [declared] = next(e for e in events_of(transcript) if e["kind"] == "model_request")["body"]["tools"]
    assert declared["strict"] is True and declared["parameters"]["required"] == ["city", "unit"]


def test_a_read_only_function_starts_while_the_answer_streams(tmp_path: Path) -> None:
    """The stand-in holds response.completed until the function has run: a run that waited
    for the whole response would never get it."""
    ran = tmp_path / "ran"

    @toolrelay.tool(read_only=True)
    def look() -> str:
        """Look around."""
        ran.touch()
        return "seen"

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"calls": [{"name": "py__look", "arguments": {}}],
                                             "hold_completed_until_file": str(ran)}]}))
    transcript = tmp_path / "run.jsonl"
    result = toolrelay.run("go", model="offline", script=script, tools=[look], config=[],
                           transcript=transcript)
    assert [c.status for c in result.calls] == ["ok"]
    verdict = verify(load_run(transcript))
    assert verdict.ok and any(f.check == "early_start" and f.ok for f in verdict.findings)
