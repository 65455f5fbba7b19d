"""next_input: every request of a run carries the request settings the run declared.

``run_start`` (and each ``run_resumed`` / ``user_turn``) records the settings every request
of the run carries (``settings``: ``--request-settings``, the sampling options, in the
loop's Responses names). Each ``model_request`` after it must hold each of them with the
same value, as its dialect says them: a chat body as ``protocol.chat.chat_request`` makes
them (the adapter's own renaming: ``max_completion_tokens``, ``reasoning_effort``,
``logprobs``; ``include`` dropped). A transcript written before runs recorded their
settings has none to check.
"""

from __future__ import annotations

from typing import Any, Final

from ..events import ModelRequestEvent, RunResumedEvent, RunStartEvent, UserTurnEvent
from ..protocol import chat
from ..relay.stages.dialects import dialect_of
from .facts import RunFacts
from .jsonpath import excerpt
from .record import RunRecord
from .verdict import Finding

__all__ = ["check_request_settings"]

_STARTS: Final = (RunStartEvent.kind, RunResumedEvent.kind, UserTurnEvent.kind)
_CHECK: Final = "request_settings"


def check_request_settings(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """next_input: each request holds the settings declared before it (one finding a run)."""
    if not any(isinstance(event.get("settings"), dict) for kind in _STARTS for event in run.of_kind(kind)):
        return []  # nothing declared: no request is held to anything (and no event need be walked)
    declared: dict[str, Any] | None = None
    declared_at = 0
    said: dict[object, dict[str, Any]] = {}  # the declared settings as each dialect says them
    checked = 0
    for event in run.events:
        kind = event.get("kind")
        if kind in _STARTS:
            found = event.get("settings")
            declared = found if isinstance(found, dict) else None
            declared_at, said = event["seq"], {}
            continue
        if kind != ModelRequestEvent.kind or declared is None:
            continue
        dialect = dialect_of(event)
        if dialect not in said:
            said[dialect] = _as_sent(declared, dialect)
        body = event.get("body")
        problem = _missing(said[dialect], body if isinstance(body, dict) else {})
        if problem is not None:
            return [Finding(link="next_input", ok=False, check=_CHECK, turn=event.get("turn"),
                            seqs=(declared_at, event["seq"]),
                            message=f"the request at seq {event['seq']} {problem}, but the run declared "
                                    f"the request settings {_excerpt(declared)} (seq {declared_at})")]
        checked += 1
    if not checked:
        return []
    return [Finding(link="next_input", ok=True, check=_CHECK,
                    message=f"each of the {checked} request(s) carries the declared request settings")]


def _as_sent(settings: dict[str, Any], dialect: object) -> dict[str, Any]:
    """``settings`` as a request body of ``dialect`` carries them."""
    if dialect != chat.DIALECT:
        return settings
    sent = chat.chat_request({"model": None, "input": [], **settings})
    return {key: value for key, value in sent.items() if key not in ("model", "messages")}


def _missing(expected: dict[str, Any], body: dict[str, Any]) -> str | None:
    for key, value in expected.items():
        if key not in body:
            return f"has no {key}"
        if body[key] != value:
            return f"sends {key} {_excerpt(body[key])}"
    return None


def _excerpt(value: Any) -> str:
    return excerpt(value, 160)
