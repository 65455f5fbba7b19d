"""Results that are not plain text, on their way to the model: a real run against a stdio
server returning audio, a 300 KB image and a text/plain blob (the content kinds
server-everything sends), and what the model and the user are told about each, in both model
dialects: with ``--api chat`` the image goes in a user message after the tool messages (a
chat tool message takes text only), recorded and verified as part of that call's feedback."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import make_workspace, media_server, run_script

from testkit.dialect import Dialect
from testkit.transcripts import transcript_events
from toolrelay.events import FeedbackEvent
from toolrelay.relay.loop import RunLimits
from toolrelay.verify import load_run, verify


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "workspace")


def calls(*names: str) -> dict[str, object]:
    return {"turns": [{"calls": [{"name": f"media__{name}", "arguments": {}} for name in names]}]}


def test_audio_a_large_image_and_a_text_blob_reach_the_model_in_forms_it_takes(
    workspace: Path, dialect: Dialect, tmp_path: Path
) -> None:
    run = run_script(workspace, calls("sound", "photo", "note"), servers=[media_server()], dialect=dialect,
                     transcript=tmp_path / "run.jsonl")
    assert run.result.status == "completed"
    sound, photo, note = (item["output"] for item in run.outputs(1))
    # audio: no Responses input part takes it (an input_file with data:audio/... is a 400)
    assert sound == (
        "a beep\n[audio (audio/wav, about 44 bytes) not passed on: the model takes no audio input here]"
    )
    # the image is 300 KB (400 KB as base64, more than the 100,000-character text budget)
    assert isinstance(photo, list) and [part["type"] for part in photo] == ["input_text", "input_image"]
    assert len(base64.b64decode(photo[1]["image_url"].split(",", 1)[1])) == 300_000
    # a text/plain blob is text, not a file named "2"
    assert note == (
        "[resource test://static/resource/2, text/plain]\n"
        "Hello, World! This is resource 2, a text/plain blob."
    )
    cuts = {e.call_id: e.cut for e in run.kinds("feedback") if isinstance(e, FeedbackEvent)}
    assert sorted(map(len, cuts.values())) == [0, 0, 1]  # only the audio was not passed on
    assert verify(load_run(tmp_path / "run.jsonl")).ok
    if dialect.chat:  # the tool messages carry text; the image follows them in a user message
        messages = run.wire[1]["messages"]
        tools = [m for m in messages if m["role"] == "tool"]
        assert messages[-1]["role"] == "user" and messages[-4:-1] == tools
        photo_id = tools[1]["tool_call_id"]
        where = f"[toolrelay: image 1 of call {photo_id} is in the user message after the tool messages]"
        assert tools[1]["content"] == [{"type": "text", "text": "a photo"}, {"type": "text", "text": where}]
        label, image = messages[-1]["content"][1:]
        assert label == {"type": "text", "text": f"[toolrelay: image 1 of call {photo_id}]"}
        assert image == {"type": "image_url", "image_url": {"url": photo[1]["image_url"], "detail": "auto"}}


def _other_image(body: dict[str, Any]) -> None:
    body["messages"][-1]["content"][2]["image_url"]["url"] = "data:image/png;base64,AAAA"


def _no_media_message(body: dict[str, Any]) -> None:
    body["messages"].pop()


def _other_label(body: dict[str, Any]) -> None:
    label = body["messages"][-1]["content"][1]
    label["text"] = label["text"].replace("image 1", "image 2")


@pytest.mark.parametrize("change", [_other_image, _no_media_message, _other_label],
                         ids=["other image", "no user message", "other label"])
def test_a_tampered_chat_media_message_is_rejected(workspace: Path, tmp_path: Path, change: Any) -> None:
    transcript = tmp_path / "run.jsonl"
    run_script(workspace, calls("photo"), servers=[media_server()], dialect=Dialect("chat"),
               transcript=transcript)
    assert verify(load_run(transcript)).ok
    events = transcript_events(transcript)
    request = [e for e in events if e["kind"] == "model_request"][1]
    change(request["body"])
    request.pop("body_sha256", None)
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    verdict = verify(load_run(tampered))
    assert verdict.broken is not None, f"{change.__name__} was not caught"
    assert verdict.broken.link == "feedback", verdict.broken
    assert "(differs at output[1]" in verdict.broken.message, verdict.broken.message


def test_an_image_over_the_media_budget_is_named_to_the_model_and_in_the_feedback_event(
    workspace: Path,
) -> None:
    run = run_script(
        workspace, calls("photo"), servers=[media_server()], limits=RunLimits(media_budget=100_000)
    )
    [output] = run.outputs(1)
    assert output["output"] == (
        "a photo\n[image (image/png, 300000 bytes) not passed on: over toolrelay's limit of 100000 bytes of "
        "images and files per tool output; ask the tool for a smaller image (a lower resolution or a crop) "
        "if it can]"
    )
    [feedback] = run.records("feedback")
    assert feedback["cut"] == ["image (image/png, 300000 bytes) dropped: over --media-budget 100000 bytes"]
    assert run.records("run_start")[0]["media_budget"] == 100_000
    outcome_seq = run.records("call_outcome")[0]["seq"]
    assert feedback["seq"] == outcome_seq + 1  # the feedback follows its outcome directly
