"""Stage 3, parse (model side): one Responses body → what the model asked for (the
Responses dialect's reading, ``relay.stages.dialects.RESPONSES``).

Every output item is read by its ``type``, never by position: ``function_call`` items
become calls (their ``arguments`` text kept verbatim), ``message`` items give the answer
text or a refusal, and everything (reasoning, unknown kinds) is kept in ``output`` so the
next request can replay it unchanged. A function_call whose call_id an earlier item of
the same response already holds is kept apart (``duplicates``): the API takes exactly one
output per call_id, so only the first may run. A plausible call is not an execution:
this stage only reads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...protocol.responses import COMPLETED, FUNCTION_CALL, MESSAGE, OUTPUT_TEXT, REFUSAL
from .alias import namespaced_alias
from .arguments import parse_arguments
from .usage import token_counts

__all__ = ["FunctionCall", "ModelTurn", "message_text", "read_call", "read_response"]


@dataclass(slots=True, kw_only=True)
class FunctionCall:
    """One ``function_call`` output item, as the model produced it: the value a call
    travels as, from the loop to the connection (``relay.dispatch``)."""

    call_id: str
    """The model's id for the call; empty for a direct call (``toolrelay call``, recorded
    as no call_id: ``CallOutcome.call_id`` is None)."""
    name: str
    arguments_text: str
    """Exactly the model's JSON text (not parsed here)."""
    item_id: str | None = None
    problem: str | None = None
    """Why the item is malformed (e.g. arguments not a string); it still gets an output."""
    namespace: str | None = None
    """The namespace the model named with ``name`` (``--declare namespaces``), if any."""

    @property
    def alias(self) -> str:
        """The catalog alias the call names: its ``name``, or ``<namespace>.<name>``."""
        return self.name if self.namespace is None else namespaced_alias(self.namespace, self.name)

    @property
    def arguments(self) -> dict[str, Any] | None:
        """The arguments text parsed as the call stage parses it; None when it is not a
        JSON object (the call then ends ``invalid_arguments``)."""
        if self.problem is not None:
            return None
        parsed = parse_arguments(self.arguments_text)
        return parsed if isinstance(parsed, dict) else None


@dataclass(slots=True, kw_only=True)
class ModelTurn:
    """What one model response contains."""

    response_id: str | None
    status: str
    output: list[dict[str, Any]]
    """Every output item, unchanged, in order (for replay)."""
    calls: list[FunctionCall] = field(default_factory=list)
    """The function calls to run: the first item of each call_id, in output order."""
    duplicates: list[FunctionCall] = field(default_factory=list)
    """Later items reusing a call_id of ``calls``: refused, never run (one output per call_id)."""
    text: str | None = None
    refusal: str | None = None
    reason: str | None = None
    """Why the status is not ``completed`` (incomplete_details.reason or error.message)."""
    malformed: list[str] = field(default_factory=list)
    """Items that cannot be answered at all (e.g. a function_call without call_id)."""
    usage: dict[str, int] = field(default_factory=dict)
    """The response's token counts, flat (``relay.stages.usage``: input, output, total, cached
    input, reasoning); a count the endpoint did not give is absent."""
    model: str | None = None
    """The model that answered, as the endpoint named it (None when it did not)."""


def read_response(body: dict[str, Any]) -> ModelTurn:
    """Read a Responses object. Raises ValueError only if it is not one at all."""
    output = body.get("output")
    if not isinstance(output, list):
        raise ValueError('the model response has no "output" array')
    turn = ModelTurn(
        response_id=body.get("id") if isinstance(body.get("id"), str) else None,
        status=str(body.get("status") or COMPLETED),
        output=output,
        reason=_status_reason(body),
        usage=token_counts(body.get("usage")),
        model=body.get("model") if isinstance(body.get("model"), str) else None,
    )
    texts: list[str] = []
    refusals: list[str] = []
    call_ids: set[str] = set()
    for index, item in enumerate(output):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == FUNCTION_CALL:
            _read_call(item, index, turn, call_ids)
        elif kind == MESSAGE:
            _read_message(item, texts, refusals)
    turn.text = "\n".join(texts) if texts else None
    turn.refusal = "\n".join(refusals) if refusals else None
    return turn


def _read_call(item: dict[str, Any], index: int, turn: ModelTurn, call_ids: set[str]) -> None:
    call = read_call(item, index)
    if isinstance(call, str):
        turn.malformed.append(call)
        return
    (turn.duplicates if call.call_id in call_ids else turn.calls).append(call)
    call_ids.add(call.call_id)


def read_call(item: dict[str, Any], index: int) -> FunctionCall | str:
    """One ``function_call`` item (``output[index]``) → the call, or why it cannot be
    answered at all (it has no call_id). Streaming reads each item as it closes with this."""
    call_id = item.get("call_id")
    name = item.get("name")
    if not isinstance(call_id, str) or not call_id:
        return f"output[{index}] is a function_call without a call_id"
    arguments = item.get("arguments")
    problem = None
    if not isinstance(name, str):
        problem, name = "the function_call has no tool name", ""
    if not isinstance(arguments, str):
        problem = problem or f"arguments must be JSON text (a string), got {type(arguments).__name__}"
        arguments = "" if arguments is None else _as_text(arguments)
    item_id = item.get("id") if isinstance(item.get("id"), str) else None
    namespace = item.get("namespace")
    return FunctionCall(
        call_id=call_id, name=name, arguments_text=arguments, item_id=item_id, problem=problem,
        namespace=namespace if isinstance(namespace, str) else None,
    )


def _as_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _read_message(item: dict[str, Any], texts: list[str], refusals: list[str]) -> None:
    content = item.get("content")
    if isinstance(content, str):
        texts.append(content)
        return
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == OUTPUT_TEXT and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == REFUSAL and isinstance(block.get("refusal"), str):
            refusals.append(block["refusal"])


def message_text(item: dict[str, Any]) -> str | None:
    """A ``message`` item's answer text (its output_text parts joined), None if it has none."""
    texts: list[str] = []
    _read_message(item, texts, [])
    return "\n".join(texts) if texts else None


def _status_reason(body: dict[str, Any]) -> str | None:
    details = body.get("incomplete_details")
    if isinstance(details, dict) and details.get("reason"):
        return str(details["reason"])
    error = body.get("error")
    if isinstance(error, dict) and error.get("message"):
        code = f" ({error['code']})" if error.get("code") else ""
        return f"{error['message']}{code}"
    return None
