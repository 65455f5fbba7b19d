"""Errors about what the endpoint did not keep: the cause is named, never a missing feature.

``--chain --no-store`` (a chained request whose previous response was sent with store:
false) and OpenAI's 404 ``Item with id 'rs_…' not found. Items are not persisted when
store is set to false…`` (``param: "input"``) both come from what the endpoint was told
to keep, not from an endpoint that lacks ``previous_response_id`` or ``/v1/responses``.
A 404 from a URL that already answered is never a missing endpoint.
"""

from __future__ import annotations

from typing import Any

import pytest
from model_helpers import Canned, CannedEndpoint, recorded_stream, run, valid_response

from toolrelay.errors import ModelError
from toolrelay.model import ModelEndpoint, ResponsesClient
from toolrelay.model.failures import CHAIN_ADVICE, NO_RESPONSES_ADVICE, classify_failure

ITEM_ID = "rs_68af4030592c81938ec0a5fbab4a3e9a05438e46b5f69a3b"
NOT_PERSISTED = (
    f"Item with id '{ITEM_ID}' not found. Items are not persisted when `store` is set to false. "
    "Try again with `store` set to true, or remove this item from your input."
)
OPENAI_404 = {"error": {"message": NOT_PERSISTED, "type": "invalid_request_error", "param": "input",
                        "code": None}}
PREVIOUS_NOT_FOUND = {"error": {"message": "Previous response with id 'resp_9' not found.",
                                "type": "invalid_request_error", "param": "previous_response_id",
                                "code": "previous_response_not_found"}}
REASONING = {"type": "reasoning", "id": ITEM_ID, "summary": []}


def replayed(**extra: Any) -> dict[str, Any]:
    """A second-turn replay body that carries a reasoning item back."""
    return {"model": "o4-mini", "input": [{"role": "user", "content": "hi"}, REASONING], **extra}


def test_a_chained_request_with_store_false_names_store_not_the_endpoint() -> None:
    body = {"model": "m", "input": [], "previous_response_id": "resp_9", "store": False}
    error = classify_failure(400, PREVIOUS_NOT_FOUND, body)
    said = str(error)
    assert CHAIN_ADVICE not in said and "does not support" not in said
    assert "store: false" in said and "--no-store" in said
    assert "Previous response with id 'resp_9' not found." in said  # the API's own words


@pytest.mark.parametrize("store", [False, None], ids=["store-false", "store-unset"])
def test_an_item_not_persisted_is_not_a_missing_endpoint(store: bool | None) -> None:
    body = replayed() if store is None else replayed(store=store)
    error = classify_failure(404, OPENAI_404, body, url="https://api.openai.com/v1/responses")
    said = str(error)
    assert NO_RESPONSES_ADVICE not in said and "/v1/responses" not in said
    assert said.startswith(f"model endpoint answered 404 Not Found: {NOT_PERSISTED}")
    if store is False:
        assert "run without --no-store" in said
    else:
        assert "--no-store" in said and "encrypted reasoning" in said


def test_the_404_on_a_later_turn_over_http_passes_the_api_message_through() -> None:
    with CannedEndpoint(Canned(200, valid_response()), Canned(404, OPENAI_404)) as endpoint:
        error = run(_two_turns(endpoint.base_url, replayed(store=False)))
    said = str(error)
    assert type(error) is ModelError
    assert NO_RESPONSES_ADVICE not in said
    assert NOT_PERSISTED in said and "run without --no-store" in said


def test_any_404_from_a_url_that_already_answered_is_not_a_missing_endpoint() -> None:
    not_found = {"error": {"message": "Not found", "type": "invalid_request_error", "param": None,
                           "code": None}}
    with CannedEndpoint(Canned(200, valid_response()), Canned(404, not_found)) as endpoint:
        error = run(_two_turns(endpoint.base_url, replayed()))
    said = str(error)
    assert NO_RESPONSES_ADVICE not in said
    assert said.startswith("model endpoint answered 404 Not Found: Not found")
    assert "it answered this URL before" in said


def test_a_404_on_the_first_request_still_says_the_endpoint_has_no_responses_api() -> None:
    with CannedEndpoint(Canned(404, "404 page not found")) as endpoint:
        error = run(_two_turns(endpoint.base_url, replayed(), turns=1))
    assert NO_RESPONSES_ADVICE in str(error)


async def _two_turns(base_url: str, second: dict[str, Any], *, turns: int = 2) -> ModelError:
    """Turn 1 (a plain request), then ``second``; the error the last one raised."""
    events, _ = recorded_stream()
    async with ResponsesClient(ModelEndpoint(base_url=base_url, api_key="k"), events=events,
                               max_retries=0) as client:
        try:
            if turns == 2:
                await client.create({"model": "o4-mini", "input": "hi"}, turn=1)
            await client.create(second, turn=turns)
        except ModelError as error:
            return error
    raise AssertionError("the request did not fail")
