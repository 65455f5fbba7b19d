"""Shared parts of the seed's two standalone checks (Python standard library only).

``verify_fields.py`` and ``verify_roundtrip.py`` import this module from their own
folder. Nothing here imports toolrelay: the checks read the JSON files a demo wrote and
judge them on their own, as the seed's attachments are judged — and then try the seed's
three breakages on copies (a wrong id, the original call dropped, the arguments text
turned into an object), each of which must be rejected.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

DEFAULT_FOLDER = "toolrelay-demo"
ERROR_PREFIX = "Error ("

Problems = list[str]
Checks = Callable[[dict[str, Any]], list[tuple[bool, str]]]
Breakage = tuple[str, Callable[[dict[str, Any]], None]]


def load(argv: list[str], filename: str) -> tuple[Path, dict[str, Any]]:
    """The bundle named on the command line (a demo folder or the file); exit 2 if unreadable."""
    given = Path(argv[1]) if len(argv) > 1 else Path(DEFAULT_FOLDER)
    path = given / filename if given.is_dir() else given
    try:
        bundle = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        sys.stderr.write(
            f"cannot read {path}: {exc}\n(usage: python3 {Path(argv[0]).name} DEMO_FOLDER_OR_FILE)\n"
        )
        raise SystemExit(2) from None
    if not isinstance(bundle, dict):
        sys.stderr.write(f"{path} is not a JSON object\n")
        raise SystemExit(2)
    return path, bundle


def tool_text(result: Any) -> str:
    """The text blocks of an MCP CallToolResult, joined as the application joins them."""
    blocks = result.get("content") if isinstance(result, dict) else None
    texts = [b.get("text", "") for b in blocks or [] if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(texts)


def feedback_problem(output: Any, mcp_response: Any) -> str | None:
    """Why ``output`` is not the feedback the MCP answer gives (None when it is)."""
    if not isinstance(mcp_response, dict):
        return "there is no MCP response to compare the feedback with"
    if "error" in mcp_response:
        return None if _is_failure(output) else "a JSON-RPC error was fed back as success"
    result = mcp_response.get("result")
    text = tool_text(result)
    if isinstance(result, dict) and result.get("isError") is True:
        if not _is_failure(output) or text not in str(output):
            return "the tool error (isError: true) is not fed back as an error with the tool's text"
        return None
    if output != text:
        return f"the feedback {_short(output)} is not the tool's text {_short(text)}"
    return None


def _is_failure(output: Any) -> bool:
    first = (
        output[0].get("text", "")
        if isinstance(output, list) and output and isinstance(output[0], dict)
        else output
    )
    return isinstance(first, str) and first.startswith(ERROR_PREFIX)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


def without_nulls(value: dict[str, Any], kept: dict[str, Any]) -> dict[str, Any]:
    """Strict mode sends optional properties as null; the MCP side gets them removed."""
    return {k: v for k, v in value.items() if v is not None or k in kept}


def arguments_problem(arguments: Any, mcp_arguments: Any, strict: bool) -> str | None:
    """Model side text, MCP side object, equal values — or why not."""
    if not isinstance(arguments, str):
        return f"the model's arguments must be JSON text (a string), not a {type(arguments).__name__}"
    try:
        value = json.loads(arguments)
    except ValueError as exc:
        return f"the arguments text is not JSON: {exc}"
    if not isinstance(mcp_arguments, dict):
        return f"the MCP params.arguments must be an object, not {_short(mcp_arguments)}"
    if strict and isinstance(value, dict):
        value = without_nulls(value, mcp_arguments)
    if value != mcp_arguments:
        return f"the parsed text {_short(value)} is not the MCP arguments {_short(mcp_arguments)}"
    return None


def rule_problem(declaration: Any, arguments_text: Any) -> str | None:
    """A declaration must stay a rule: schemas with types, and none of this call's values."""
    if not isinstance(declaration, dict):
        return "the declaration is missing"
    schemas = [
        (declaration.get("mcp_tool") or {}).get("inputSchema"),
        (declaration.get("function_tool") or {}).get("parameters"),
    ]
    try:
        values = json.loads(arguments_text) if isinstance(arguments_text, str) else {}
    except ValueError:
        values = {}
    for schema in schemas:
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict):
            return "a declaration without properties is not the tool's rule"
        for name, rule in properties.items():
            if not isinstance(rule, dict) or not any(k in rule for k in ("type", "anyOf", "enum", "$ref")):
                return f"properties.{name} is not a schema (a rule), but {_short(rule)}"
        held = (
            [v for v in values.values() if isinstance(v, str) and v in _strings(schema)]
            if isinstance(values, dict)
            else []
        )
        if held:
            return f"the rule holds this call's value {_short(held[0])}: a declaration never holds a value"
    return None


def _strings(value: Any) -> set[str]:
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            found.add(item)
    return found


def run(path: Path, bundle: dict[str, Any], checks: Checks, breakages: list[Breakage]) -> int:
    """Check the bundle, then each breakage on a copy; exit status 0 only when all is as it must be."""
    print(f"checking {path}")
    results = checks(bundle)
    for ok, message in results:
        print(f"  {'ok  ' if ok else 'FAIL'} {message}")
    passed = all(ok for ok, _ in results)
    print("breakages (each must be rejected):")
    for name, breaking in breakages:
        broken = copy.deepcopy(bundle)
        try:
            breaking(broken)
        except (KeyError, IndexError, TypeError) as exc:
            print(f"  FAIL {name}: cannot apply it to this bundle ({exc!r})")
            passed = False
            continue
        failures = [message for ok, message in checks(broken) if not ok]
        print(
            f"  {'ok  ' if failures else 'FAIL'} {name}: "
            + (f"rejected: {failures[0]}" if failures else "NOT rejected")
        )
        passed = passed and bool(failures)
    print("all checks hold" if passed else "some checks failed")
    return 0 if passed else 1
