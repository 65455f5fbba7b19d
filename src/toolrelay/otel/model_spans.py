"""The ``chat {model}`` span of each model turn: one span for the logical request with all
its retries (each retry an event on it, as the GenAI conventions say), ended when the
answer that counted has arrived, which is known only once the next event is not a retry.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from ..events import ModelRequestEvent, ModelResponseEvent
from ..protocol.responses import FUNCTION_CALL
from . import conventions as c
from .metrics import RunMetrics

__all__ = ["TurnSpans"]

_STREAMED: Final = "toolrelay.streamed"


@dataclass(slots=True)
class _Turn:
    span: Span
    answered: bool = False
    failure: tuple[str, str] | None = None
    """(error.type, description) of the last answer, applied when the span ends."""
    end_ns: int | None = None
    started: float = 0.0
    """When the first attempt was sent (epoch seconds), for ``gen_ai.client.operation.duration``."""
    attributes: dict[str, Any] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)


class TurnSpans:
    """The open turns of one run, by turn number."""

    def __init__(self, tracer: Tracer, parent: Context, metrics: RunMetrics | None = None) -> None:
        self._tracer = tracer
        self._metrics = metrics
        self._parent = parent
        self._open: dict[int, _Turn] = {}
        self._answered: list[int] = []
        """Turns answered since the last ``settle``: the next event that is not the model's ends them."""

    def request(self, event: ModelRequestEvent) -> None:
        turn = self._open.get(event.turn)
        if turn is not None:  # the same turn asked again: a retry
            turn.answered, turn.failure = False, None
            turn.span.add_event("retry", {"toolrelay.attempt": event.attempt})
            return
        model = str(event.body.get("model", ""))
        attributes: dict[str, Any] = {
            c.OPERATION: c.CHAT, c.PROVIDER_NAME: c.PROVIDER, c.REQUEST_MODEL: model,
            c.REQUEST_STREAM: bool(event.body.get("stream", False)), c.TURN: event.turn,
        }
        attributes.update(_endpoint_attributes(event.url))
        span = self._tracer.start_span(f"{c.CHAT} {model}", context=self._parent, kind=SpanKind.CLIENT,
                                       attributes=attributes)
        self._open[event.turn] = _Turn(span, started=event.time or time.time(), attributes=attributes)

    def response(self, event: ModelResponseEvent, redact: Callable[[str], str]) -> None:
        turn = self._open.get(event.turn)
        if turn is None:
            return
        turn.answered = True
        turn.end_ns = int(event.time * 1e9) if event.time else None
        self._answered.append(event.turn)
        span, body = turn.span, event.body if isinstance(event.body, dict) else {}
        answered = _response_attributes(body)
        span.set_attributes({c.HTTP_STATUS: event.status, _STREAMED: event.streamed, **answered})
        turn.attributes.update(answered)
        kinds = (("input", c.INPUT_TOKENS), ("output", c.OUTPUT_TOKENS))
        turn.tokens = {kind: answered[name] for kind, name in kinds if name in answered}
        if event.status >= 400:
            turn.failure = (str(event.status), redact(_error_text(body) or f"HTTP {event.status}"))
        elif event.cut is not None:
            turn.failure = ("stream_cut", redact(event.cut))

    def settle(self) -> None:
        """Called on every event that is not the model's: the answered turns end."""
        if not self._answered:
            return
        answered, self._answered = self._answered, []
        for number in answered:
            turn = self._open.get(number)
            if turn is not None and turn.answered:
                self._end(self._open.pop(number))

    def close(self, error: BaseException | None) -> None:
        """The run ended: every turn ends; one still waiting for its answer failed."""
        for turn in self._open.values():
            if not turn.answered:
                why = type(error).__qualname__ if error is not None else "unanswered"
                turn.failure = (why, "the run ended before the model answered")
            self._end(turn)
        self._open.clear()
        self._answered.clear()

    def _end(self, turn: _Turn) -> None:
        if turn.failure is not None:
            turn.span.set_attributes({c.ERROR_TYPE: turn.failure[0]})
            turn.span.set_status(Status(StatusCode.ERROR, turn.failure[1]))
            turn.attributes[c.ERROR_TYPE] = turn.failure[0]
        turn.span.end(end_time=turn.end_ns)
        if self._metrics is not None:
            ended = turn.end_ns / 1e9 if turn.end_ns is not None else time.time()
            self._metrics.model_turn(max(0.0, ended - turn.started), turn.attributes, turn.tokens)


def _response_attributes(body: dict[str, Any]) -> dict[str, Any]:
    """What a Responses answer says by the conventions: its id, model, finish reasons, usage."""
    attributes: dict[str, Any] = {}
    for key, name in (("id", c.RESPONSE_ID), ("model", c.RESPONSE_MODEL)):
        if isinstance(body.get(key), str):
            attributes[name] = body[key]
    reasons = _finish_reasons(body)
    if reasons:
        attributes[c.FINISH_REASONS] = reasons
    usage = body.get("usage")
    if isinstance(usage, dict):
        for key, name in (("input_tokens", c.INPUT_TOKENS), ("output_tokens", c.OUTPUT_TOKENS)):
            if isinstance(usage.get(key), int):
                attributes[name] = usage[key]
    return attributes


def _finish_reasons(body: dict[str, Any]) -> list[str]:
    """``tool_calls`` when the answer asks for calls, ``stop`` when it is the final text, the
    endpoint's reason for an incomplete one; none for a body that is no Response."""
    status = body.get("status")
    if status == "incomplete":
        details = body.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        return [reason if isinstance(reason, str) else "incomplete"]
    output = body.get("output")
    if not isinstance(output, list):
        return []
    if any(isinstance(item, dict) and item.get("type") == FUNCTION_CALL for item in output):
        return ["tool_calls"]
    return ["stop"] if status == "completed" else [str(status)] if isinstance(status, str) else []


def _error_text(body: dict[str, Any]) -> str | None:
    error = body.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else None


@functools.lru_cache(maxsize=64)
def _endpoint_attributes(url: str) -> tuple[tuple[str, Any], ...]:
    """``server.address`` / ``server.port`` of a model endpoint, parsed once per URL: the host
    and port only, never a key or a query."""
    parts = urlsplit(url)
    if not parts.hostname:
        return ()
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return ((c.SERVER_ADDRESS, parts.hostname), (c.SERVER_PORT, port))
