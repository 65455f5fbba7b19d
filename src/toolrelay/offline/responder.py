"""The stand-in's answer to each request, apart from HTTP: its state, and what it says.

``Responder.post`` takes a POST's path, headers and body and returns an ``Answer``
(status, body bytes, headers): the Response object (JSON, or SSE when ``stream`` is
true), the API's error body of a rejected request, or the scripted HTTP failure of a
fault entry. It follows the script (``script.py``) or plays the seed's scenario
(``answer.py``), and validates each request like the real API (``checks.py``). The HTTP
layer (``standin.py``) only carries the bytes; its lock guards the state, as requests
and the caller's ``reset`` / ``stats`` come from different threads.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from http import HTTPStatus
from typing import Any, Final

from ..protocol import json_depth
from ..protocol.responses import REASONING, SAMPLING_METADATA
from .answer import Decision, final_answer, scenario_answer, scripted_answer
from .chat_route import CHAT_COMPLETIONS_PATH, chat_answer
from .checks import Rejection, check_request
from .compaction import compaction_item, wants_compaction
from .http_answer import SSE_HEADERS, Answer, json_answer
from .script import Script, ScriptTurn
from .state import IdSource, IssuedResponse, Ledger
from .stream_plan import stream_plan
from .stream_script import StreamSettings
from .turns import ScriptProgress, offline_id_numbers, request_context, request_turn
from .wire import OFFLINE_EPOCH, error_body, input_count, response_object, token_estimate, usage

__all__ = ["CHAT_COMPLETIONS_PATH", "RESPONSES_PATH", "Answer", "Responder", "json_answer"]

RESPONSES_PATH: Final = "/v1/responses"
STATS_RESET_PATH: Final = "/_stats/reset"
INPUT_TOKENS_PATH: Final = RESPONSES_PATH + "/input_tokens"
"""``POST /v1/responses/input_tokens``: the stand-in's count (``wire.input_count``), not recorded."""
_PARSE_ERROR: Final = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your "
    "HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)"
)
_FAULT_DEFAULTS: Final = {
    429: ("Rate limit reached for requests on the offline model. Please try again in {wait}.", "requests",
          "rate_limit_exceeded"),
    500: ("The server had an error while processing your request. Sorry about that!", "server_error", None),
    503: ("The engine is currently overloaded, please try again later.", "server_error", None),
}




def _sse_answer(response: dict[str, Any], settings: StreamSettings) -> Answer:
    """The streamed answer: one sized body when it is written at once, else a plan."""
    plan = stream_plan(response, settings)
    if plan.simple:
        body = plan.steps[0].data if plan.steps else b""
        return Answer(status=200, body=body, content_type="text/event-stream", headers=SSE_HEADERS)
    return Answer(status=200, body=b"", content_type="text/event-stream", headers=SSE_HEADERS, plan=plan)


class Responder:
    """The stand-in's state and its answer to each request; hold ``lock`` around each use."""

    def __init__(self, script: Script | None, require_key: str | None) -> None:
        self.lock = threading.Lock()
        self.script = script
        self.progress = ScriptProgress(script) if script is not None else None
        """Which entry answers which request (``turns.py``: the turn its context has reached)."""
        self.require_key = require_key
        self.requests: list[dict[str, Any]] = []
        self.request_bytes: list[int] = []
        """The size of each request body in ``requests``, as received."""
        self.chat_only = False
        """Answer ``/v1/responses`` 404 (a chat-only server: ``OfflineModel(chat_only=True)``)."""
        self.handler_us: list[float] = []
        self.reset()

    def reset(self) -> None:
        if self.progress is not None:
            self.progress.reset()
        self.ids = IdSource()
        self.ledger = Ledger()
        self.requests.clear()
        self.request_bytes.clear()
        self.handler_us.clear()

    def stats(self) -> dict[str, Any]:
        return {"requests": len(self.handler_us), "handler_s_total": round(sum(self.handler_us) / 1e6, 6),
                "handler_us": list(self.handler_us)}

    # -- one request ----------------------------------------------------------------------

    def post(self, path: str, headers: Mapping[str, str], raw: bytes) -> Answer:
        """The answer to one POST to ``path`` (no query); ``headers`` have lower-case names."""
        if path == STATS_RESET_PATH:
            self.handler_us.clear()
            return json_answer(200, {})
        if path == CHAT_COMPLETIONS_PATH:
            return chat_answer(self, headers, raw)
        if path not in (RESPONSES_PATH, INPUT_TOKENS_PATH) or self.chat_only:
            return json_answer(404, error_body(f"Invalid URL (POST {path})"))
        refused = self._check_key(headers)
        if refused is not None:
            return refused
        try:
            body = json_depth.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return json_answer(400, error_body(_PARSE_ERROR))
        if not isinstance(body, dict):
            return json_answer(400, error_body(_PARSE_ERROR))
        if path == INPUT_TOKENS_PATH:
            return json_answer(200, {"object": "response.input_tokens", "input_tokens": input_count(body)})
        self.requests.append(body)
        self.request_bytes.append(len(raw))
        return self._answer(body)

    def answer(self, body: dict[str, Any]) -> Answer:
        """The answer to a Responses request body already read (the chat route's way in)."""
        return self._answer(body)

    def check_key(self, headers: Mapping[str, str]) -> Answer | None:
        return self._check_key(headers)

    def _answer(self, body: dict[str, Any]) -> Answer:
        if body.get("metadata") == SAMPLING_METADATA:
            return self._sampling_answer(body)
        progress = self.progress
        turn = request_turn(request_context(body, self.ledger))
        fault = progress.next_fault(turn) if progress is not None else None
        if fault is not None:
            return _fault_answer(fault)
        context = check_request(body, self.ledger)
        if isinstance(context, Rejection):
            return json_answer(context.status, context.body)
        self._see_ids(context)
        entry = progress.entry(turn) if progress is not None else None
        if entry is not None and not entry.auto:
            decision = scripted_answer(entry, body, self.ids)
        elif progress is not None and entry is None:
            decision = final_answer(context, self.ids)
        else:
            decision = scenario_answer(context, body, self.ids)
        if (entry is not None and entry.compact) or wants_compaction(body, context):
            decision.output.insert(0, compaction_item(self.ids, turn, len(context)))
        first = progress.first_answer(turn) if progress is not None else True
        response = self._respond(body, context, decision)
        if body.get("stream") is not True:
            return json_answer(200, response)
        settings = entry.stream if entry is not None else StreamSettings()
        return _sse_answer(response, settings if first else replace(settings, fault=None))

    def _see_ids(self, context: list[dict[str, Any]]) -> None:
        """Move the id counters past the stand-in ids the conversation holds (a run resumed
        on a fresh stand-in never gets an id it already has)."""
        for item in context:
            for key in ("id", "call_id"):
                found = offline_id_numbers(item.get(key))
                if found is not None:
                    self.ids.seen(*found)

    def _sampling_answer(self, body: dict[str, Any]) -> Answer:
        """A server's sampling request: the script's ``sampling`` entry, else the own answer."""
        context = check_request(body, self.ledger)
        if isinstance(context, Rejection):
            return json_answer(context.status, context.body)
        entry = self.script.sampling if self.script is not None else None
        decision = (scripted_answer(entry, body, self.ids) if entry is not None and not entry.auto
                    else scenario_answer(context, body, self.ids))
        response = self._respond(body, context, decision)
        if body.get("stream") is not True:
            return json_answer(200, response)
        return _sse_answer(response, entry.stream if entry is not None else StreamSettings())

    def _respond(
        self, body: dict[str, Any], context: list[dict[str, Any]], decision: Decision
    ) -> dict[str, Any]:
        response_id = self.ids.next("resp")
        thought = 8 * sum(1 for item in decision.output if item["type"] == REASONING)
        response = response_object(
            response_id=response_id,
            created_at=OFFLINE_EPOCH + len(self.ledger.responses),
            request=body,
            output=decision.output,
            status=decision.status,
            error=decision.error,
            incomplete_reason=decision.incomplete_reason,
            token_usage=usage(token_estimate(context), token_estimate(decision.output) + thought, thought,
                              cached_tokens=self._cached(context)),
        )
        store = body.get("store", True) is not False
        self.ledger.record(IssuedResponse(response_id=response_id, store=store, context=context,
                                          output=decision.output))
        return response

    def _cached(self, context: list[dict[str, Any]]) -> int:
        """The tokens a prompt cache would hold for ``context``: the whole history of the
        response it continues (found by the last item that response gave), when the context
        starts with it unchanged (``cached_tokens``); 0 for a new conversation."""
        issuer = next((found for item in reversed(context) if (found := self.ledger.issuer(item.get("id")))),
                      None)
        if issuer is None:
            return 0
        history = issuer.history
        return token_estimate(history) if context[: len(history)] == history else 0

    def _check_key(self, headers: Mapping[str, str]) -> Answer | None:
        if self.require_key is None:
            return None
        given = headers.get("api-key") or headers.get("authorization", "").removeprefix("Bearer ").strip()
        if given == self.require_key:
            return None
        if not given:
            message = ("You didn't provide an API key. You need to provide your API key in an Authorization "
                       "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")
            return json_answer(401, error_body(message))
        shown = f"{given[:3]}{'*' * 8}{given[-4:]}" if len(given) >= 12 else "*" * len(given)
        message = (f"Incorrect API key provided: {shown}. You can find your API key at "
                   "https://platform.openai.com/account/api-keys.")
        return json_answer(401, error_body(message, code="invalid_api_key"))


def _fault_answer(entry: ScriptTurn) -> Answer:
    """The scripted HTTP failure of one request (rate limit, server error, ...)."""
    status = entry.http_status or 500
    headers: list[tuple[str, str]] = []
    if entry.retry_after is not None:
        headers.append(("Retry-After", f"{entry.retry_after:g}"))
    if entry.retry_after_ms is not None:
        headers.append(("retry-after-ms", f"{entry.retry_after_ms:g}"))
    wait = f"{entry.retry_after:g}s" if entry.retry_after is not None else "a moment"
    fallback = (HTTPStatus(status).phrase + ".", "server_error", None)
    template, kind, code = _FAULT_DEFAULTS.get(status, fallback)
    message = entry.error["message"] if entry.error else template.format(wait=wait)
    if status < 500 and status != 429:
        kind = "invalid_request_error"
    return json_answer(status, error_body(message, type=kind, code=code), tuple(headers))
