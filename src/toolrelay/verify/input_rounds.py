"""A 2026-07-28 call's chain of tools/call rounds: what makes it one call, not several.

A modern server that needs input answers ``input_required``; the client answers its
``inputRequests`` and retries the original request. ``verify`` accepts such a chain as
one execution when every round but the last was answered ``input_required`` (the record
puts those in ``CallTrace.input_rounds``), every retry has a new JSON-RPC id, is the
original request (same tool, same arguments), answers exactly the keys the previous round
asked for, and echoes its ``requestState`` unchanged (and sends none where none was
given); the first request carries neither. The last answer is the call's outcome.
"""

from __future__ import annotations

from typing import Any, Final

from .jsonpath import json_equal
from .record import CallTrace, Event, message_of

__all__ = ["chain_problem", "rounds_said"]

_RETRY_KEYS: Final = ("inputResponses", "requestState")


def chain_problem(call: CallTrace) -> tuple[str, Event | None] | None:
    """Why the call's rounds are no valid chain (and the request that breaks it), or None."""
    rounds = call.input_rounds
    if not rounds or not call.mcp_requests:
        return None
    first_request = rounds[0][0]
    first = _params(first_request)
    if "inputResponses" in first or "requestState" in first:
        sent = [key for key in _RETRY_KEYS if key in first]
        return (f"its first tools/call (mcp id {_id(first_request)}) carries {' and '.join(sent)} "
                "no server asked for"), first_request
    seen: set[str] = set()
    for number, (request, answer) in enumerate(rounds, 1):
        retry = rounds[number][0] if number < len(rounds) else call.mcp_requests[0]
        seen.add(repr(_id(request)))
        problem = _retry_problem(number, first, message_of(answer).get("result") or {}, retry, seen)
        if problem is not None:
            return problem, retry
    return None


def rounds_said(call: CallTrace) -> str:
    """' after N input_required rounds' for a chain ('' for a single tools/call)."""
    count = len(call.input_rounds)
    if not count:
        return ""
    return f" after {count} input_required round{'s' if count > 1 else ''}"


def _retry_problem(number: int, first: dict[str, Any], asked: dict[str, Any], retry: Event,
                   seen: set[str]) -> str | None:
    message = message_of(retry)
    params, mcp_id = message.get("params"), message.get("id")
    given = params if isinstance(params, dict) else {}
    problem = _retry_fault(number, first, asked, given, repr(mcp_id) in seen)
    return None if problem is None else f"the retry of round {number} (mcp id {mcp_id}) {problem}"


def _retry_fault(number: int, first: dict[str, Any], asked: dict[str, Any], params: dict[str, Any],
                 reused: bool) -> str | None:
    """What is wrong with a retry (its words after "the retry of round N"), or None."""
    if reused:
        return "reuses the id of an earlier round: each retry needs a new JSON-RPC id"
    same_arguments = json_equal(params.get("arguments"), first.get("arguments"))
    if params.get("name") != first.get("name") or not same_arguments:
        return "is not the original request: its tool name or arguments differ"
    wanted = asked.get("inputRequests")
    given = params.get("inputResponses")
    if not (type(wanted) is dict and type(given) is dict and wanted.keys() == given.keys()):  # common: in C
        wanted_keys = sorted(wanted) if isinstance(wanted, dict) else []
        given_keys = sorted(given) if isinstance(given, dict) else []
        if given_keys != wanted_keys:
            return f"answers inputResponses {given_keys} but round {number} asked for {wanted_keys}"
    if "requestState" in asked and "requestState" not in params:
        return f"dropped the requestState round {number} gave"
    if "requestState" in asked and params["requestState"] != asked["requestState"]:
        return f"changed the requestState round {number} gave (it must be echoed unchanged)"
    if "requestState" not in asked and "requestState" in params:
        return f"sends a requestState round {number} never gave"
    return None


def _params(event: Event) -> dict[str, Any]:
    params = message_of(event).get("params")
    return params if isinstance(params, dict) else {}


def _id(event: Event) -> Any:
    return message_of(event).get("id")
