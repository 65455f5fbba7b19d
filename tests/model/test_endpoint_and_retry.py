"""ModelEndpoint (environment, Azure URLs, redaction) and the retry timing rules."""

from __future__ import annotations

from email.utils import formatdate

import pytest

from toolrelay.errors import UsageError
from toolrelay.model import ModelEndpoint
from toolrelay.model.endpoint import redact_url
from toolrelay.model.retry import MAX_BACKOFF, MAX_RETRY_WAIT, backoff_delay, retry_after_seconds, retry_wait


def test_openai_defaults_from_the_environment() -> None:
    endpoint = ModelEndpoint.from_environment(None, {"OPENAI_API_KEY": "sk-1"})
    assert endpoint.base_url == "https://api.openai.com/v1" and endpoint.api_key == "sk-1"
    assert endpoint.responses_url == "https://api.openai.com/v1/responses"
    assert endpoint.request_headers()["Authorization"] == "Bearer sk-1"
    assert not endpoint.is_azure


def test_explicit_url_wins_over_openai_base_url() -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": ""}
    assert ModelEndpoint.from_environment(None, env).base_url == "http://127.0.0.1:9/v1"
    endpoint = ModelEndpoint.from_environment("http://127.0.0.1:11434/v1/", env)
    assert endpoint.responses_url == "http://127.0.0.1:11434/v1/responses"
    assert endpoint.api_key is None and "Authorization" not in endpoint.request_headers()


def test_azure_v1_from_the_environment() -> None:
    env = {
        "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com/",
        "AZURE_OPENAI_API_KEY": "az-1",
        "OPENAI_API_KEY": "sk-other",
    }
    endpoint = ModelEndpoint.from_environment(None, env)
    assert endpoint.responses_url == "https://res.openai.azure.com/openai/v1/responses"
    headers = endpoint.request_headers()
    assert headers["api-key"] == "az-1" and "Authorization" not in headers


def test_azure_dated_version_from_the_environment() -> None:
    env = {
        "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com",
        "AZURE_OPENAI_API_KEY": "az-1",
        "OPENAI_API_VERSION": "2025-04-01-preview",
    }
    endpoint = ModelEndpoint.from_environment(None, env)
    assert (
        endpoint.responses_url
        == "https://res.openai.azure.com/openai/responses?api-version=2025-04-01-preview"
    )
    assert endpoint.shown_url == endpoint.responses_url


def test_azure_host_given_as_url_uses_the_azure_key() -> None:
    env = {"AZURE_OPENAI_API_KEY": "az-1", "OPENAI_API_KEY": "sk-other"}
    endpoint = ModelEndpoint.from_environment("https://res.cognitiveservices.azure.com/openai/v1", env)
    assert endpoint.is_azure and endpoint.request_headers()["api-key"] == "az-1"


def test_bad_url_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as failed:
        ModelEndpoint(base_url="localhost:11434/v1")
    assert str(failed.value) == "model URL must be an http:// or https:// URL, got 'localhost:11434/v1'"
    assert failed.value.exit_code == 2


def test_a_hosted_endpoint_without_a_key_is_refused_before_any_request() -> None:
    with pytest.raises(UsageError) as openai:
        ModelEndpoint.from_environment(None, {}).check_key()
    said = str(openai.value)
    assert said.startswith("no API key for https://api.openai.com/v1/responses: set OPENAI_API_KEY,")
    assert openai.value.exit_code == 2
    with pytest.raises(UsageError) as azure:
        ModelEndpoint.from_environment(None, {"AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com"}).check_key()
    assert "set AZURE_OPENAI_API_KEY (or OPENAI_API_KEY)" in str(azure.value)
    ModelEndpoint.from_environment(None, {"OPENAI_API_KEY": "sk-1"}).check_key()  # a key: fine
    ModelEndpoint.from_environment("http://127.0.0.1:11434/v1", {}).check_key()  # a local server needs none


def test_recorded_urls_carry_no_secrets() -> None:
    assert redact_url("https://user:pw@h.example:8443/v1/responses?key=s&api-key=t&token=u&x=1") == (
        "https://h.example:8443/v1/responses?x=1"
    )
    endpoint = ModelEndpoint(base_url="https://h.example/v1?api_key=s")
    assert endpoint.responses_url == "https://h.example/v1/responses?api_key=s"
    assert endpoint.shown_url == "https://h.example/v1/responses"


def test_cleartext_key_detection() -> None:
    assert ModelEndpoint(base_url="http://10.0.0.5:8000/v1", api_key="k").sends_key_in_clear
    assert not ModelEndpoint(base_url="http://127.0.0.1:8000/v1", api_key="k").sends_key_in_clear
    assert not ModelEndpoint(base_url="https://10.0.0.5/v1", api_key="k").sends_key_in_clear
    assert not ModelEndpoint(base_url="http://10.0.0.5:8000/v1").sends_key_in_clear


# -- retry timing --------------------------------------------------------------------------------


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"Retry-After": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "0.5"}) == 0.5
    assert retry_after_seconds({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25
    assert retry_after_seconds({"Retry-After": formatdate(1_000_030, usegmt=True)}, now=1_000_000) == 30.0
    assert retry_after_seconds({"Retry-After": formatdate(999_000, usegmt=True)}, now=1_000_000) == 0.0
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_retry_wait_caps_the_endpoint_and_backs_off_otherwise() -> None:
    assert retry_wait({"Retry-After": "3600"}, 1, 0.5) == MAX_RETRY_WAIT
    assert retry_wait({"Retry-After": "2"}, 1, 0.5) == 2.0
    for attempt in range(1, 8):
        wait = retry_wait({}, attempt, 0.5)
        full = min(0.5 * 2 ** (attempt - 1), MAX_BACKOFF)
        assert 0.75 * full <= wait <= full
    assert backoff_delay(30, 0.5) <= MAX_BACKOFF
