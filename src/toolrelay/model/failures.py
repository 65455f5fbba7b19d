"""What a failed model request means, in words the user can act on.

``classify_failure`` turns an HTTP error answer into a ``ModelError`` carrying the API's
own message, or a ``ModelFeatureUnsupported`` when the endpoint lacks something the
request used — ``previous_response_id``, strict schemas, ``tool_choice``, ``include``,
images or files in tool outputs, ``stream``, or ``/v1/responses`` itself — naming the
option that avoids it (and the feature, in ``.feature``). What the endpoint was told not
to keep (``store: false``) is a cause of its own (``CAUSE_RULES``, asked first): the API's
message, with what fits, never a missing feature. A 404 from a URL that has already
answered is never a missing endpoint. ``check_reply`` does the same for a 200 that is not
a usable Responses object. Both are pure; the rules come from the
error bodies real endpoints send: OpenAI/Azure ``{"error": {message, type, param, code}}``,
Ollama (same shape), vLLM (same, or a top-level ``message``), llama-server
(``{"error": {code, message, type}}``), LM Studio (``{"error": "text"}``, even with a 200),
FastAPI (``{"detail": ...}``) and plain-text 404 pages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final

from ..errors import ModelError, ModelFeatureUnsupported
from ..protocol import json_depth
from ..protocol.responses import FUNCTION_CALL_OUTPUT, INPUT_FILE, INPUT_IMAGE

__all__ = [
    "CHAIN_ADVICE",
    "NO_RESPONSES_ADVICE",
    "STREAM_ADVICE",
    "STRICT_ADVICE",
    "TEXT_ONLY_ADVICE",
    "ApiError",
    "check_reply",
    "classify_failure",
    "read_api_error",
    "status_text",
]

CHAIN_ADVICE: Final = (
    "this endpoint does not support previous_response_id (chain mode); "
    "run without --chain to replay the context instead"
)
STRICT_ADVICE: Final = "this endpoint rejects strict function schemas; run without --strict"
NO_RESPONSES_ADVICE: Final = (
    "this endpoint has no /v1/responses (Responses API); "
    "Ollama ≥ 0.13.3, vLLM, LM Studio ≥ 0.3.29 and llama-server support it"
)
TEXT_ONLY_ADVICE: Final = (
    "this endpoint or model refused an image or file from a tool result; "
    "run with --text-only to give the model text stand-ins for them instead"
)
STREAM_ADVICE: Final = "this endpoint does not stream responses; run with --no-stream"
MESSAGE_LIMIT: Final = 500
_REJECT_WORDS: Final = (
    "not supported", "unsupported", "does not support", "unknown parameter", "unrecognized", "not permitted",
    "extra inputs", "not allowed", "not implemented", "unknown field", "invalid",
)
_RESPONSE_NOT_FOUND: Final = re.compile(r"response with id .* not found")
_ITEM_NOT_FOUND: Final = re.compile(r"item with id .* not found")
_STREAM_WORD: Final = re.compile(r"\bstream(ing|ed|s)?\b")  # not "upstream", not "stream_options"
UNSTORED_CHAIN_HINT: Final = (
    "the request continues from a previous response (--chain) and sends store: false (--no-store), so "
    "the endpoint kept no response to continue from; run without --no-store, or without --chain"
)
UNSTORED_ITEM_HINT: Final = (
    "the request sends store: false (--no-store), so the endpoint keeps no items, and a replayed item "
    "lacks the encrypted reasoning content that would stand in for it; run without --no-store"
)
UNKEPT_ITEM_HINT: Final = (
    "the endpoint did not keep an item of an earlier response, as it stores none; run with --no-store, "
    "so toolrelay asks for encrypted reasoning items it can replay in full"
)
ANSWERED_BEFORE_NOTE: Final = (
    "it answered this URL before, so the endpoint exists: the 404 is about something the request names"
)
_ANSWERED_200: Final = "the model endpoint answered 200"


@dataclass(frozen=True, slots=True)
class ApiError:
    """The error an endpoint described, whatever shape its body had."""

    message: str
    type: str | None = None
    param: str | None = None
    code: str | None = None

    @property
    def words(self) -> str:
        """Message, param and code, lower-cased: what the rules search."""
        return " ".join(p for p in (self.message, self.param, self.code) if p).lower()

    def mentions(self, *needles: str) -> bool:
        return any(needle in self.words for needle in needles)

    @property
    def rejects(self) -> bool:
        return self.mentions(*_REJECT_WORDS)


def status_text(status: int) -> str:
    """``401 Unauthorized``."""
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"


def _optional_text(value: Any) -> str | None:
    return None if value is None else str(value)


def read_api_error(body: Any) -> ApiError:
    """The API's own message (and type, param, code) from any known error body shape."""
    if isinstance(body, str):
        return ApiError(_short(body))
    if not isinstance(body, Mapping):
        return ApiError("")
    error = body.get("error")
    if isinstance(error, Mapping):
        return ApiError(_short(str(error.get("message") or "")), _optional_text(error.get("type")),
                        _optional_text(error.get("param")), _optional_text(error.get("code")))
    if isinstance(error, str):
        return ApiError(_short(error))
    if isinstance(body.get("message"), str):
        return ApiError(_short(body["message"]), _optional_text(body.get("type")),
                        _optional_text(body.get("param")), _optional_text(body.get("code")))
    return ApiError(_short(_detail_text(body.get("detail"))))


def _detail_text(detail: Any) -> str:
    """FastAPI's ``detail``: a string, or pydantic's list of ``{loc, msg}``."""
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list):
        parts = []
        for entry in detail:
            if isinstance(entry, Mapping):
                location = ".".join(str(p) for p in entry.get("loc") or [])
                parts.append(f"{location}: {entry.get('msg', '')}" if location else str(entry.get("msg", "")))
        return "; ".join(parts)
    return ""


# -- feature rules: (answer, request) → advice, or None ---------------------------------------------

Rule = Callable[[int, ApiError, Mapping[str, Any]], str | None]


def _refusal(status: int, error: ApiError, *names: str) -> bool:
    """The endpoint refused something it names: a client error (or 501) mentioning it."""
    return error.mentions(*names) and (400 <= status < 500 or status == 501 or error.rejects)


def _about_previous_response(error: ApiError) -> bool:
    return bool(
        error.mentions("previous_response", "previous response")
        or error.param in ("previous_response_id", "response_id")
        or _RESPONSE_NOT_FOUND.search(error.words)
        or (error.mentions("store") and error.rejects)
    )


def _chain_rule(status: int, error: ApiError, request: Mapping[str, Any]) -> str | None:
    if request.get("previous_response_id") and _about_previous_response(error):
        return CHAIN_ADVICE
    return None


def _strict_rule(status: int, error: ApiError, request: Mapping[str, Any]) -> str | None:
    tools = request.get("tools")
    tools = tools if isinstance(tools, list) else []
    if not any(isinstance(t, Mapping) and t.get("strict") is True for t in tools):
        return None
    schema_refused = error.code == "invalid_function_parameters" or error.mentions("invalid schema for")
    if schema_refused or _refusal(status, error, "strict"):
        return STRICT_ADVICE
    return None


def _tool_choice_rule(status: int, error: ApiError, request: Mapping[str, Any]) -> str | None:
    if "tool_choice" not in request or not _refusal(status, error, "tool_choice", "tool choice"):
        return None
    choice = request["tool_choice"]
    shown = choice if isinstance(choice, str) else f"{choice.get('type')} {choice.get('name')}"
    return f"this endpoint does not support tool_choice {shown!r}; drop --tool-choice"


def _include_rule(status: int, error: ApiError, request: Mapping[str, Any]) -> str | None:
    include = request.get("include")
    if not include or not (error.param == "include" or _refusal(status, error, "encrypted", "include")):
        return None
    values = ", ".join(str(v) for v in include) if isinstance(include, list) else str(include)
    return (
        f"this endpoint or model does not support include [{values}] (encrypted reasoning items, asked for "
        "because store is false); run without --no-store, or with a model that supports it"
    )


def _tool_media_rule(status: int, error: ApiError, request: Mapping[str, Any]) -> str | None:
    """A client error about files or images, for a request that carries some in a tool output."""
    if not ((400 <= status < 500 and status not in (404, 405)) or status == 501):
        return None
    if not _carries_tool_media(request):
        return None
    if error.mentions("file", "image", "mime", "media") or ".output[" in (error.param or ""):
        return TEXT_ONLY_ADVICE
    return None


def _carries_tool_media(request: Mapping[str, Any]) -> bool:
    items = request.get("input")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping) or item.get("type") != FUNCTION_CALL_OUTPUT:
            continue
        output = item.get("output")
        if isinstance(output, list) and any(
            isinstance(part, Mapping) and part.get("type") in (INPUT_FILE, INPUT_IMAGE) for part in output
        ):
            return True
    return False


def _stream_rule(status: int, error: ApiError, request: Mapping[str, Any]) -> str | None:
    if request.get("stream") is not True:
        return None
    named = error.param == "stream" or bool(_STREAM_WORD.search(error.words))
    if named and (400 <= status < 500 or status == 501 or error.rejects) and status not in (404, 429):
        return STREAM_ADVICE
    return None


def _no_responses_rule(status: int, error: ApiError, request: Mapping[str, Any]) -> str | None:
    if error.mentions("unexpected endpoint") or error.words.startswith("invalid url"):
        return NO_RESPONSES_ADVICE
    # a missing route names no request parameter, and no model
    if status in (404, 405) and not error.param and not error.mentions("model"):
        return NO_RESPONSES_ADVICE
    return None


FEATURE_RULES: Final[tuple[tuple[str, Rule], ...]] = (
    ("previous_response_id", _chain_rule), ("strict", _strict_rule), ("tool_choice", _tool_choice_rule),
    ("include", _include_rule), ("tool_media", _tool_media_rule), ("stream", _stream_rule),
    ("responses", _no_responses_rule),
)
"""(the feature it names, the rule), asked in order."""


# -- cause rules: what the endpoint was told not to keep (asked before the feature rules) ----------


def _unstored_chain_rule(status: int, error: ApiError, request: Mapping[str, Any]) -> str | None:
    stored = request.get("store") is not False
    if stored or not request.get("previous_response_id") or not _about_previous_response(error):
        return None
    return UNSTORED_CHAIN_HINT


def _unkept_item_rule(status: int, error: ApiError, request: Mapping[str, Any]) -> str | None:
    if not (_ITEM_NOT_FOUND.search(error.words) or error.mentions("not persisted")):
        return None
    return UNSTORED_ITEM_HINT if request.get("store") is False else UNKEPT_ITEM_HINT


CAUSE_RULES: Final[tuple[Rule, ...]] = (_unstored_chain_rule, _unkept_item_rule)


def classify_failure(
    status: int,
    body: Any,
    request_body: Mapping[str, Any],
    *,
    url: str | None = None,
    answered_before: bool = False,
) -> ModelError:
    """The error for an HTTP error answer (``body`` parsed JSON, or text); ``url`` is named
    when the endpoint has no Responses API at that address, which it never is when it
    ``answered_before`` (a 2xx from the same URL)."""
    error = read_api_error(body)
    answered = f"answered {status_text(status)}" + (f": {error.message}" if error.message else "")
    for rule in CAUSE_RULES:
        hint = rule(status, error, request_body)
        if hint is not None:
            return ModelError(f"model endpoint {answered} — {hint}", status)
    for feature, rule in FEATURE_RULES:
        advice = rule(status, error, request_body)
        if advice is None or (advice == NO_RESPONSES_ADVICE and answered_before):
            continue
        where = f"POST {url} " if url and advice == NO_RESPONSES_ADVICE else ""
        return ModelFeatureUnsupported(f"{advice} ({where}{answered})", status, feature=feature)
    note = f" ({ANSWERED_BEFORE_NOTE})" if answered_before and status == 404 else ""
    return ModelError(f"model endpoint {answered}{note}", status)


def check_reply(body: Any, request_body: Mapping[str, Any]) -> ModelError | None:
    """Why a 2xx answer is not a usable Responses object, or None when it is one."""
    if isinstance(body, str):
        return ModelError(f"{_ANSWERED_200} with {_unreadable(body)}: {_short(body)[:200]!r}")
    if not isinstance(body, Mapping):
        return ModelError(f"{_ANSWERED_200} with JSON {type(body).__name__}, not a Responses object")
    output = body.get("output")
    if not isinstance(output, list):
        return _not_a_response(body)
    if body.get("object", "response") != "response":
        return ModelError(f"{_ANSWERED_200} with object {body.get('object')!r}, not 'response'")
    for index, item in enumerate(output):
        if not isinstance(item, Mapping) or not isinstance(item.get("type"), str):
            return ModelError(f"{_ANSWERED_200} with output[{index}] that has no 'type': {item!r:.200}")
    chained = request_body.get("previous_response_id")
    if chained and "previous_response_id" in body and body["previous_response_id"] is None:
        ignored = "it answered with previous_response_id: null, so it ignored the previous response"
        return ModelFeatureUnsupported(f"{CHAIN_ADVICE} ({ignored})", 200, feature="previous_response_id")
    return None


def _unreadable(text: str) -> str:
    """What a body kept as text is: not JSON, or JSON too deep to read (json_depth)."""
    try:
        json_depth.loads(text)
    except json_depth.JsonTooDeep:
        return f"JSON nested deeper than {json_depth.MAX_DEPTH} levels"
    except ValueError:
        pass
    return "a body that is not JSON"


def _not_a_response(body: Mapping[str, Any]) -> ModelError:
    error = read_api_error(body)
    if "error" in body and error.message:
        if error.mentions("unexpected endpoint"):
            return ModelFeatureUnsupported(f"{NO_RESPONSES_ADVICE} (it answered 200: {error.message})", 200,
                                           feature="responses")
        return ModelError(f"{_ANSWERED_200} with an error instead of a response: {error.message}")
    if "choices" in body:
        return ModelError(f"{_ANSWERED_200} with a Chat Completions object ('choices'), not a Responses "
                          "object: is the URL a /v1/chat/completions endpoint?")
    keys = ", ".join(sorted(str(k) for k in body)[:10]) or "none"
    return ModelError(f"{_ANSWERED_200} with JSON that is not a Responses object: no 'output' list "
                      f"(keys: {keys})")
