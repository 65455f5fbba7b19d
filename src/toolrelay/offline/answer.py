"""What the offline stand-in model says: a script entry, or the seed's scenario.

Without a script it plays the seed's walkthrough: it reads the task, picks the offered
``read_text_file`` tool (``fs__read_text_file`` first, or ``read_text_file`` in the ``fs``
namespace, called with its namespace), fills arguments that conform to
the declared parameters, and once the outputs of its calls come back it quotes them —
a failed tool reads as failed, because the text is quoted, never summarised or
invented. It is a deterministic stand-in, not a model: no other code knows the
difference, but nobody should mistake its answers for a model's judgement.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..protocol.responses import (
    COMPLETED,
    FUNCTION_CALL,
    FUNCTION_CALL_OUTPUT,
    INPUT_TEXT,
    MESSAGE,
)
from .script import INCOMPLETE, ScriptTurn
from .searching import SearchFailure, search_items
from .state import IdSource, encrypted_reasoning
from .wire import compact_json, function_call_item, message_item, reasoning_item, refusal_item

__all__ = [
    "SCRIPT_ENDED",
    "Decision",
    "fill_arguments",
    "final_answer",
    "quote_outputs",
    "scenario_answer",
    "scripted_answer",
    "seed_target",
]

DEFAULT_PATH: Final = "notes.txt"
DEFAULT_LINES: Final = 20
PREFERRED_TOOL: Final = "fs__read_text_file"
PREFERRED_NAMESPACED: Final = "fs.read_text_file"
_NAMESPACE: Final = "namespace"
"""The key under which ``function_tools`` keeps a namespaced tool's namespace."""
COMMENTARY: Final = "commentary"
"""The ``phase`` of a message said before the calls (gpt-5.5 sends it)."""
SCRIPT_ENDED: Final = "The script has no more turns, and no tool output came back to quote."
_LINES_EN: Final = re.compile(r"\b(first|last|top|bottom)\s+(\d+)\s+lines?\b", re.IGNORECASE)
_LINES_ZH: Final = re.compile(r"(前|后|最后)\s*(\d+)\s*行")
# A path with a slash, or a name with an extension ("e.g." and "i.e." are not files).
_PATH: Final = re.compile(
    r"(?<![\w.])(?!(?:e\.g|i\.e)\b)((?:[\w.~-]*/[\w./~-]*[\w~-])|(?:[\w~-][\w.~-]*\.[A-Za-z][A-Za-z0-9]{0,7}))"
    r"(?![\w/])",
    re.ASCII,
)


@dataclass(slots=True, kw_only=True)
class Decision:
    """One answer: output items and the response status."""

    output: list[dict[str, Any]] = field(default_factory=list)
    status: str = COMPLETED
    error: dict[str, Any] | None = None
    incomplete_reason: str | None = None


@dataclass(frozen=True, slots=True)
class SeedTarget:
    path: str
    lines: int
    from_end: bool = False


# -- the seed scenario ------------------------------------------------------------------------


def scenario_answer(context: list[dict[str, Any]], body: Mapping[str, Any], ids: IdSource) -> Decision:
    """The answer without a script: quote the outputs, or call the read tool, or say why not."""
    outputs = latest_outputs(context)
    if outputs:
        return Decision(output=[message_item(ids.next("msg"), quote_outputs(outputs, context))])
    tools = function_tools(body)
    if body.get("tool_choice") == "none":
        text = "tool_choice is none, so I did not call a tool. " + _offered(tools)
        return Decision(output=[message_item(ids.next("msg"), text)])
    tool = choose_tool(tools, body.get("tool_choice"))
    if tool is None:
        text = "I have no read_text_file tool to read the file with. " + _offered(tools)
        return Decision(output=[message_item(ids.next("msg"), text)])
    target = seed_target(task_text(context))
    values: dict[str, Any] = {"path": target.path, "tail" if target.from_end else "head": target.lines}
    arguments = fill_arguments(tool.get("parameters"), values)
    call = function_call_item(ids.next("fc"), ids.next("call"), tool["name"], compact_json(arguments),
                              namespace=tool.get(_NAMESPACE))
    return Decision(output=[call])


def final_answer(context: list[dict[str, Any]], ids: IdSource) -> Decision:
    """After the script: quote the outputs that came back, and never call again."""
    outputs = latest_outputs(context)
    text = quote_outputs(outputs, context) if outputs else SCRIPT_ENDED
    return Decision(output=[message_item(ids.next("msg"), text)])


def function_tools(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The request's function tools, those inside a namespace included (each a copy that
    holds its namespace's name under ``_NAMESPACE``)."""
    tools = body.get("tools")
    found: list[dict[str, Any]] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace" and isinstance(tool.get("tools"), list):
            inside = [inner for inner in tool["tools"] if _is_function(inner)]
            found.extend({**inner, _NAMESPACE: tool.get("name")} for inner in inside)
        elif _is_function(tool):
            found.append(tool)
    return found


def _is_function(tool: Any) -> bool:
    return isinstance(tool, dict) and tool.get("type") == "function" and isinstance(tool.get("name"), str)


def _handle(tool: Mapping[str, Any]) -> str:
    """How the tool is named: its name, or ``namespace.name``."""
    namespace = tool.get(_NAMESPACE)
    return f"{namespace}.{tool['name']}" if isinstance(namespace, str) else str(tool["name"])


def choose_tool(tools: list[dict[str, Any]], tool_choice: Any) -> dict[str, Any] | None:
    """The named tool when tool_choice names one; else fs__read_text_file (or fs's
    read_text_file), else *read_text_file; with ``allowed_tools`` (a policy's turn), only
    among the tools it lists, as a model keeps to them."""
    if isinstance(tool_choice, Mapping) and tool_choice.get("type") == "function":
        return next((t for t in tools if t["name"] == tool_choice.get("name")), None)
    if isinstance(tool_choice, Mapping) and tool_choice.get("type") == "allowed_tools":
        listed = tool_choice.get("tools")
        names = {entry.get("name") for entry in listed if isinstance(entry, Mapping)} \
            if isinstance(listed, list) else set()
        tools = [t for t in tools if t["name"] in names]
    preferred = [t for t in tools if _handle(t) in (PREFERRED_TOOL, PREFERRED_NAMESPACED)]
    candidates = preferred or [t for t in tools if t["name"].endswith("read_text_file")]
    return candidates[0] if candidates else None


def _offered(tools: list[dict[str, Any]]) -> str:
    if not tools:
        return "I was offered no tools."
    return "Tools offered: " + ", ".join(_handle(t) for t in tools) + "."


def task_text(context: list[dict[str, Any]]) -> str:
    """The text of the last user message in the context."""
    for item in reversed(context):
        if item.get("role") == "user" and item.get("type", MESSAGE) == MESSAGE:
            return content_text(item.get("content"))
    return ""


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping) and "text" in p)
    return ""


def seed_target(task: str) -> SeedTarget:
    """Path and line count from e.g. "first 5 lines of todo.md"; default notes.txt, 20."""
    found = _PATH.search(task)
    path = found.group(1) if found else DEFAULT_PATH
    english = _LINES_EN.search(task)
    if english:
        return SeedTarget(path, int(english.group(2)), english.group(1).lower() in ("last", "bottom"))
    chinese = _LINES_ZH.search(task)
    if chinese:
        return SeedTarget(path, int(chinese.group(2)), chinese.group(1) != "前")
    return SeedTarget(path, DEFAULT_LINES)


def fill_arguments(parameters: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments conforming to ``parameters``: known values where declared, every required
    property present (null when it may be null, as strict mode makes optional ones)."""
    schema = parameters if isinstance(parameters, Mapping) else {}
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    required = required if isinstance(required, list) else []
    arguments: dict[str, Any] = {}
    for name, sub in properties.items():
        if name in values:
            arguments[name] = values[name]
        elif name in required:
            arguments[name] = placeholder(sub)
    return arguments


def placeholder(schema: Any) -> Any:
    """A value for a required property the task says nothing about."""
    if not isinstance(schema, Mapping):
        return None
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    variants = schema.get("anyOf")
    variants = variants if isinstance(variants, list) else []
    if "null" in kinds or any(isinstance(v, Mapping) and v.get("type") == "null" for v in variants):
        return None
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    defaults = {"string": "", "integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}
    return next((defaults[k] for k in kinds if k in defaults), None)


# -- quoting the outputs it received ----------------------------------------------------------


def latest_outputs(context: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The function_call_output items at the end of the context (the newest results)."""
    outputs: list[dict[str, Any]] = []
    for item in reversed(context):
        if item.get("type") != FUNCTION_CALL_OUTPUT:
            break
        outputs.append(item)
    return outputs[::-1]


def quote_outputs(outputs: list[dict[str, Any]], context: list[dict[str, Any]]) -> str:
    """The final message: each output quoted verbatim (text parts; other parts named)."""
    if len(outputs) == 1:
        return "The tool returned:\n" + output_text(outputs[0].get("output"))
    names = {i.get("call_id"): i.get("name") for i in context if i.get("type") == FUNCTION_CALL}
    blocks = [
        f"{n}. {names.get(o.get('call_id'), 'unknown tool')} ({o.get('call_id')}) returned:\n"
        + output_text(o.get("output"))
        for n, o in enumerate(outputs, 1)
    ]
    return "The tools returned:\n\n" + "\n\n".join(blocks)


def output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if not isinstance(output, list):
        return compact_json(output)
    return "\n".join(_part_text(part) for part in output)


def _part_text(part: Any) -> str:
    if not isinstance(part, Mapping):
        return "[unreadable output part]"
    if part.get("type") == INPUT_TEXT:
        return str(part.get("text", ""))
    label = part.get("filename") or part.get("detail") or ""
    return f"[{part.get('type', 'unknown')} part{' ' + str(label) if label else ''}: not quoted]"


# -- script entries ---------------------------------------------------------------------------


def scripted_answer(turn: ScriptTurn, body: Mapping[str, Any], ids: IdSource) -> Decision:
    """The output a script entry describes, verbatim (it is the test author's model)."""
    output: list[dict[str, Any]] = []
    if turn.reasoning is not False:
        output.append(_reasoning(turn.reasoning, body, ids))
    if turn.preamble is not None:
        output.append(message_item(ids.next("msg"), turn.preamble, phase=COMMENTARY))
    if turn.message is not None:
        status = INCOMPLETE if turn.status == INCOMPLETE else COMPLETED
        output.append(message_item(ids.next("msg"), turn.message, status=status))
    if turn.refusal is not None:
        output.append(refusal_item(ids.next("msg"), turn.refusal))
    if turn.search is not None:
        try:
            output.extend(search_items(turn.search, body, ids))
        except SearchFailure as exc:
            return Decision(status="failed", error={"code": "script_error", "message": str(exc)})
    for call in turn.calls:
        call_id = call.call_id or ids.next("call")
        output.append(function_call_item(ids.next("fc"), call_id, call.name, call.arguments_text,
                                         namespace=call.namespace))
    if turn.after_calls is not None:
        output.append(message_item(ids.next("msg"), turn.after_calls))
    return Decision(output=output, status=turn.status, error=turn.error, incomplete_reason=turn.reason)


def _reasoning(summary: str | bool, body: Mapping[str, Any], ids: IdSource) -> dict[str, Any]:
    item_id = ids.next("rs")
    include = body.get("include")
    wants_content = isinstance(include, list) and "reasoning.encrypted_content" in include
    text = summary if isinstance(summary, str) else None
    return reasoning_item(item_id, text, encrypted_reasoning(item_id) if wants_content else None)
