"""The stand-in's compaction over real loopback HTTP: a scripted one, one past the request's
``compact_threshold``, none below it; its item counts the turn on; a forged or mistyped
item replayed is refused with the API's 400 body."""

from __future__ import annotations

from typing import Any

from offline_helpers import post_json
from openai.types.responses import Response

from responses_helpers import read_tool
from toolrelay.offline import OfflineModel, parse_script
from toolrelay.offline.compaction import compaction_turn

USER = {"role": "user", "content": "read notes.txt"}
READ = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt"}}


def ask(model: OfflineModel, body: dict[str, Any]) -> tuple[int, Any]:
    status, answer, _ = post_json(f"{model.base_url}/responses", {"model": "offline", "tools": [read_tool()],
                                                                  **body})
    return status, answer


def _output(call: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call["call_id"], "output": "line 1"}


def test_a_scripted_compaction_comes_first_and_the_script_goes_on_after_it() -> None:
    turns = [{"calls": [READ]}, {"calls": [READ], "compact": True}, {"message": "third"}]
    script = parse_script({"turns": turns})
    with OfflineModel(script) as model:
        _, first = ask(model, {"input": [USER]})
        context = [USER, *first["output"], _output(first["output"][0])]
        status, second = ask(model, {"input": context})
        assert status == 200
        Response.model_validate(second)  # the openai types read it, compaction item and all
        item, call = second["output"]
        assert item["type"] == "compaction" and compaction_turn(item) == 2 and call["type"] == "function_call"
        # the next input starts from the item: turn 3's entry answers it, not turn 2's again
        status, third = ask(model, {"input": [item, call, _output(call)]})
    assert status == 200 and third["output"][0]["content"][0]["text"] == "third"


def test_the_stand_in_compacts_past_the_threshold_only() -> None:
    asked = [{"type": "compaction", "compact_threshold": 40}]
    with OfflineModel() as model:
        _, small = ask(model, {"input": [USER], "context_management": asked})
        long_input = [{"role": "user", "content": "x" * 400}]
        _, large = ask(model, {"input": long_input, "context_management": asked})
        _, unasked = ask(model, {"input": long_input})
    assert [i["type"] for i in small["output"]] == ["function_call"]
    assert [i["type"] for i in large["output"]] == ["compaction", "function_call"]
    assert [i["type"] for i in unasked["output"]] == ["function_call"]


def test_a_forged_or_mistyped_compaction_item_is_refused() -> None:
    script = parse_script({"turns": [{"calls": [READ], "compact": True}]})
    with OfflineModel(script) as model:
        _, first = ask(model, {"input": [USER]})
        item, call = first["output"]
        forged = {**item, "encrypted_content": "gAAAAC-forged"}
        status, answer = ask(model, {"input": [forged, call, _output(call)]})
        assert (status, answer["error"]["message"], answer["error"]["code"]) == (
            400, f"The encrypted content for item {item['id']} could not be verified.",
            "invalid_encrypted_content")
        status, answer = ask(model, {"input": [{**item, "encrypted_content": 7}, call, _output(call)]})
    assert status == 400 and answer["error"]["param"] == "input[0].encrypted_content"
    assert answer["error"]["message"] == ("Invalid type for 'input[0].encrypted_content': expected a string, "
                                          "but got an integer instead.")
