"""Offline model scripts: the file format's checks, and each kind of entry end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from offline_helpers import after_turns, post_json

from responses_helpers import read_tool, recorded_stream, run
from testkit.processes import spawned
from toolrelay.errors import ModelError, UsageError
from toolrelay.model import ModelEndpoint, ModelReply, ResponsesClient
from toolrelay.offline import OfflineModel, ScriptedCall, load_script, parse_script

USER = {"role": "user", "content": "go"}


def write(tmp_path: Path, content: Any) -> Path:
    path = tmp_path / "script.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def ask(model: OfflineModel, **body: Any) -> dict[str, Any]:
    status, answer, _ = post_json(
        f"{model.base_url}/responses", {"model": "offline", "input": [USER], "tools": [read_tool()], **body}
    )
    assert status == 200, answer
    assert isinstance(answer, dict)
    return answer


# -- the file format -----------------------------------------------------------------------------------


def test_load_script_reads_every_kind_of_entry(tmp_path: Path) -> None:
    script = load_script(
        write(
            tmp_path,
            {
                "description": "demo",
                "turns": [
                    {
                        "calls": [
                            {"name": "fs__read_text_file", "arguments": {"path": "ü.txt", "head": 3}},
                            {"name": "x", "arguments_text": "{not json", "call_id": "call_fixed"},
                        ],
                        "reasoning": True,
                    },
                    {"http_status": 429, "retry_after": 0},
                    {"auto": True},
                    {"status": "incomplete"},
                ],
            },
        )
    )
    first = script.turns[0]
    assert first.calls == (
        ScriptedCall(name="fs__read_text_file", arguments_text='{"path":"ü.txt","head":3}'),
        ScriptedCall(name="x", arguments_text="{not json", call_id="call_fixed"),
    )
    assert first.reasoning is True and not first.is_fault
    assert script.turns[1].is_fault and script.turns[1].retry_after == 0.0
    assert script.turns[2].auto and script.turns[3].reason == "max_output_tokens"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "{",
            "script {path} is not valid JSON: line 1 column 2: "
            "Expecting property name enclosed in double quotes",
        ),
        ([], 'script {path}: expected an object {{"turns": [...]}}'),
        ({"turns": [], "turn": 1},
         "script {path}: unknown key 'turn' (expected turns, sampling, description)"),
        (
            {"turns": [{"message": "a"}, {"cals": []}]},
            "script {path}: turns[1]: unknown key 'cals' (expected one of: after_calls, auto, calls, "
            "compact, error, hold_completed_until_file, hold_timeout, http_status, message, pause, preamble, "
            "reason, reasoning, refusal, retry_after, retry_after_ms, search, status, stream_fault, "
            "tokens_per_second)",
        ),
        (
            {"turns": [{}]},
            "script {path}: turns[0]: empty entry; give calls, message, refusal, status, http_status or auto",
        ),
        (
            {"turns": [{"calls": [{"name": "f", "arguments": {}, "arguments_text": "{}"}]}]},
            "script {path}: turns[0].calls[0]: give exactly one of arguments (a JSON value) "
            "or arguments_text (text)",
        ),
        (
            {"turns": [{"calls": [{"arguments": {}}]}]},
            "script {path}: turns[0].calls[0]: name must be a non-empty string",
        ),
        (
            {"turns": [{"calls": [{"name": "read", "namespace": 7, "arguments": {}}]}]},
            "script {path}: turns[0].calls[0]: namespace must be a non-empty string",
        ),
        (
            {"turns": [{"http_status": 200}]},
            "script {path}: turns[0]: http_status must be an integer from 400 to 599, got 200",
        ),
        (
            {"turns": [{"http_status": 500, "message": "x"}]},
            "script {path}: turns[0]: 'message' cannot go with http_status "
            "(allowed: retry_after, retry_after_ms, "
            "error)",
        ),
        (
            {"turns": [{"status": "done"}]},
            "script {path}: turns[0]: status must be one of completed, incomplete, failed, cancelled, "
            "got 'done'",
        ),
        (
            {"turns": [{"message": "x", "reason": "max_output_tokens"}]},
            'script {path}: turns[0]: "reason" goes with status "incomplete" only',
        ),
        (
            {"turns": [{"message": "x", "refusal": "y"}]},
            "script {path}: turns[0]: give either message or refusal, not both",
        ),
        (
            {"turns": [{"http_status": 429, "retry_after": -1}]},
            "script {path}: turns[0]: retry_after must be a number >= 0",
        ),
    ],
    ids=[
        "json",
        "not-object",
        "top-key",
        "turn-key",
        "empty",
        "both-arguments",
        "no-name",
        "bad-namespace",
        "status-range",
        "fault-extra",
        "bad-status",
        "reason",
        "message-and-refusal",
        "negative-wait",
    ],
)
def test_bad_scripts_are_usage_errors_naming_the_place(tmp_path: Path, content: Any, message: str) -> None:
    path = write(tmp_path, content)
    with pytest.raises(UsageError) as failed:
        load_script(path)
    assert str(failed.value) == message.format(path=path)
    assert failed.value.exit_code == 2


def test_a_script_nested_too_deep_is_a_usage_error(tmp_path: Path) -> None:
    path = write(tmp_path, '{"turns": ' + "[" * 5000 + "]" * 5000 + "}")
    with pytest.raises(UsageError) as failed:
        load_script(path)
    # the 513th bracket: '{' and 511 '[' after the 10 characters of '{"turns": '
    said = f"script {path} is not valid JSON: line 1 column 522: nested deeper than 512 levels"
    assert str(failed.value) == said


def test_a_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as failed:
        OfflineModel(tmp_path / "nope.json")
    assert str(failed.value) == f"cannot read script {tmp_path / 'nope.json'}: No such file or directory"


# -- entries end to end -----------------------------------------------------------------------------------


def test_parallel_calls_with_invalid_json_arguments_and_reasoning() -> None:
    script = parse_script(
        {
            "turns": [
                {
                    "reasoning": "two reads",
                    "message": "Reading both.",
                    "calls": [
                        {
                            "name": "fs__read_text_file",
                            "arguments": {"path": "a.txt", "head": 1, "tail": None},
                        },
                        {"name": "fs__read_text_file", "arguments_text": "{not json"},
                    ],
                }
            ]
        }
    )
    with OfflineModel(script) as model:
        plain = ask(model)
        model.reset()
        encrypted = ask(model, include=["reasoning.encrypted_content"])
    assert plain["output"] == [
        {
            "id": "rs_offline_0001",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "two reads"}],
        },
        {
            "id": "msg_offline_0001",
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Reading both.", "annotations": [], "logprobs": []}],
        },
        {
            "id": "fc_offline_0001",
            "type": "function_call",
            "status": "completed",
            "arguments": '{"path":"a.txt","head":1,"tail":null}',
            "call_id": "call_offline_0001",
            "name": "fs__read_text_file",
        },
        {
            "id": "fc_offline_0002",
            "type": "function_call",
            "status": "completed",
            "arguments": "{not json",
            "call_id": "call_offline_0002",
            "name": "fs__read_text_file",
        },
    ]
    assert plain["usage"]["output_tokens_details"]["reasoning_tokens"] == 8
    assert encrypted["output"][0]["encrypted_content"].startswith("gAAAAB")


def test_refusal_incomplete_failed_and_cancelled_responses() -> None:
    script = parse_script(
        {
            "turns": [
                {"refusal": "I can't help with that."},
                {"status": "incomplete", "reason": "content_filter", "message": "Partial"},
                {"status": "failed", "error": {"code": "server_error", "message": "The model crashed."}},
                {"status": "cancelled"},
            ]
        }
    )
    with OfflineModel(script) as model:
        refusal, incomplete, failed, cancelled = (ask(model, input=after_turns(n)) for n in range(4))
    assert refusal["output"][0]["content"] == [{"type": "refusal", "refusal": "I can't help with that."}]
    assert incomplete["status"] == "incomplete"
    assert incomplete["incomplete_details"] == {"reason": "content_filter"}
    assert incomplete["output"][0]["status"] == "incomplete" and incomplete["completed_at"] is None
    assert failed["status"] == "failed" and failed["output"] == []
    assert failed["error"] == {"code": "server_error", "message": "The model crashed."}
    assert cancelled["status"] == "cancelled" and cancelled["error"] is None


def test_after_the_script_the_final_message_quotes_the_outputs() -> None:
    script = parse_script(
        {"turns": [{"calls": [{"name": "fs__read_text_file", "arguments": {"path": "a"}}]}]}
    )
    with OfflineModel(script) as model:
        first = ask(model)
        call = first["output"][0]
        result = {
            "type": "function_call_output",
            "call_id": call["call_id"],
            "output": "Error (tool): ENOENT",
        }
        final = ask(model, input=[USER, call, result])
    assert final["output"][0]["content"][0]["text"] == "The tool returned:\nError (tool): ENOENT"


def test_auto_entries_play_the_seed_scenario() -> None:
    script = parse_script({"turns": [{"auto": True}, {"message": "scripted"}]})
    with OfflineModel(script) as model:
        assert ask(model)["output"][0]["type"] == "function_call"
        assert ask(model, input=after_turns(1))["output"][0]["content"][0]["text"] == "scripted"


def test_http_faults_drive_the_client_retry_path() -> None:
    script = parse_script(
        {
            "turns": [
                {"http_status": 500},
                {"http_status": 429, "retry_after": 0},
                {"message": "after two failures"},
            ]
        }
    )
    events, recorder = recorded_stream()
    with OfflineModel(script) as model:

        async def send() -> ModelReply:
            async with ResponsesClient(
                ModelEndpoint(base_url=model.base_url), events=events, backoff=0.01
            ) as client:
                return await client.create({"model": "offline", "input": "hi"}, turn=1)

        reply = run(send())
        assert len(model.requests) == 3
    assert reply.attempts == 3 and reply.body["output"][0]["content"][0]["text"] == "after two failures"
    responses = recorder.records("model_response")
    assert [r["status"] for r in responses] == [500, 429, 200]
    assert responses[0]["body"]["error"]["message"] == (
        "The server had an error while processing your request. Sorry about that!"
    )
    assert responses[1]["body"]["error"]["code"] == "rate_limit_exceeded"


def test_a_scripted_client_error_ends_the_request() -> None:
    script = parse_script({"turns": [{"http_status": 400, "error": "Scripted refusal."}]})
    events, _ = recorded_stream()
    with OfflineModel(script) as model:

        async def send() -> None:
            async with ResponsesClient(ModelEndpoint(base_url=model.base_url), events=events) as client:
                await client.create({"model": "offline", "input": "hi"}, turn=1)

        with pytest.raises(ModelError) as failed:
            run(send())
    assert str(failed.value) == "model endpoint answered 400 Bad Request: Scripted refusal."


def test_fault_headers_are_sent() -> None:
    script = parse_script({"turns": [{"http_status": 429, "retry_after": 2, "retry_after_ms": 1500}]})
    with OfflineModel(script) as model:
        status, body, headers = post_json(f"{model.base_url}/responses", {"model": "offline", "input": "x"})
    assert status == 429 and headers["Retry-After"] == "2" and headers["retry-after-ms"] == "1500"
    assert (
        body["error"]["message"]
        == "Rate limit reached for requests on the offline model. Please try again in 2s."
    )


def test_standalone_offline_model_process(tmp_path: Path) -> None:
    missing = subprocess.run(
        [sys.executable, "-m", "toolrelay.offline", "--script", str(tmp_path / "x.json")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert missing.returncode == 2
    assert (
        missing.stderr == f"toolrelay: cannot read script {tmp_path / 'x.json'}: No such file or directory\n"
    )
    script = write(tmp_path, {"turns": [{"message": "from the script"}]})
    with spawned(
        [sys.executable, "-m", "toolrelay.offline", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline().strip()
            assert line.startswith("OFFLINE_MODEL_BASE_URL=http://127.0.0.1:")
            base_url = line.split("=", 1)[1]
            status, answer, _ = post_json(f"{base_url}/responses", {"model": "offline", "input": "hi"})
            assert status == 200 and answer["output"][0]["content"][0]["text"] == "from the script"
        finally:
            process.terminate()
            process.wait(timeout=10)


def test_after_the_script_it_never_calls_again() -> None:
    script = parse_script({"turns": [{"message": "only turn"}]})
    with OfflineModel(script) as model:
        assert ask(model)["output"][0]["content"][0]["text"] == "only turn"
        # turn 2, and the last item is a new question, not an output to quote
        assert ask(model, input=[*after_turns(1), {"role": "user", "content": "and?"}])["output"] == [
            {
                "id": "msg_offline_0002",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": "The script has no more turns, and no tool output came back to quote.",
                        "annotations": [],
                        "logprobs": [],
                    }
                ],
            }
        ]
