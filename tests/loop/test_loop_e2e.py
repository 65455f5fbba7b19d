"""The relay loop end to end: the offline model (a stand-in for the hosted model, a real
loopback HTTP server speaking the Responses wire format) and the real file service (over
stdio for the seed scenario, in-process for the rest). Every test asserts on the exact
request bodies the endpoint received; the tests that take ``dialect`` run in both model
dialects (``--api responses`` and ``--api chat``: the bodies read back in the Responses
vocabulary, each checked against the openai types of its dialect)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from loop_helpers import NOTES, make_workspace, named, run_script

from testkit.dialect import Dialect
from toolrelay.client.config import builtin_file_server
from toolrelay.relay.loop import RunLimits
from toolrelay.relay.stages.namespaces import function_tools_by_alias

FIRST_20 = "".join(f"line {i}\n" for i in range(1, 21))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "workspace")


def call(name: str, declare: str = "flat", **arguments: object) -> dict[str, object]:
    return {**named(name, declare), "arguments": arguments}


EACH_DECLARATION = pytest.mark.parametrize("declare", ["flat", "namespaces"])
EACH_DECLARATION_AND_DIALECT = pytest.mark.parametrize(
    ("declare", "dialect"), [("flat", "responses"), ("namespaces", "responses"), ("flat", "chat")],
    indirect=["dialect"])
"""Chat has no namespaces (``--declare namespaces`` is refused with ``--api chat``)."""


def test_seed_scenario_pairs_the_call_and_replays_the_context(workspace: Path, dialect: Dialect) -> None:
    run = run_script(workspace, None, servers=[builtin_file_server(workspace)], dialect=dialect)  # a process
    first, second = run.requests
    assert run.result.status == "completed"
    # Round 1: the task and the declarations (rules) at the root of the body.
    assert first["input"] == [{"role": "user", "content": "Read the first 20 lines of notes.txt"}]
    assert first["tool_choice"] == "auto"
    declared = {t["name"]: t for t in first["tools"]}
    assert declared["fs__read_text_file"]["parameters"]["properties"]["path"]["type"] == "string"
    # Round 2: the original input, the model's call item unchanged, then the output.
    output_1 = run.answer(0)
    call_item = next(i for i in output_1 if i["type"] == "function_call")
    assert isinstance(call_item["arguments"], str)
    assert second["input"] == [
        *first["input"],
        *output_1,
        {
            "type": "function_call_output",
            "call_id": call_item["call_id"],
            "output": FIRST_20,
        },
    ]
    assert second["tools"] == first["tools"]  # rules do not change between rounds
    # The MCP side got the same values as an object, and the ids are linked.
    [outcome] = run.result.calls
    assert outcome.status == "ok" and outcome.call_id == call_item["call_id"]
    assert outcome.request is not None
    sent = {"name": "read_text_file", "arguments": json.loads(call_item["arguments"])}
    assert {key: outcome.request["params"][key] for key in sent} == sent  # beside 2026-07-28's _meta
    assert outcome.request["params"]["_meta"]["progressToken"] == f"{call_item['call_id']}-1"
    assert outcome.response is not None and outcome.response["id"] == outcome.request["id"] == outcome.mcp_id
    mcp_events = [e for e in run.records("mcp_request") if e["call_id"] == call_item["call_id"]]
    # the file server asked for the roots (input_required): the call went again with them, a new id
    assert len(mcp_events) == 2 and mcp_events[-1]["mcp_id"] == outcome.mcp_id
    assert run.result.final_text == "The tool returned:\n" + FIRST_20


@EACH_DECLARATION_AND_DIALECT
def test_two_parallel_calls_get_outputs_in_the_calls_order(
    workspace: Path, declare: str, dialect: Dialect
) -> None:
    script = {
        "turns": [
            {
                "calls": [
                    call("fs__read_text_file", declare, path="notes.txt", head=2),
                    call("fs__read_text_file", declare, path="todo.md", tail=1),
                ]
            },
            {"message": "done"},
        ]
    }
    run = run_script(workspace, script, declare=declare, dialect=dialect)
    calls = [i for i in run.answer(0) if i["type"] == "function_call"]
    outputs = run.outputs(1)
    assert [o["call_id"] for o in outputs] == [c["call_id"] for c in calls]
    assert [o["output"] for o in outputs] == ["line 1\nline 2\n", "- ship\n"]
    assert len({c.mcp_id for c in run.result.calls}) == 2
    assert run.result.status == "completed" and run.result.final_text == "done"


@EACH_DECLARATION_AND_DIALECT
def test_a_tool_error_is_fed_back_as_an_error_and_never_as_success(
    workspace: Path, declare: str, dialect: Dialect
) -> None:
    script = {"turns": [{"calls": [call("fs__read_text_file", declare, path="missing.txt")]}]}
    run = run_script(workspace, script, declare=declare, dialect=dialect)
    [outcome] = run.result.calls
    assert outcome.status == "tool_error"
    [output] = run.outputs(1)
    assert output["output"].startswith("Error (tool): ")
    assert "missing.txt" in output["output"]
    # The model answered: the run completed, and the failed call is still reported.
    assert run.result.status == "completed"
    assert run.result.final_text is not None and "Error (tool)" in run.result.final_text


def test_invalid_json_arguments_never_reach_the_server(workspace: Path, dialect: Dialect) -> None:
    script = {"turns": [{"calls": [{"name": "fs__read_text_file", "arguments_text": "{not json"}]}]}
    run = run_script(workspace, script, dialect=dialect)
    [outcome] = run.result.calls
    assert outcome.status == "invalid_arguments" and outcome.mcp_id is None
    [output] = run.outputs(1)
    assert output["output"].startswith("Error (invalid arguments): ")
    assert not [e for e in run.records("mcp_request") if e["call_id"] == outcome.call_id]
    [parsed] = run.records("call_parsed")
    assert parsed["arguments_text"] == "{not json" and parsed["error"]


def test_arguments_the_schema_rejects_name_the_field(workspace: Path, dialect: Dialect) -> None:
    script = {"turns": [{"calls": [call("fs__read_text_file", path="notes.txt", head="20")]}]}
    run = run_script(workspace, script, dialect=dialect)
    [output] = run.outputs(1)
    assert output["output"].startswith("Error (invalid arguments): ")
    assert "head" in output["output"] and "string" in output["output"]
    assert not [e for e in run.records("mcp_request") if e["call_id"] == run.result.calls[0].call_id]


def test_an_unknown_tool_lists_the_available_ones(workspace: Path, dialect: Dialect) -> None:
    script = {"turns": [{"calls": [call("fs__read_txt_file", path="notes.txt")]}]}
    run = run_script(workspace, script, dialect=dialect)
    [output] = run.outputs(1)
    assert output["output"].startswith("Error (unknown tool): unknown tool 'fs__read_txt_file'")
    assert "fs__read_text_file" in output["output"]
    assert run.result.calls[0].status == "unknown_tool"


def test_max_turns_stops_the_run_and_says_so(workspace: Path, dialect: Dialect) -> None:
    again = {"calls": [call("fs__read_text_file", path="notes.txt", head=1)]}
    run = run_script(workspace, {"turns": [again, again, again]}, limits=RunLimits(max_turns=2),
                     dialect=dialect)
    assert run.result.status == "max_turns"
    assert "--max-turns 2" in run.result.reason
    assert len(run.requests) == 2 and run.result.turns == 2


def test_max_tool_calls_runs_none_beyond_the_limit(workspace: Path, dialect: Dialect) -> None:
    script = {"turns": [{"calls": [call("fs__read_text_file", path="notes.txt", head=1)] * 2}]}
    run = run_script(workspace, script, limits=RunLimits(max_tool_calls=1), dialect=dialect)
    assert run.result.status == "max_tool_calls"
    assert run.result.calls == [] and not run.records("mcp_request")[3:]  # the probe, handshake and list


def test_an_incomplete_response_ends_the_run_with_its_reason(workspace: Path, dialect: Dialect) -> None:
    incomplete = {"status": "incomplete", "reason": "max_output_tokens"}
    run = run_script(workspace, {"turns": [incomplete]}, dialect=dialect)
    assert run.result.status == "incomplete"
    assert run.result.reason == "max_output_tokens"
    assert run.result.final_text is None


def test_a_failed_response_is_never_a_success(workspace: Path) -> None:
    # Responses only: a chat completion has no failed status (the stand-in answers 500)
    failure = {"status": "failed", "error": {"code": "server_error", "message": "boom"}}
    run = run_script(workspace, {"turns": [failure]})
    assert run.result.status == "failed" and "boom" in run.result.reason


def test_a_refusal_is_reported_as_a_refusal(workspace: Path, dialect: Dialect) -> None:
    run = run_script(workspace, {"turns": [{"refusal": "I can't help with that."}]}, dialect=dialect)
    assert run.result.status == "refused"
    assert run.result.refusal == "I can't help with that." and run.result.final_text is None


def test_reasoning_items_are_carried_into_the_next_request(workspace: Path) -> None:
    reading = call("fs__read_text_file", path="notes.txt")
    script = {"turns": [{"reasoning": "read the notes", "calls": [reading]}]}
    run = run_script(workspace, script)
    output_1 = run.records("model_response")[0]["body"]["output"]
    reasoning = [i for i in output_1 if i["type"] == "reasoning"]
    assert reasoning, "the script asked for a reasoning item"
    replayed = run.requests[1]["input"]
    assert replayed[1 : 1 + len(output_1)] == output_1  # reasoning first, then the call, unchanged
    assert run.result.status == "completed"


def test_no_store_asks_for_encrypted_reasoning_and_replays_it(workspace: Path) -> None:
    script = {"turns": [{"reasoning": True, "calls": [call("fs__read_text_file", path="notes.txt")]}]}
    run = run_script(workspace, script, store=False)
    assert run.requests[0]["store"] is False
    assert run.requests[0]["include"] == ["reasoning.encrypted_content"]
    replayed = [i for i in run.requests[1]["input"] if i.get("type") == "reasoning"]
    assert replayed and replayed[0].get("encrypted_content")
    assert run.result.status == "completed"


def test_chain_mode_sends_only_new_items_and_the_instructions_again(workspace: Path) -> None:
    run = run_script(workspace, None, chain=True, instructions="Be brief.")
    first, second = run.requests
    response_1 = run.records("model_response")[0]["body"]
    assert "previous_response_id" not in first
    assert second["previous_response_id"] == response_1["id"]
    assert [i["type"] for i in second["input"]] == ["function_call_output"]
    assert second["input"][0]["output"] == FIRST_20
    assert first["instructions"] == second["instructions"]
    # the user's own instructions first, then the file server's, each time
    assert first["instructions"].startswith('Be brief.\n\nInstructions from the MCP server "fs"')
    assert run.result.status == "completed"


@EACH_DECLARATION
@pytest.mark.parametrize(
    ("arguments", "sent"),
    [
        ({"path": "notes.txt", "head": 3, "tail": None}, {"path": "notes.txt", "head": 3}),
        ({"path": "notes.txt", "head": None, "tail": 2}, {"path": "notes.txt", "tail": 2}),
        ({"path": "notes.txt", "head": None, "tail": None}, {"path": "notes.txt"}),
    ],
)
def test_strict_read_text_file_strips_the_added_nulls(
    workspace: Path, arguments: dict[str, object], sent: dict[str, object], declare: str
) -> None:
    script = {"turns": [{"calls": [{**named("fs__read_text_file", declare), "arguments": arguments}]}]}
    run = run_script(workspace, script, strict=True, declare=declare)
    declared = function_tools_by_alias(run.requests[0]["tools"])[
        "fs.read_text_file" if declare == "namespaces" else "fs__read_text_file"]
    assert declared["strict"] is True
    assert set(declared["parameters"]["required"]) == {"path", "head", "tail"}
    [outcome] = run.result.calls
    assert outcome.status == "ok"
    assert outcome.request is not None and outcome.request["params"]["arguments"] == sent
    lines = NOTES.splitlines(keepends=True)
    expected = "".join(lines[:3]) if sent.get("head") else "".join(lines[-2:]) if sent.get("tail") else NOTES
    assert run.outputs(1)[0]["output"] == expected


def test_tool_choice_of_an_alias_is_sent_as_a_function_choice(workspace: Path, dialect: Dialect) -> None:
    run = run_script(workspace, None, tool_choice="fs__read_text_file", dialect=dialect)
    assert run.requests[0]["tool_choice"] == {"type": "function", "name": "fs__read_text_file"}


def test_outputs_over_the_budget_are_cut_with_a_visible_note(workspace: Path, dialect: Dialect) -> None:
    script = {"turns": [{"calls": [call("fs__read_text_file", path="notes.txt")]}]}
    run = run_script(workspace, script, limits=RunLimits(output_budget=20), dialect=dialect)
    [output] = run.outputs(1)
    assert output["output"].startswith(NOTES[:20])
    assert f"[toolrelay: output cut to 20 of {len(NOTES)} characters" in output["output"]


def test_a_call_id_used_twice_in_a_response_runs_once_and_gets_one_output(
    workspace: Path, dialect: Dialect
) -> None:
    script = {
        "turns": [
            {
                "calls": [
                    {**call("fs__read_text_file", path="notes.txt", head=1), "call_id": "dup"},
                    call("fs__read_text_file", path="todo.md", tail=1),
                    {**call("fs__list_directory", path="."), "call_id": "dup"},
                ]
            },
            {"message": "done"},
        ]
    }
    run = run_script(workspace, script, dialect=dialect)
    assert run.result.status == "completed"
    # The first function_call with the call_id ran; the later one reached no server.
    sent = [e["message"]["params"]["name"] for e in run.records("mcp_request") if e["method"] == "tools/call"]
    assert sent == ["read_text_file", "read_text_file"]
    # Request 2 replays all three call items unchanged, and answers each call_id once.
    assert run.requests[1]["input"][1:4] == run.answer(0)
    outputs = run.outputs(1)
    assert [o["call_id"] for o in outputs] == ["dup", "call_offline_0001"]
    assert outputs[0]["output"] == (
        "line 1\n\n\nError (duplicate call id): refused as a duplicate, not run: call_id dup already "
        "belongs to the earlier function_call fs__read_text_file in this response, and a call_id gets one "
        "output; call fs__list_directory again if you still need it"
    )
    # The refusal is recorded as the duplicate's own outcome, and reported with the run.
    refusals = [o for o in (e.to_record()["outcome"] for e in run.kinds("call_outcome"))
                if o["status"] == "duplicate_call_id"]
    assert [(o["alias"], o["call_id"], o["mcp_id"]) for o in refusals] == [
        ("fs__list_directory", "dup", None)
    ]
    assert [(c.call_id, c.status) for c in run.result.calls] == [
        ("dup", "ok"), ("call_offline_0001", "ok"), ("dup", "duplicate_call_id")
    ]
