"""The offline stand-in model without a script: the seed's scenario over real HTTP.

It is a stand-in for a hosted model (which cannot run here); these tests hold it to the
Responses wire format (spec.md §C3, §C5) and to the seed's walkthrough."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from offline_helpers import get_json, post_json, raw_exchange

from responses_helpers import read_tool, run
from toolrelay.errors import TransportError
from toolrelay.offline import OfflineModel
from toolrelay.offline.wire import OFFLINE_EPOCH

RESPONSE_FIELDS = {
    "id",
    "object",
    "created_at",
    "status",
    "background",
    "completed_at",
    "error",
    "incomplete_details",
    "instructions",
    "max_output_tokens",
    "max_tool_calls",
    "metadata",
    "model",
    "output",
    "parallel_tool_calls",
    "previous_response_id",
    "prompt_cache_key",
    "reasoning",
    "safety_identifier",
    "service_tier",
    "store",
    "temperature",
    "text",
    "tool_choice",
    "tools",
    "top_logprobs",
    "top_p",
    "truncation",
    "usage",
    "user",
}


def task(text: str, *tools: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "model": "offline",
        "input": [{"role": "user", "content": text}],
        "tools": list(tools) or [read_tool()],
        **extra,
    }


def respond(model: OfflineModel, body: dict[str, Any]) -> dict[str, Any]:
    status, answer, _ = post_json(f"{model.base_url}/responses", body)
    assert status == 200, answer
    assert isinstance(answer, dict)
    return answer


def output_of(call: dict[str, Any], output: Any) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call["call_id"], "output": output}


def test_first_turn_calls_the_read_tool_with_strict_arguments() -> None:
    with OfflineModel() as model:
        response = respond(model, task("Read the first 20 lines of notes.txt and summarise them."))
    assert set(response) == RESPONSE_FIELDS
    assert response["id"] == "resp_offline_0001" and response["object"] == "response"
    assert response["status"] == "completed" and response["created_at"] == OFFLINE_EPOCH
    assert response["error"] is None and response["incomplete_details"] is None
    assert response["output"] == [
        {
            "id": "fc_offline_0001",
            "type": "function_call",
            "status": "completed",
            "arguments": '{"path":"notes.txt","head":20,"tail":null}',
            "call_id": "call_offline_0001",
            "name": "fs__read_text_file",
        }
    ]
    assert response["tools"] == [read_tool()] and response["tool_choice"] == "auto"
    assert response["parallel_tool_calls"] is True and response["store"] is True
    usage = response["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"] > 0
    assert usage["input_tokens_details"]["cached_tokens"] == 0
    assert usage["output_tokens_details"]["reasoning_tokens"] == 0


def test_non_strict_arguments_leave_optional_properties_out() -> None:
    with OfflineModel() as model:
        response = respond(model, task("Show the first 5 lines of todo.md.", read_tool(strict=False)))
    assert response["output"][0]["arguments"] == '{"path":"todo.md","head":5}'


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ("last 3 lines of logs/app.log please", '{"path":"logs/app.log","head":null,"tail":3}'),
        ("读取 notes.txt 的前 20 行", '{"path":"notes.txt","head":20,"tail":null}'),
        ("What does README.md say?", '{"path":"README.md","head":20,"tail":null}'),
        ("Hello", '{"path":"notes.txt","head":20,"tail":null}'),
        ("Show the first 7 lines of the file docs/guide.md", '{"path":"docs/guide.md","head":7,"tail":null}'),
        ("读取notes.txt的最后5行", '{"path":"notes.txt","head":null,"tail":5}'),
        ("Summarise a file, e.g. the notes", '{"path":"notes.txt","head":20,"tail":null}'),
        ("read /etc/passwd", '{"path":"/etc/passwd","head":20,"tail":null}'),
    ],
)
def test_path_and_line_count_come_from_the_task(text: str, arguments: str) -> None:
    with OfflineModel() as model:
        assert respond(model, task(text))["output"][0]["arguments"] == arguments


def test_prefers_fs_read_text_file_and_falls_back_to_any_read_text_file() -> None:
    with OfflineModel() as model:
        both = task("x", read_tool("docs__read_text_file"), read_tool("fs__read_text_file"))
        assert respond(model, both)["output"][0]["name"] == "fs__read_text_file"
        other = task(
            "x",
            {"type": "function", "name": "echo", "parameters": {"type": "object", "properties": {}}},
            read_tool("docs__read_text_file"),
        )
        assert respond(model, other)["output"][0]["name"] == "docs__read_text_file"


def test_required_properties_it_knows_nothing_about_get_placeholders() -> None:
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "encoding": {"type": "string", "enum": ["utf-8", "latin-1"]},
            "limit": {"type": "integer"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "head": {"type": "integer"},
        },
        "required": ["path", "encoding", "limit", "note"],
    }
    tool = {"type": "function", "name": "fs__read_text_file", "parameters": parameters}
    with OfflineModel() as model:
        arguments = respond(model, task("first 2 lines of a.txt", tool))["output"][0]["arguments"]
    assert arguments == '{"path":"a.txt","encoding":"utf-8","limit":0,"note":null,"head":2}'


def test_second_turn_quotes_the_tool_output() -> None:
    with OfflineModel() as model:
        body = task("first 2 lines of notes.txt")
        first = respond(model, body)
        call = first["output"][0]
        replay = {**body, "input": [*body["input"], *first["output"], output_of(call, "line one\nline two")]}
        second = respond(model, replay)
    assert second["id"] == "resp_offline_0002" and second["created_at"] == OFFLINE_EPOCH + 1
    assert second["output"] == [
        {
            "id": "msg_offline_0001",
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [
                {
                    "type": "output_text",
                    "text": "The tool returned:\nline one\nline two",
                    "annotations": [],
                    "logprobs": [],
                }
            ],
        }
    ]


def test_a_failed_tool_is_quoted_as_failed_and_list_outputs_name_other_parts() -> None:
    failure = "Error (tool): Access denied - path outside allowed directories: /etc/passwd"
    parts = [
        {"type": "input_text", "text": "caption"},
        {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "auto"},
        {"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,AA"},
    ]
    with OfflineModel() as model:
        body = task("read /etc/passwd")
        call = respond(model, body)["output"][0]
        call_item = {
            "type": "function_call",
            "call_id": call["call_id"],
            "name": call["name"],
            "arguments": call["arguments"],
        }
        failed = respond(model, {**body, "input": [*body["input"], call_item, output_of(call, failure)]})
        listed = respond(model, {**body, "input": [*body["input"], call_item, output_of(call, parts)]})
    assert failed["output"][0]["content"][0]["text"] == f"The tool returned:\n{failure}"
    assert listed["output"][0]["content"][0]["text"] == (
        "The tool returned:\ncaption\n[input_image part auto: not quoted]\n"
        "[input_file part a.pdf: not quoted]"
    )


def test_several_outputs_are_each_quoted_with_their_call() -> None:
    calls = [
        {"type": "function_call", "call_id": f"c{i}", "name": f"fs__t{i}", "arguments": "{}"} for i in (1, 2)
    ]
    outputs = [
        {"type": "function_call_output", "call_id": "c1", "output": "one"},
        {"type": "function_call_output", "call_id": "c2", "output": "two"},
    ]
    with OfflineModel() as model:
        body = task("x")
        answer = respond(model, {**body, "input": [*body["input"], *calls, *outputs]})
    assert answer["output"][0]["content"][0]["text"] == (
        "The tools returned:\n\n1. fs__t1 (c1) returned:\none\n\n2. fs__t2 (c2) returned:\ntwo"
    )


def test_without_a_read_tool_it_says_so_and_names_the_offered_tools() -> None:
    echo = {"type": "function", "name": "util__echo", "parameters": {"type": "object", "properties": {}}}
    with OfflineModel() as model:
        offered = respond(model, task("first 5 lines of a.txt", echo))
        none = respond(model, {"model": "offline", "input": "read a.txt"})
        refused = respond(model, task("read a.txt", tool_choice="none"))
    assert offered["output"][0]["content"][0]["text"] == (
        "I have no read_text_file tool to read the file with. Tools offered: util__echo."
    )
    assert none["output"][0]["content"][0]["text"] == (
        "I have no read_text_file tool to read the file with. I was offered no tools."
    )
    assert refused["output"][0]["content"][0]["text"] == (
        "tool_choice is none, so I did not call a tool. Tools offered: fs__read_text_file."
    )


def test_a_named_tool_choice_is_followed() -> None:
    other = read_tool("docs__read_text_file")
    with OfflineModel() as model:
        body = task("x", read_tool(), other, tool_choice={"type": "function", "name": "docs__read_text_file"})
        assert respond(model, body)["output"][0]["name"] == "docs__read_text_file"


def test_chain_mode_continues_a_stored_response() -> None:
    with OfflineModel() as model:
        body = task("first 3 lines of notes.txt")
        call = respond(model, body)["output"][0]
        chained = {
            "model": "offline",
            "tools": body["tools"],
            "previous_response_id": "resp_offline_0001",
            "input": [output_of(call, "a\nb\nc")],
        }
        answer = respond(model, chained)
    assert answer["previous_response_id"] == "resp_offline_0001"
    assert answer["output"][0]["content"][0]["text"] == "The tool returned:\na\nb\nc"


def test_two_runs_give_identical_responses() -> None:
    def one_run() -> list[bytes]:
        with OfflineModel() as model:
            body = task("first 4 lines of notes.txt")
            _, first, _ = post_json(f"{model.base_url}/responses", body)
            replay = {**body, "input": [*body["input"], *first["output"], output_of(first["output"][0], "x")]}
            _, second, _ = post_json(f"{model.base_url}/responses", replay)
            return [json.dumps(first).encode(), json.dumps(second).encode()]

    assert one_run() == one_run()


def test_streaming_follows_the_responses_event_sequence() -> None:
    with OfflineModel() as plain, OfflineModel() as streaming:
        expected = respond(plain, task("x"))
        status, text, headers = post_json(f"{streaming.base_url}/responses", task("x", stream=True))
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    events = [block.split("\n") for block in text.strip().split("\n\n")]
    names = [lines[0].removeprefix("event: ") for lines in events]
    datas = [json.loads(lines[1].removeprefix("data: ")) for lines in events]
    assert names == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [d["sequence_number"] for d in datas] == list(range(7))
    assert [d["type"] for d in datas] == names
    assert datas[0]["response"]["status"] == "in_progress" and datas[0]["response"]["output"] == []
    assert datas[2]["item"]["arguments"] == "" and datas[3]["item_id"] == "fc_offline_0001"
    assert datas[4]["arguments"] == expected["output"][0]["arguments"]
    assert datas[-1]["response"] == expected


def test_side_endpoints_and_errors_of_the_http_layer() -> None:
    with OfflineModel() as model:
        root = model.base_url.removesuffix("/v1")
        respond(model, task("x"))
        stats = get_json(f"{root}/_stats")
        assert stats["requests"] == 1 and stats["handler_s_total"] > 0
        assert model.handler_seconds == pytest.approx(stats["handler_s_total"], abs=1e-5)
        assert post_json(f"{root}/_stats/reset", {})[0] == 200
        assert get_json(f"{root}/_stats")["requests"] == 0
        assert post_json(f"{root}/v1/completions", {})[:2] == (
            404,
            {
                "error": {
                    "message": "Invalid URL (POST /v1/completions)",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            },
        )
        status, body, _ = post_json(f"{model.base_url}/responses", b"{not json")
        assert status == 400 and body["error"]["message"].startswith("We could not parse the JSON body")
        deep = b'{"model": "offline", "input": ' + b"[" * 5000 + b"]" * 5000 + b"}"
        status, body, _ = post_json(f"{model.base_url}/responses", deep)
        assert status == 400 and body["error"]["message"].startswith("We could not parse the JSON body")
        assert len(model.requests) == 1


@pytest.mark.parametrize(
    ("request_bytes", "status_line", "message"),
    [
        (
            b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n"
            b"\r\n2\r\n{}\r\n0\r\n\r\n",
            b"HTTP/1.1 411 Length Required",
            "A Content-Length header is required.",
        ),
        (
            b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 67108865\r\n"
            b"Connection: close\r\n\r\n",
            b"HTTP/1.1 413 Request Entity Too Large",
            "Request body larger than 67108864 bytes.",
        ),
        (
            b"DELETE /v1/responses/resp_1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            b"HTTP/1.1 404 Not Found",
            "Invalid URL (DELETE /v1/responses/resp_1)",
        ),
    ],
    ids=["chunked", "too-large", "other-method"],
)
def test_requests_the_stand_in_refuses_get_the_api_error_body(
    request_bytes: bytes, status_line: bytes, message: str
) -> None:
    with OfflineModel() as model:
        answer = raw_exchange(model.base_url, request_bytes)
        assert model.requests == []
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == status_line
    assert b"Content-Type: application/json" in head.split(b"\r\n")
    assert json.loads(body) == {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    }


def test_a_port_already_taken_is_named() -> None:
    with OfflineModel() as first:
        port = int(first.base_url.split(":")[-1].removesuffix("/v1"))
        taken = f"cannot listen on 127.0.0.1:{port}: address already in use"
        with pytest.raises(TransportError, match=taken):
            OfflineModel(port=port).start()
        busy = subprocess.run(
            [sys.executable, "-m", "toolrelay.offline", "--port", str(port)],
            capture_output=True, text=True, timeout=30,
        )
    assert busy.returncode == 3 and busy.stdout == ""
    assert busy.stderr.startswith(f"toolrelay: {taken}")


def test_sync_and_async_use_and_loopback_only() -> None:
    async def inside_a_loop() -> str:
        async with OfflineModel() as model:
            return respond(model, task("x"))["id"]

    assert run(inside_a_loop()) == "resp_offline_0001"
    with pytest.raises(Exception, match="loopback only"):
        OfflineModel(host="0.0.0.0")
