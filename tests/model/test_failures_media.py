"""An endpoint that refuses an image or file from a tool result: the message says that
``--text-only`` avoids it (pure classify_failure, bodies as the endpoints send them)."""

from __future__ import annotations

from typing import Any

import pytest

from toolrelay.errors import ModelError, ModelFeatureUnsupported
from toolrelay.model.failures import TEXT_ONLY_ADVICE, classify_failure

PDF = {"type": "input_file", "filename": "report.pdf", "file_data": "data:application/pdf;base64,JVBERg=="}
IMAGE = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw==", "detail": "auto"}


def request_with(*parts: dict[str, Any]) -> dict[str, Any]:
    output = [{"type": "input_text", "text": "caption"}, *parts]
    items = [
        {"role": "user", "content": "task"},
        {"type": "function_call", "call_id": "c1", "name": "t", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": output},
    ]
    return {"model": "m", "input": items}


OPENAI_MIME = {
    "error": {
        "message": "Invalid file data: 'input[2].output[1].file_data'. Expected a base64-encoded data URL "
        "with an application/pdf MIME type (e.g. 'data:application/pdf;base64,SGVsbG8sIFdvcmxkIQ=='), "
        "but got unsupported MIME type 'audio/wav'.",
        "type": "invalid_request_error",
        "param": "input[2].output[1].file_data",
        "code": "invalid_value",
    }
}
OLLAMA_FILE = {"error": {"message": "file inputs are not currently supported", "type": "api_error"}}
NO_VISION = {"error": {"message": "this model does not support image input", "type": "api_error"}}


@pytest.mark.parametrize(
    ("body", "part"),
    [(OPENAI_MIME, PDF), (OLLAMA_FILE, PDF), (NO_VISION, IMAGE)],
    ids=["openai-mime", "ollama-file", "no-vision"],
)
def test_a_refused_image_or_file_part_names_text_only(body: dict[str, Any], part: dict[str, Any]) -> None:
    error = classify_failure(400, body, request_with(part))
    assert isinstance(error, ModelFeatureUnsupported)
    message = body["error"]["message"]
    assert str(error) == f"{TEXT_ONLY_ADVICE} (answered 400 Bad Request: {message})"
    assert "--text-only" in TEXT_ONLY_ADVICE


def test_other_errors_of_a_request_with_media_are_not_blamed_on_the_media() -> None:
    body = {"error": {"message": "Invalid value for 'temperature'.", "param": "temperature", "code": None}}
    error = classify_failure(400, body, request_with(IMAGE))
    assert type(error) is ModelError and "--text-only" not in str(error)


def test_a_request_without_media_never_gets_the_text_only_advice() -> None:
    error = classify_failure(400, OLLAMA_FILE, request_with())
    assert "--text-only" not in str(error)
