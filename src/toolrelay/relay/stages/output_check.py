"""Stage 6, result (output check): a successful result against the tool's ``outputSchema``.

A tool that declares an ``outputSchema`` promises ``structuredContent`` matching it (MCP
2025-06-18 on). A result that breaks the promise is not a success: the call ends
``invalid_output`` and the model reads ``Error (invalid output): …``. The check uses the
argument validator (same drafts, no remote ``$ref``), so ``verify`` judges a recorded
answer the same way.
"""

from __future__ import annotations

from typing import Any, Final

from .arguments import ArgumentChecker

__all__ = ["output_problem"]

_ROOT: Final = "(arguments)"
_CHECKER = ArgumentChecker()
"""One validator cache for every tool's outputSchema, keyed by ``server/tool``."""


def output_problem(result: dict[str, Any], schema: Any, *, key: str) -> str | None:
    """Why ``result`` breaks ``schema`` (the tool's outputSchema), or None when it keeps it
    (or the tool declares none). ``key`` names the tool (its cached validator)."""
    if schema is None:
        return None
    if "structuredContent" not in result:
        return "the tool declares an outputSchema but its result has no structuredContent"
    if not isinstance(schema, dict):
        return "the tool's outputSchema is not a JSON object, so its result cannot be checked"
    problem = _CHECKER.validate(f"output:{key}", schema, result["structuredContent"])
    if problem is None:
        return None
    if problem.kind == "tool_schema":
        detail = problem.message.split(": ", 1)[-1]
        return f"the tool's outputSchema is invalid, so its result cannot be checked: {detail}"
    lines = [line.replace(_ROOT, "(structuredContent)", 1) for line in problem.problems]
    shown = "; ".join(lines[:5]) + (f"; … and {len(lines) - 5} more" if len(lines) > 5 else "")
    return f"structuredContent does not match the tool's outputSchema: {shown}"
