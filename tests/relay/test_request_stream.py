"""Requests ask for a streamed answer unless told not to (``--no-stream``, ``stream=False``)."""

from __future__ import annotations

from toolrelay.relay.stages.request import Conversation, RequestSettings, build_body


def _body(settings: RequestSettings) -> dict[str, object]:
    conversation = Conversation()
    conversation.start("task")
    return build_body(settings, [], conversation)


def test_a_request_streams_by_default() -> None:
    assert _body(RequestSettings(model="m"))["stream"] is True


def test_stream_false_leaves_the_field_out() -> None:
    assert "stream" not in _body(RequestSettings(model="m", stream=False))


def test_extra_body_fields_still_win() -> None:
    assert _body(RequestSettings(model="m", extra={"stream": False}))["stream"] is False
