"""Every way an exchange with the model endpoint can fail becomes one ``errors.py`` error.

In the spirit of httpx's ``test_httpcore_all_exceptions_mapped``: each internal failure
kind of the HTTP clients (``model/_http_failures.py``, and the private one of ``http.py``)
maps, at the one boundary ``MapHttpFailures``, to a ``ModelError`` subclass of its own
with a message that names the endpoint and says what happened. A kind added without a
mapping fails here, not in a user's run.
"""

from __future__ import annotations

import pytest

from toolrelay.errors import (
    ModelAnswerUnreadable,
    ModelError,
    ModelRequestUnsendable,
    ModelTimeout,
    ModelUnreachable,
)
from toolrelay.model import _http_failures as failures
from toolrelay.model.http import _NothingReceived

URL = "http://127.0.0.1:8000/v1/responses"
REACH = f"cannot reach the model endpoint {URL}: "

CASES: list[tuple[failures.HttpFailure, type[ModelError], str]] = [
    (failures.ConnectFailed("connection refused"), ModelUnreachable, REACH + "connection refused"),
    (failures.ConnectTimeout(), ModelTimeout, REACH + "timed out"),
    (failures.ReadTimeout(2.5), ModelTimeout, f"the model endpoint {URL} did not answer within 2.5 s"),
    (
        failures.ConnectionClosed(failures.CLOSED_WITHOUT_ANSWER),
        ModelUnreachable,
        REACH + "the server closed the connection without a valid answer",
    ),
    (
        _NothingReceived("connection reset by the server"),
        ModelUnreachable,
        REACH + "connection reset by the server",
    ),
    (
        failures.NotHttp("the answer is not valid HTTP/1.1 (illegal status line)"),
        ModelUnreachable,
        REACH + "the answer is not valid HTTP/1.1 (illegal status line)",
    ),
    (failures.TransportFailure("proxy tunnel failed"), ModelUnreachable, REACH + "proxy tunnel failed"),
    (
        failures.AnswerRejected("the answer is larger than 64 MiB"),
        ModelAnswerUnreadable,
        f"cannot read the model endpoint's answer from {URL}: the answer is larger than 64 MiB",
    ),
    (
        failures.RequestRejected("a request header has a name or value HTTP/1.1 forbids"),
        ModelRequestUnsendable,
        f"cannot send the request to the model endpoint {URL}: a request header has a name or value "
        "HTTP/1.1 forbids",
    ),
]


def failure_kinds(base: type[failures.HttpFailure] = failures.HttpFailure) -> set[type[failures.HttpFailure]]:
    """Every subclass of ``base``, at any depth."""
    kinds: set[type[failures.HttpFailure]] = set()
    for kind in base.__subclasses__():
        kinds |= {kind, *failure_kinds(kind)}
    return kinds


def test_every_failure_kind_is_mapped_and_checked_here() -> None:
    defined = {kind for kind in failure_kinds() if kind.__module__ == failures.__name__}
    assert set(failures.MAPPING) == defined
    assert {type(failure) for failure, _, _ in CASES} == failure_kinds()


@pytest.mark.parametrize(("failure", "error_class", "message"), CASES, ids=lambda v: type(v).__name__)
def test_each_failure_kind_becomes_its_model_error(
    failure: failures.HttpFailure, error_class: type[ModelError], message: str
) -> None:
    with pytest.raises(ModelError) as raised, failures.MapHttpFailures(URL):
        raise failure
    error = raised.value
    assert type(error) is error_class and error_class is not ModelError
    assert type(error).__module__ == "toolrelay.errors" and error.exit_code == 3
    assert str(error) == message
    assert error.__cause__ is failure  # the detail stays on the chain for debugging
    if isinstance(error, ModelUnreachable):  # retried: each retry's notice says why in a few words
        assert error.reason == failure.reason


def test_other_exceptions_pass_through_unchanged() -> None:
    with pytest.raises(ValueError, match="not an HTTP failure"), failures.MapHttpFailures(URL):
        raise ValueError("not an HTTP failure")
