"""Results that are not plain text, on their way to the model: a real run against a stdio
server returning audio, a 300 KB image and a text/plain blob (the content kinds
server-everything sends), and what the model and the user are told about each."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from loop_helpers import make_workspace, media_server, run_script

from toolrelay.events import FeedbackEvent
from toolrelay.relay.loop import RunLimits


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "workspace")


def calls(*names: str) -> dict[str, object]:
    return {"turns": [{"calls": [{"name": f"media__{name}", "arguments": {}} for name in names]}]}


def test_audio_a_large_image_and_a_text_blob_reach_the_model_in_forms_it_takes(workspace: Path) -> None:
    run = run_script(workspace, calls("sound", "photo", "note"), servers=[media_server()])
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
