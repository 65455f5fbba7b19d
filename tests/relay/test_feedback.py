"""Stage 8: one outcome → one function_call_output. The exact output for every result
shape and every failure class (verify re-runs this same rendering)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from toolrelay.relay.feedback import feedback_item, render_output, with_refusals
from toolrelay.relay.result import CallOutcome

PNG = base64.b64encode(b"\x89PNG fake").decode()


def ok(*blocks: dict[str, Any], **extra: Any) -> CallOutcome:
    return CallOutcome(status="ok", alias="fs__x", result={"content": list(blocks), **extra})


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def test_a_single_text_block_is_the_output_itself() -> None:
    assert render_output(ok(text("line 1\nline 2\n"))) == "line 1\nline 2\n"


def test_several_text_blocks_are_joined_by_newlines() -> None:
    assert render_output(ok(text("a"), text("b"))) == "a\nb"


def test_only_structured_content_becomes_its_json() -> None:
    outcome = CallOutcome(status="ok", alias="x", result={"structuredContent": {"n": 1, "é": [True]}})
    assert render_output(outcome) == '{"n": 1, "é": [true]}'


def test_text_wins_over_structured_content_and_an_empty_result_is_empty() -> None:
    assert render_output(ok(text("t"), structuredContent={"content": "t"})) == "t"
    assert render_output(ok()) == ""


def test_a_tool_error_keeps_its_text_behind_a_marker() -> None:
    outcome = CallOutcome(
        status="tool_error", alias="x", result={"content": [text("no such file")], "isError": True}
    )
    assert render_output(outcome) == "Error (tool): no such file"


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (
            CallOutcome(status="protocol_error", alias="x", error_code=-32602, message="Unknown tool: y"),
            "Error (protocol -32602): Unknown tool: y",
        ),
        (
            CallOutcome(
                status="protocol_error", alias="x", error_code=-32000, message="busy", error_data={"retry": 1}
            ),
            'Error (protocol -32000): busy (data: {"retry": 1})',
        ),
        (
            CallOutcome(status="protocol_error", alias="x", message="malformed result"),
            "Error (protocol): malformed result",
        ),
        (
            CallOutcome(
                status="transport_error",
                alias="x",
                server="fs",
                transport_kind="exited",
                message="server fs exited",
            ),
            "Error (server fs exited): server fs exited",
        ),
        (
            CallOutcome(status="transport_error", alias="x", transport_kind="timeout", message="t"),
            "Error (timeout): t",
        ),
        (
            CallOutcome(status="transport_error", alias="x", transport_kind="too_large", message="big"),
            "Error (result too large): big",
        ),
        (
            CallOutcome(status="transport_error", alias="x", transport_kind="http", message="h"),
            "Error (transport): h",
        ),
        (
            CallOutcome(status="invalid_arguments", alias="x", message="head: ..."),
            "Error (invalid arguments): head: ...",
        ),
        (
            CallOutcome(status="unknown_tool", alias="x", message="unknown tool 'x'"),
            "Error (unknown tool): unknown tool 'x'",
        ),
        (CallOutcome(status="not_approved", alias="x", message="declined"), "Error (not approved): declined"),
        (CallOutcome(status="cancelled", alias="x", message="interrupted"), "Error (cancelled): interrupted"),
    ],
)
def test_every_failure_class_has_its_marker(outcome: CallOutcome, expected: str) -> None:
    assert render_output(outcome) == expected


def test_an_image_becomes_an_input_image_part_or_a_text_stand_in() -> None:
    outcome = ok(text("caption"), {"type": "image", "mimeType": "image/png", "data": PNG})
    assert render_output(outcome) == [
        {"type": "input_text", "text": "caption"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
    ]
    stand_in = render_output(outcome, multimodal=False)
    assert (
        stand_in == "caption\n[image (image/png, about 9 bytes) not passed on: this endpoint takes text only]"
    )


def test_audio_and_blob_resources_become_files() -> None:
    outcome = ok(
        {"type": "audio", "mimeType": "audio/wav", "data": PNG},
        {
            "type": "resource",
            "resource": {"uri": "file:///r/report.pdf", "mimeType": "application/pdf", "blob": PNG},
        },
    )
    assert render_output(outcome) == [
        {"type": "input_file", "filename": "audio.wav", "file_data": f"data:audio/wav;base64,{PNG}"},
        {"type": "input_file", "filename": "report.pdf", "file_data": f"data:application/pdf;base64,{PNG}"},
    ]


def test_text_resources_and_links_are_text() -> None:
    outcome = ok(
        {"type": "resource", "resource": {"uri": "test://r", "mimeType": "text/plain", "text": "body"}},
        {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"},
        {"type": "video", "url": "x"},
        "not a block",
    )
    assert render_output(outcome) == (
        "[resource test://r, text/plain]\nbody\n[resource link: file:///a.txt (a.txt)]\n"
        '[video content block: not representable as model input]\n[malformed content block: "not a block"]'
    )


def test_a_tool_error_with_only_an_image_still_starts_with_the_marker() -> None:
    outcome = CallOutcome(
        status="tool_error",
        alias="x",
        result={"isError": True, "content": [{"type": "image", "mimeType": "image/png", "data": PNG}]},
    )
    output = render_output(outcome)
    assert isinstance(output, list) and output[0] == {"type": "input_text", "text": "Error (tool):"}


def test_the_budget_cuts_text_with_a_visible_note() -> None:
    output = render_output(ok(text("x" * 50)), budget=10)
    note = (
        "[toolrelay: output cut to 10 of 50 characters; "
        "ask for less (for example with head or tail) to see the rest]"
    )
    assert output == "x" * 10 + "\n" + note


def test_the_budget_drops_a_large_image_but_keeps_the_text_before_it() -> None:
    big = base64.b64encode(b"\0" * 3000).decode()
    output = render_output(
        ok(text("caption"), {"type": "image", "mimeType": "image/png", "data": big}), budget=100
    )
    assert isinstance(output, str)
    assert output.startswith("caption\n[input_image of ")
    assert "dropped: over the budget]" in output and "[toolrelay: output cut to 100 of" in output


def test_the_item_pairs_the_output_with_its_call_id() -> None:
    item = feedback_item("call_1", render_output(ok(text("t"))))
    assert item == {"type": "function_call_output", "call_id": "call_1", "output": "t"}
    json.dumps(item)  # a plain JSON value


def test_the_one_output_of_a_call_id_carries_the_refusals_of_its_duplicates() -> None:
    refused = CallOutcome(status="duplicate_call_id", alias="fs__y", call_id="c1", message="refused")
    assert with_refusals("a", []) == "a"
    assert with_refusals("a", [refused, refused]) == (
        "a\n\nError (duplicate call id): refused\n\nError (duplicate call id): refused"
    )
    image = render_output(ok(text("t"), {"type": "image", "mimeType": "image/png", "data": PNG}))
    assert isinstance(image, list)
    assert with_refusals(image, [refused]) == [
        *image, {"type": "input_text", "text": "Error (duplicate call id): refused"}
    ]
