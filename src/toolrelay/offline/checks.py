"""The offline stand-in's request checks: the 400s the real Responses API answers.

A relay bug that the hosted API would reject (an output without its call, a call
without its output, a replayed call without its reasoning item, arguments turned into
an object, a strict schema that is not strict-compatible) must fail offline too, with
the same error body. The messages are the API's own (spec.md §C1, §C4); each check is
a small pure function of the request and the ``Ledger`` that raises ``_Rejected``;
``check_request`` turns the first one into a ``Rejection`` value, so no exception leaves
this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..protocol.responses import COMPACTION, FUNCTION_CALL, FUNCTION_CALL_OUTPUT, MESSAGE, REASONING
from .state import IssuedResponse, Ledger, encrypted_reasoning
from .wire import error_body

__all__ = ["Rejection", "check_request"]

_NAME_PATTERN: Final = re.compile(r"^[a-zA-Z0-9_-]+$")
_JSON_TYPES: Final = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
                      int: "an integer", float: "a number", type(None): "null"}


@dataclass(frozen=True, slots=True)
class Rejection:
    """The answer to an invalid request: ``status`` with the API's error ``body``."""

    status: int
    body: dict[str, Any]


class _Rejected(Exception):
    """Internal: a check failed; ``check_request`` returns it as a ``Rejection``."""

    def __init__(
        self, message: str, *, param: str | None = "input", code: str | None = None, status: int = 400
    ) -> None:
        super().__init__(message)
        self.rejection = Rejection(status, error_body(message, param=param, code=code))


def check_request(body: Mapping[str, Any], ledger: Ledger) -> list[dict[str, Any]] | Rejection:
    """Every check, in the API's order: the context the model answers, or the first rejection."""
    try:
        _check_shape(body)
        _check_tools(body.get("tools") or [])
        items = input_items(body.get("input"))
        _check_argument_types(items)
        context = _resolve_context(body, items, ledger)
        _check_outputs_have_calls(items, context)
        _check_one_output_per_call(context)
        _check_calls_have_outputs(context)
        _check_searches_answered(context)
        _check_reasoning(items, ledger)
        _check_compactions(items, ledger)
    except _Rejected as rejected:
        return rejected.rejection
    return context


def input_items(value: Any) -> list[dict[str, Any]]:
    """The request's ``input`` as items (a string is one user message)."""
    if isinstance(value, str):
        return [{"type": MESSAGE, "role": "user", "content": value}]
    return [item for item in value or [] if isinstance(item, dict)]


def _resolve_context(
    body: Mapping[str, Any], items: list[dict[str, Any]], ledger: Ledger
) -> list[dict[str, Any]]:
    """The chained history of ``previous_response_id`` (if any) followed by the input."""
    previous_id = body.get("previous_response_id")
    if previous_id is None:
        return items
    previous = ledger.stored(previous_id) if isinstance(previous_id, str) else None
    if previous is None:
        raise _Rejected(
            f"Previous response with id '{previous_id}' not found.",
            param="previous_response_id", code="previous_response_not_found",
        )
    return [*previous.history, *items]


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), "an object")


def _check_shape(body: Mapping[str, Any]) -> None:
    if not isinstance(body.get("model"), str) or not body.get("model"):
        raise _Rejected("Missing required parameter: 'model'.", param="model",
                              code="missing_required_parameter")
    value = body.get("input")
    if value is not None and not isinstance(value, str | list):
        raise _Rejected(
            "Invalid type for 'input': expected one of a string or an array, "
            f"but got {_json_type(value)} instead.",
            code="invalid_type",
        )
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise _Rejected(
            f"Invalid type for 'tools': expected an array, but got {_json_type(tools)} instead.",
            param="tools", code="invalid_type",
        )


def _check_tools(tools: list[Any]) -> None:
    for index, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            continue
        if tool.get("type") == "function":
            _check_function(tool, f"tools[{index}]")
        elif tool.get("type") == "namespace":
            _check_namespace(tool, f"tools[{index}]")


def _check_namespace(namespace: Mapping[str, Any], where: str) -> None:
    """A namespace needs a valid name, a description and its function tools (each checked)."""
    _check_name(namespace.get("name"), where)
    if not isinstance(namespace.get("description"), str):
        raise _Rejected(f"Missing required parameter: '{where}.description'.", param=f"{where}.description",
                        code="missing_required_parameter")
    inner = namespace.get("tools")
    if not isinstance(inner, list):
        raise _Rejected(f"Missing required parameter: '{where}.tools'.", param=f"{where}.tools",
                        code="missing_required_parameter")
    for index, tool in enumerate(inner):
        if isinstance(tool, Mapping) and tool.get("type") == "function":
            _check_function(tool, f"{where}.tools[{index}]")


def _check_name(name: Any, where: str) -> None:
    if not isinstance(name, str) or not _NAME_PATTERN.match(name):
        raise _Rejected(
            f"Invalid '{where}.name': string does not match pattern. "
            "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
            param=f"{where}.name", code="invalid_value",
        )


def _check_function(tool: Mapping[str, Any], where: str) -> None:
    name = tool.get("name")
    _check_name(name, where)
    if tool.get("strict") is True:
        problem = next(_strict_problems(tool.get("parameters"), ()), None)
        if problem is not None:
            raise _Rejected(f"Invalid schema for function '{name}': {problem}",
                            param=f"{where}.parameters", code="invalid_function_parameters")


def _strict_problems(schema: Any, path: tuple[str, ...]) -> Iterator[str]:
    """Why ``schema`` is not strict-compatible (structured-outputs rules), depth first."""
    if not isinstance(schema, Mapping):
        return
    where = f"In context={path!r}, "
    if _is_object_schema(schema):
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            yield f"{where}object schema missing properties."
            return
        if schema.get("additionalProperties") is not False:
            yield f"{where}'additionalProperties' is required to be supplied and to be false."
        required = schema.get("required")
        missing = [key for key in properties if not isinstance(required, list) or key not in required]
        if missing:
            yield (f"{where}'required' is required to be supplied and to be an array including every key "
                   f"in properties. Missing '{missing[0]}'.")
        for key, sub in properties.items():
            yield from _strict_problems(sub, (*path, "properties", key))
    yield from _nested_problems(schema, path)


def _is_object_schema(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind)


def _nested_problems(schema: Mapping[str, Any], path: tuple[str, ...]) -> Iterator[str]:
    if "default" in schema and path:
        yield f"In context={path!r}, 'default' is not permitted."
    if isinstance(schema.get("items"), Mapping):
        yield from _strict_problems(schema["items"], (*path, "items"))
    for key in ("anyOf", "$defs", "definitions"):
        children = schema.get(key)
        if isinstance(children, list):
            for i, sub in enumerate(children):
                yield from _strict_problems(sub, (*path, key, str(i)))
        elif isinstance(children, Mapping):
            for name, sub in children.items():
                yield from _strict_problems(sub, (*path, key, name))


def _check_argument_types(items: list[dict[str, Any]]) -> None:
    for index, item in enumerate(items):
        if item.get("type") == FUNCTION_CALL and not isinstance(item.get("arguments"), str):
            raise _Rejected(
                f"Invalid type for 'input[{index}].arguments': expected a string, "
                f"but got {_json_type(item.get('arguments'))} instead.",
                param=f"input[{index}].arguments", code="invalid_type",
            )


def _check_outputs_have_calls(items: list[dict[str, Any]], context: list[dict[str, Any]]) -> None:
    called = {item.get("call_id") for item in context if item.get("type") == FUNCTION_CALL}
    for item in items:
        if item.get("type") == FUNCTION_CALL_OUTPUT and item.get("call_id") not in called:
            raise _Rejected(
                f"No tool call found for function call output with call_id {item.get('call_id')}."
            )


def _check_one_output_per_call(context: list[dict[str, Any]]) -> None:
    """Two outputs for one call_id are refused (two calls sharing an id, with one output, pass:
    the API pairs by call_id). The wording is the API's, as an upstream error quotes it."""
    answered: set[Any] = set()
    for item in context:
        if item.get("type") != FUNCTION_CALL_OUTPUT:
            continue
        call_id = item.get("call_id")
        if call_id in answered:
            raise _Rejected(f"Duplicate function_call_output for call_id '{call_id}'. Each function_call "
                            "must have exactly one matching function_call_output.")
        answered.add(call_id)


def _check_calls_have_outputs(context: list[dict[str, Any]]) -> None:
    answered = {item.get("call_id") for item in context if item.get("type") == FUNCTION_CALL_OUTPUT}
    for item in context:
        if item.get("type") == FUNCTION_CALL and item.get("call_id") not in answered:
            raise _Rejected(f"No tool output found for function call {item.get('call_id')}.")


def _check_searches_answered(context: list[dict[str, Any]]) -> None:
    """A client ``tool_search_call`` gets exactly one ``tool_search_output`` of its call_id,
    and no such output answers nothing."""
    kinds = ("tool_search_call", "tool_search_output")
    searched = [i for i in context if i.get("type") == kinds[0] and i.get("execution") == "client"]
    outputs = [i for i in context if i.get("type") == kinds[1] and i.get("execution") == "client"]
    called = {item.get("call_id") for item in searched}
    answered: set[Any] = set()
    for item in outputs:
        call_id = item.get("call_id")
        if call_id not in called:
            raise _Rejected(f"No tool search call found for tool_search_output with call_id {call_id}.")
        if call_id in answered:
            raise _Rejected(f"Duplicate tool_search_output for call_id '{call_id}'.")
        if not isinstance(item.get("tools"), list):
            raise _Rejected("Missing required parameter: 'tools' of tool_search_output.",
                            code="missing_required_parameter")
        answered.add(call_id)
    for item in searched:
        if item.get("call_id") not in answered:
            raise _Rejected(f"No tool search output found for tool search call {item.get('call_id')}.")


def _check_reasoning(items: list[dict[str, Any]], ledger: Ledger) -> None:
    """Replayed items of reasoning responses: reasoning kept, before its item, and readable."""
    seen: set[Any] = set()
    for index, item in enumerate(items):
        issuer = ledger.issuer(item.get("id"))
        if issuer is None:
            continue
        if item.get("type") == REASONING:
            _check_reasoning_item(item, items[index + 1:index + 2], issuer)
            seen.add(item.get("id"))
        elif item.get("type") == FUNCTION_CALL:
            needed = issuer.reasoning_before(item["id"])
            if needed is not None and needed not in seen:
                raise _Rejected(
                    f"Item '{item['id']}' of type 'function_call' was provided without its required "
                    f"'reasoning' item: '{needed}'."
                )


def _check_compactions(items: list[dict[str, Any]], ledger: Ledger) -> None:
    """A replayed ``compaction`` item carries its content as the stand-in gave it."""
    for index, item in enumerate(items):
        if item.get("type") != COMPACTION:
            continue
        content = item.get("encrypted_content")
        if not isinstance(content, str):
            raise _Rejected(
                f"Invalid type for 'input[{index}].encrypted_content': expected a string, but got "
                f"{_json_type(content)} instead.", param=f"input[{index}].encrypted_content",
                code="invalid_type")
        issuer = ledger.issuer(item.get("id"))
        issued = next((o for o in issuer.output if o.get("id") == item.get("id")), None) if issuer else None
        if issued is not None and issued.get("encrypted_content") != content:
            raise _Rejected(f"The encrypted content for item {item['id']} could not be verified.",
                            param=None, code="invalid_encrypted_content")


def _check_reasoning_item(
    item: dict[str, Any], following: list[dict[str, Any]], issuer: IssuedResponse
) -> None:
    item_id = item["id"]
    content = item.get("encrypted_content")
    if content is None and not issuer.store:
        raise _Rejected(
            f"Item with id '{item_id}' not found. Items are not persisted when `store` is set to false. "
            "Try again with `store` set to true, or remove this item from your input."
        )
    if content is not None and content != encrypted_reasoning(item_id):
        raise _Rejected(f"The encrypted content for item {item_id} could not be verified.",
                              param=None, code="invalid_encrypted_content")
    if not following or following[0].get("type") not in (FUNCTION_CALL, MESSAGE):
        raise _Rejected(
            f"Item '{item_id}' of type 'reasoning' was provided without its required following item."
        )
