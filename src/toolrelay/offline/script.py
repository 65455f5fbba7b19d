"""The offline model's script: what the stand-in answers to each request of a run.

A script is a JSON file ``{"turns": [ENTRY, ...]}``. Its Response entries are the
turns, in order: turn N's entry answers every request whose context has reached turn N
(1 + the number of times tool outputs came back: ``turns.py``), so a retried or resumed
request gets the same entry; after the script, the stand-in gives its final message.
An ``http_status`` entry is not a turn: it answers one request of the turn after it,
once. An entry is one of:

- ``{"calls": [{"name": ALIAS, "arguments": {...}} | {"name": ALIAS, "arguments_text":
  "raw text"}, ...], "reasoning": true | "summary", "message": "text said with the calls"}``
  (a call to a tool declared in a namespace names it too: ``"namespace": "fs", "name":
  "read_text_file"``);
  ``"preamble": "text"`` adds a commentary message before everything but the reasoning
  item, ``"after_calls": "text"`` a message after the calls;
  ``"search": {"query": "text", "limit": 5}`` searches the tools first (``tool_search_call``,
  ``searching.py``): with a hosted ``tool_search`` the stand-in also loads the matching
  deferred tools itself (``tool_search_output``), as the API does, and the entry's calls
  follow in the same response; with a client one it waits for the relay's output (the
  entry then usually has no calls: the next entry calls what was found)
- ``{"message": "final text"}`` or ``{"refusal": "text"}``
- ``{"status": "incomplete", "reason": "max_output_tokens" | "content_filter", ...}``,
  ``{"status": "failed", "error": {"code": ..., "message": ...}}``, ``{"status": "cancelled"}``
- ``{"http_status": 500}`` / ``{"http_status": 429, "retry_after": 0}``: the endpoint
  itself fails this one request (an HTTP error, not a Response)
- ``{"auto": true}``: answer this request as the stand-in does without a script.

A Response entry with ``"compact": true`` also starts its output with a ``compaction`` item
(``compaction.py``), as the endpoint does when the context crosses a request's
``compact_threshold`` (which the stand-in also does on its own, by its token estimate).

A top-level ``"sampling": ENTRY`` (a Response entry) answers every request made for a
server's sampling request (``metadata: {"toolrelay": "sampling"}``); such a request is
never a turn, and without the key it gets the stand-in's own answer.

A Response entry may also say how it streams (``stream_script.py``: ``tokens_per_second``,
``pause``, ``stream_fault``, ``hold_completed_until_file``); those keys matter only for a
request with ``stream: true``.

Parsing checks every key, so a typo is a usage error naming the entry, not a silent
change of behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..errors import UsageError
from ..protocol import json_depth
from ..protocol.responses import COMPLETED
from .stream_script import STREAM_KEYS, StreamSettings, parse_stream_settings
from .wire import compact_json

__all__ = ["INCOMPLETE", "Script", "ScriptTurn", "ScriptedCall", "ScriptedSearch", "load_script",
           "parse_script"]

INCOMPLETE: Final = "incomplete"
FAILED: Final = "failed"
RESPONSE_STATUSES: Final = (COMPLETED, INCOMPLETE, FAILED, "cancelled")
INCOMPLETE_REASONS: Final = ("max_output_tokens", "content_filter")
_TURN_KEYS: Final = frozenset(
    {"calls", "reasoning", "message", "refusal", "status", "reason", "error", "http_status",
     "retry_after", "retry_after_ms", "auto", "preamble", "after_calls", "search", "compact",
     *STREAM_KEYS}
)
_FAULT_KEYS: Final = frozenset({"http_status", "retry_after", "retry_after_ms", "error"})
_CALL_KEYS: Final = frozenset({"name", "namespace", "arguments", "arguments_text", "call_id"})
_DEFAULT_FAILURE: Final = {"code": "server_error", "message": "The model failed to generate a response."}


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedCall:
    """One function call the script makes: the alias and the exact arguments text."""

    name: str
    arguments_text: str
    call_id: str | None = None
    """Overrides the generated ``call_…`` id (for duplicate-id tests)."""
    namespace: str | None = None
    """The namespace the call names with ``name`` (a namespaced tool)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedSearch:
    """A tool search the script makes (``"search": {"query": ..., "limit": ...}``)."""

    query: str
    limit: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptTurn:
    """What the stand-in answers to one request."""

    calls: tuple[ScriptedCall, ...] = ()
    reasoning: str | bool = False
    """True: a reasoning item with an empty summary; a string: its summary text."""
    preamble: str | None = None
    """A commentary message before the others (after the reasoning item)."""
    message: str | None = None
    refusal: str | None = None
    after_calls: str | None = None
    """A message after the calls."""
    status: str = COMPLETED
    reason: str | None = None
    """``incomplete_details.reason`` for an incomplete response."""
    error: dict[str, Any] | None = None
    """The Response ``error`` (status failed) or the HTTP error body's message (fault)."""
    http_status: int | None = None
    retry_after: float | None = None
    retry_after_ms: float | None = None
    auto: bool = False
    search: ScriptedSearch | None = None
    """A tool search before the calls (``searching.py``)."""
    compact: bool = False
    """A ``compaction`` item first in the output (``compaction.py``), asked for or not."""
    stream: StreamSettings = field(default_factory=StreamSettings)
    """How the answer streams, when the request asks for a stream."""

    @property
    def is_fault(self) -> bool:
        """The endpoint answers an HTTP error instead of a Response."""
        return self.http_status is not None


@dataclass(frozen=True, slots=True)
class Script:
    turns: tuple[ScriptTurn, ...]
    source: str = "<script>"
    sampling: ScriptTurn | None = None
    """The answer to every sampling request (metadata ``toolrelay: sampling``); None: the
    stand-in's own answer. Never a run's turn entry."""


def load_script(path: str | Path) -> Script:
    """Read and check a script file; a ``UsageError`` (exit 2) says what is wrong and where."""
    data = json_depth.load_file(path, "script")
    return parse_script(data, source=str(path))


def parse_script(data: Any, *, source: str = "<script>") -> Script:
    """A ``Script`` from already-parsed JSON (``load_script`` reads the file)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("turns"), list):
        raise UsageError(f'script {source}: expected an object {{"turns": [...]}}')
    extra = sorted(set(data) - {"turns", "description", "sampling"})
    if extra:
        raise UsageError(f"script {source}: unknown key {extra[0]!r} (expected turns, sampling, description)")
    turns = tuple(_parse_turn(entry, f"script {source}: turns[{i}]") for i, entry in enumerate(data["turns"]))
    sampling = _parse_turn(data["sampling"], f"script {source}: sampling") if "sampling" in data else None
    if sampling is not None and sampling.is_fault:
        raise UsageError(f"script {source}: sampling: expected a Response entry, not an http_status")
    return Script(turns, source, sampling)


def _parse_turn(entry: Any, where: str) -> ScriptTurn:
    if not isinstance(entry, Mapping):
        raise UsageError(f"{where}: expected an object, got {type(entry).__name__}")
    unknown = sorted(set(entry) - _TURN_KEYS)
    if unknown:
        expected = ", ".join(sorted(_TURN_KEYS))
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (expected one of: {expected})")
    if not entry or set(entry) <= STREAM_KEYS:
        raise UsageError(f"{where}: empty entry; give calls, message, refusal, status, http_status or auto")
    if "http_status" in entry:
        return _parse_fault(entry, where)
    if "auto" in entry:
        if entry["auto"] is not True or len(entry) != 1:
            raise UsageError(f'{where}: "auto" must be true and alone in its entry')
        return ScriptTurn(auto=True)
    if "message" in entry and "refusal" in entry:
        raise UsageError(f"{where}: give either message or refusal, not both")
    return ScriptTurn(
        calls=_parse_calls(entry.get("calls", []), where),
        reasoning=_parse_reasoning(entry.get("reasoning", False), where),
        preamble=_optional_text(entry, "preamble", where),
        message=_optional_text(entry, "message", where),
        refusal=_optional_text(entry, "refusal", where),
        after_calls=_optional_text(entry, "after_calls", where),
        search=_parse_search(entry.get("search"), f"{where}.search"),
        compact=_parse_flag(entry, "compact", where),
        stream=parse_stream_settings(entry, where),
        **_parse_status(entry, where),
    )


def _parse_fault(entry: Mapping[str, Any], where: str) -> ScriptTurn:
    extra = sorted(set(entry) - _FAULT_KEYS)
    if extra:
        raise UsageError(f"{where}: {extra[0]!r} cannot go with http_status (allowed: retry_after, "
                         "retry_after_ms, error)")
    status = entry["http_status"]
    if not isinstance(status, int) or isinstance(status, bool) or not 400 <= status <= 599:
        raise UsageError(f"{where}: http_status must be an integer from 400 to 599, got {status!r}")
    error = entry.get("error")
    if isinstance(error, str):
        error = {"message": error}
    if error is not None and not (isinstance(error, Mapping) and isinstance(error.get("message"), str)):
        raise UsageError(f'{where}: error must be a string or an object with a "message" string')
    return ScriptTurn(
        http_status=status,
        retry_after=_optional_seconds(entry, "retry_after", where),
        retry_after_ms=_optional_seconds(entry, "retry_after_ms", where),
        error=dict(error) if error is not None else None,
    )


def _parse_status(entry: Mapping[str, Any], where: str) -> dict[str, Any]:
    status = entry.get("status", COMPLETED)
    if status not in RESPONSE_STATUSES:
        raise UsageError(f"{where}: status must be one of {', '.join(RESPONSE_STATUSES)}, got {status!r}")
    reason = entry.get("reason")
    if reason is not None and status != INCOMPLETE:
        raise UsageError(f'{where}: "reason" goes with status "incomplete" only')
    if status == INCOMPLETE:
        reason = reason or "max_output_tokens"
        if reason not in INCOMPLETE_REASONS:
            expected = ", ".join(INCOMPLETE_REASONS)
            raise UsageError(f"{where}: reason must be one of {expected}, got {reason!r}")
    error = entry.get("error")
    if error is not None and status != FAILED:
        raise UsageError(f'{where}: "error" goes with status "failed" or http_status only')
    if status == FAILED:
        error = _failure(error, where)
    return {"status": status, "reason": reason, "error": error}


def _failure(error: Any, where: str) -> dict[str, Any]:
    if error is None:
        return dict(_DEFAULT_FAILURE)
    if isinstance(error, str):
        return {"code": "server_error", "message": error}
    if isinstance(error, Mapping) and isinstance(error.get("message"), str):
        return {"code": str(error.get("code", "server_error")), "message": error["message"]}
    raise UsageError(f'{where}: error must be a string or an object with a "message" string')


def _parse_calls(calls: Any, where: str) -> tuple[ScriptedCall, ...]:
    if not isinstance(calls, list):
        raise UsageError(f"{where}: calls must be a list")
    return tuple(_parse_call(call, f"{where}.calls[{i}]") for i, call in enumerate(calls))


def _parse_call(call: Any, where: str) -> ScriptedCall:
    if not isinstance(call, Mapping):
        raise UsageError(f"{where}: expected an object with name and arguments")
    unknown = sorted(set(call) - _CALL_KEYS)
    if unknown:
        expected = "name, namespace, arguments, arguments_text, call_id"
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (expected {expected})")
    name = call.get("name")
    if not isinstance(name, str) or not name:
        raise UsageError(f"{where}: name must be a non-empty string")
    if ("arguments" in call) == ("arguments_text" in call):
        raise UsageError(f"{where}: give exactly one of arguments (a JSON value) or arguments_text (text)")
    if "arguments_text" in call:
        text = call["arguments_text"]
        if not isinstance(text, str):
            raise UsageError(f"{where}: arguments_text must be a string (the exact text the model sends)")
    else:
        text = compact_json(call["arguments"])
    call_id = call.get("call_id")
    if call_id is not None and (not isinstance(call_id, str) or not call_id):
        raise UsageError(f"{where}: call_id must be a non-empty string")
    namespace = call.get("namespace")
    if namespace is not None and (not isinstance(namespace, str) or not namespace):
        raise UsageError(f"{where}: namespace must be a non-empty string")
    return ScriptedCall(name=name, arguments_text=text, call_id=call_id, namespace=namespace)


def _parse_search(search: Any, where: str) -> ScriptedSearch | None:
    if search is None:
        return None
    if not isinstance(search, Mapping) or not isinstance(search.get("query"), str) or not search["query"]:
        raise UsageError(f'{where}: expected an object {{"query": "text", "limit": N}} with a '
                         "non-empty query")
    unknown = sorted(set(search) - {"query", "limit"})
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (expected query, limit)")
    limit = search.get("limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise UsageError(f"{where}: limit must be a whole number from 1, got {limit!r}")
    return ScriptedSearch(query=search["query"], limit=limit)


def _parse_reasoning(value: Any, where: str) -> str | bool:
    if isinstance(value, bool | str):
        return value
    raise UsageError(f"{where}: reasoning must be true, false or a summary string")


def _parse_flag(entry: Mapping[str, Any], key: str, where: str) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        raise UsageError(f"{where}: {key} must be true or false, got {value!r}")
    return value


def _optional_text(entry: Mapping[str, Any], key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise UsageError(f"{where}: {key} must be a string")
    return value


def _optional_seconds(entry: Mapping[str, Any], key: str, where: str) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise UsageError(f"{where}: {key} must be a number >= 0")
    return float(value)
