"""Stage 8: one outcome → one function_call_output. The exact output for every result
shape and every failure class (verify re-runs this same rendering)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from toolrelay.relay.stages.feedback import (
    FOR_USER_ONLY,
    feedback_item,
    render_feedback,
    render_output,
    with_refusals,
)
from toolrelay.relay.stages.parse import FunctionCall
from toolrelay.relay.stages.result import CallOutcome, CallRoute, Verdict

PNG = base64.b64encode(b"\x89PNG fake").decode()


def outcome_of(
    status: Any, alias: str, call_id: str = "", server: str | None = None, **verdict: Any
) -> CallOutcome:
    """An outcome of the model's call ``alias`` routed to ``server``, with this verdict."""
    call = FunctionCall(call_id=call_id, name=alias, arguments_text="{}")
    return CallOutcome(call=call, route=CallRoute(server=server), verdict=Verdict(status=status, **verdict))


def ok(*blocks: dict[str, Any], **extra: Any) -> CallOutcome:
    return outcome_of(status="ok", alias="fs__x", result={"content": list(blocks), **extra})


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def resource(uri: str, mime: str, **body: str) -> dict[str, Any]:
    return {"type": "resource", "resource": {"uri": uri, "mimeType": mime, **body}}


def test_a_single_text_block_is_the_output_itself() -> None:
    assert render_output(ok(text("line 1\nline 2\n"))) == "line 1\nline 2\n"


def test_several_text_blocks_are_joined_by_newlines() -> None:
    assert render_output(ok(text("a"), text("b"))) == "a\nb"


def test_only_structured_content_becomes_its_json() -> None:
    outcome = outcome_of(status="ok", alias="x", result={"structuredContent": {"n": 1, "é": [True]}})
    assert render_output(outcome) == '{"n": 1, "é": [true]}'


def test_text_wins_over_structured_content_and_an_empty_result_is_empty() -> None:
    assert render_output(ok(text("t"), structuredContent={"content": "t"})) == "t"
    assert render_output(ok()) == ""


def test_a_tool_error_keeps_its_text_behind_a_marker() -> None:
    outcome = outcome_of(
        status="tool_error", alias="x", result={"content": [text("no such file")], "isError": True}
    )
    assert render_output(outcome) == "Error (tool): no such file"


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (
            outcome_of(status="protocol_error", alias="x", error_code=-32602, message="Unknown tool: y"),
            "Error (protocol -32602): Unknown tool: y",
        ),
        (
            outcome_of(
                status="protocol_error", alias="x", error_code=-32000, message="busy", error_data={"retry": 1}
            ),
            'Error (protocol -32000): busy (data: {"retry": 1})',
        ),
        (
            outcome_of(status="protocol_error", alias="x", message="malformed result"),
            "Error (protocol): malformed result",
        ),
        (
            outcome_of(
                status="transport_error",
                alias="x",
                server="fs",
                transport_kind="exited",
                message="server fs exited",
            ),
            "Error (server fs exited): server fs exited",
        ),
        (
            outcome_of(status="transport_error", alias="x", transport_kind="timeout", message="t"),
            "Error (timeout): t",
        ),
        (
            outcome_of(status="transport_error", alias="x", transport_kind="too_large", message="big"),
            "Error (result too large): big",
        ),
        (
            outcome_of(status="transport_error", alias="x", transport_kind="http", message="h"),
            "Error (transport): h",
        ),
        (
            outcome_of(status="invalid_arguments", alias="x", message="head: ..."),
            "Error (invalid arguments): head: ...",
        ),
        (
            outcome_of(status="unknown_tool", alias="x", message="unknown tool 'x'"),
            "Error (unknown tool): unknown tool 'x'",
        ),
        (outcome_of(status="not_approved", alias="x", message="declined"), "Error (not approved): declined"),
        (outcome_of(status="cancelled", alias="x", message="interrupted"), "Error (cancelled): interrupted"),
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


def test_audio_becomes_a_text_stand_in_and_the_cut_is_reported() -> None:
    """The Responses API has no audio input: an audio input_file ends the run with a 400."""
    rendering = render_feedback(ok(text("a beep"), {"type": "audio", "mimeType": "audio/wav", "data": PNG}))
    assert rendering.output == (
        "a beep\n[audio (audio/wav, about 9 bytes) not passed on: the model takes no audio input here]"
    )
    assert rendering.cut == ("audio (audio/wav, about 9 bytes) replaced by a text note: no audio input",)


def test_binary_resources_become_files_named_with_an_extension() -> None:
    outcome = ok(
        resource("file:///r/report.pdf", "application/pdf", blob=PNG),
        resource("test://static/resource/4", "application/pdf", blob=PNG),
        resource("test://static/pic", "image/png", blob=PNG),
    )
    assert render_output(outcome) == [
        {"type": "input_file", "filename": "report.pdf", "file_data": f"data:application/pdf;base64,{PNG}"},
        {"type": "input_file", "filename": "4.pdf", "file_data": f"data:application/pdf;base64,{PNG}"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
    ]


@pytest.mark.parametrize(
    "mime", ["text/plain", "application/json", "text/csv; charset=utf-8", "image/svg+xml"]
)
def test_a_blob_with_a_text_mime_type_is_decoded_to_text(mime: str) -> None:
    blob = base64.b64encode("Hello, World! é".encode()).decode()
    outcome = ok(resource("test://static/resource/2", mime, blob=blob))
    assert render_output(outcome) == f"[resource test://static/resource/2, {mime}]\nHello, World! é"
    assert render_output(outcome, multimodal=False) == render_output(outcome)


def test_a_text_mime_blob_that_is_not_utf8_stays_a_file() -> None:
    blob = base64.b64encode(b"\xff\xfe\x00binary").decode()
    outcome = ok(resource("test://r/data.txt", "text/plain", blob=blob))
    assert render_output(outcome) == [
        {"type": "input_file", "filename": "data.txt", "file_data": f"data:text/plain;base64,{blob}"}
    ]


def test_text_resources_and_links_are_text() -> None:
    outcome = ok(
        resource("test://r", "text/plain", text="body"),
        {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"},
        {"type": "video", "url": "x"},
        "not a block",
    )
    assert render_output(outcome) == (
        "[resource test://r, text/plain]\nbody\n[resource link: file:///a.txt (a.txt)]\n"
        '[video content block: not representable as model input]\n[malformed content block: "not a block"]'
    )


def test_a_tool_error_with_only_an_image_still_starts_with_the_marker() -> None:
    outcome = outcome_of(
        status="tool_error",
        alias="x",
        result={"isError": True, "content": [{"type": "image", "mimeType": "image/png", "data": PNG}]},
    )
    output = render_output(outcome)
    assert isinstance(output, list) and output[0] == {"type": "input_text", "text": "Error (tool):"}


def test_the_budget_cuts_text_with_a_visible_note() -> None:
    rendering = render_feedback(ok(text("x" * 50)), budget=10)
    note = (
        "[toolrelay: output cut to 10 of 50 characters; "
        "ask for less (for example with head or tail) to see the rest]"
    )
    assert rendering.output == "x" * 10 + "\n" + note
    assert rendering.cut == ("text cut to 10 of 50 characters (--output-budget 10)",)


def test_an_image_larger_than_the_text_budget_is_passed_on_whole() -> None:
    """Images have their own budget, in bytes: a 300 KB screenshot is not text."""
    big = base64.b64encode(b"\0" * 300_000).decode()
    rendering = render_feedback(ok(text("caption"), {"type": "image", "mimeType": "image/png", "data": big}))
    assert rendering.output == [
        {"type": "input_text", "text": "caption"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{big}", "detail": "auto"},
    ]
    assert rendering.cut == ()


def test_an_image_over_the_media_budget_becomes_a_note_with_advice_for_images() -> None:
    small, big = (base64.b64encode(b"\0" * n).decode() for n in (1000, 3000))
    rendering = render_feedback(
        ok(
            text("caption"),
            {"type": "image", "mimeType": "image/png", "data": small},
            {"type": "image", "mimeType": "image/jpeg", "data": big},
        ),
        media_budget=2000,
    )
    note = (
        "[image (image/jpeg, 3000 bytes) not passed on: over toolrelay's limit of 2000 bytes of images and "
        "files per tool output; ask the tool for a smaller image (a lower resolution or a crop) if it can]"
    )
    assert rendering.output == [
        {"type": "input_text", "text": "caption"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{small}", "detail": "auto"},
        {"type": "input_text", "text": note},
    ]
    assert "head or tail" not in json.dumps(rendering.output)
    assert rendering.cut == ("image (image/jpeg, 3000 bytes) dropped: over --media-budget 2000 bytes",)


def test_a_file_over_the_media_budget_gets_advice_for_files() -> None:
    blob = base64.b64encode(b"%PDF" + b"\0" * 996).decode()
    outcome = ok(resource("file:///r/a.pdf", "application/pdf", blob=blob))
    assert render_output(outcome, media_budget=10) == (
        "[resource file:///r/a.pdf (application/pdf, 1000 bytes) not passed on: over toolrelay's limit of 10 "
        "bytes of images and files per tool output; ask for a smaller file or a part of it if the tool can]"
    )


def test_text_only_stand_ins_are_the_users_choice_not_a_cut() -> None:
    rendering = render_feedback(ok({"type": "image", "mimeType": "image/png", "data": PNG}), multimodal=False)
    assert rendering.output == (
        "[image (image/png, about 9 bytes) not passed on: this endpoint takes text only]"
    )
    assert rendering.cut == ()


def test_unrepresentable_blocks_are_reported_as_dropped() -> None:
    rendering = render_feedback(ok(text("t"), {"type": "video", "url": "x"}))
    assert rendering.cut == ("a video content block dropped: not representable as model input",)


def test_the_item_pairs_the_output_with_its_call_id() -> None:
    item = feedback_item("call_1", render_output(ok(text("t"))))
    assert item == {"type": "function_call_output", "call_id": "call_1", "output": "t"}
    json.dumps(item)  # a plain JSON value


def test_the_one_output_of_a_call_id_carries_the_refusals_of_its_duplicates() -> None:
    refused = outcome_of(status="duplicate_call_id", alias="fs__y", call_id="c1", message="refused")
    assert with_refusals("a", []) == "a"
    assert with_refusals("a", [refused, refused]) == (
        "a\n\nError (duplicate call id): refused\n\nError (duplicate call id): refused"
    )
    image = render_output(ok(text("t"), {"type": "image", "mimeType": "image/png", "data": PNG}))
    assert isinstance(image, list)
    assert with_refusals(image, [refused]) == [
        *image, {"type": "input_text", "text": "Error (duplicate call id): refused"}
    ]


def test_a_resource_link_keeps_its_mime_type_and_description() -> None:
    link = {"type": "resource_link", "uri": "file:///srv/manual.pdf", "name": "manual.pdf",
            "mimeType": "application/pdf", "description": "chapter 3 covers resets"}
    assert render_output(ok(link)) == (
        "[resource link: file:///srv/manual.pdf (manual.pdf, application/pdf): chapter 3 covers resets]"
    )


def user_only(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value, "annotations": {"audience": ["user"]}}


def test_content_for_the_user_only_is_shown_to_them_and_not_sent() -> None:
    both = {"type": "text", "text": "4 checks passed", "annotations": {"audience": ["user", "assistant"]}}
    rendering = render_feedback(ok(user_only("this cost 3 credits"), both, text("cache warm")))
    assert rendering.output == "4 checks passed\ncache warm"
    assert rendering.for_user == ("this cost 3 credits",)
    assert rendering.cut == ()  # nothing the model was owed is missing


def test_a_result_all_for_the_user_tells_the_model_so_and_no_more() -> None:
    rendering = render_feedback(ok(user_only("your balance is 12"), {**user_only(""), "type": "image"}))
    assert rendering.output == FOR_USER_ONLY
    assert FOR_USER_ONLY == "[the tool's result is meant for the user only: it was shown to them, not to you]"
    assert rendering.for_user == ("your balance is 12", "[image content block]")


def test_an_error_for_the_user_only_still_reads_as_an_error() -> None:
    result = {"isError": True, "content": [user_only("quota")]}
    failed = outcome_of(status="tool_error", alias="x", result=result)
    output = render_output(failed)
    assert isinstance(output, str) and output.startswith("Error (tool): ")
