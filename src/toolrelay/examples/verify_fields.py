"""Check field_fragments.json as the seed's verify_fields.py does (standard library only).

    python3 path/to/verify_fields.py toolrelay-demo          (the demo folder, or the file)

The fragments are one real call's declaration (rule), the model's call item and the MCP
request (value), the MCP response and the feedback item (result). It checks that rules
stay rules, that the arguments are JSON text on the model side and an object on the MCP
side with equal values, that the MCP id and the call_id each pair up, and that the
feedback carries the tool's own text. Then it breaks copies three ways (a wrong id, the
call dropped, the arguments text turned into an object) and requires each to be
rejected. Exit 0 only when all of that holds; 1 otherwise; 2 for an unreadable file.
What it cannot prove: that a file was read, that the server allowed it, or that the
model understood the answer — see `toolrelay verify` for the whole run.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import seedcheck

Check = tuple[str | None, str]  # (why it fails, or None; what holds when it passes)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _call_check(call: dict[str, Any]) -> Check:
    found = call.get("type") == "function_call" and call.get("call_id")
    return (None if found else "the model's function_call item is missing",
            "the model's call item is a function_call with a call_id")


def _route_check(call: dict[str, Any], route: dict[str, Any], params: dict[str, Any]) -> Check:
    joined = call.get("name") == route.get("alias") and params.get("name") == route.get("tool")
    problem = f"the route {route} does not join {call.get('name')!r} to the MCP tool {params.get('name')!r}"
    target = f"{route.get('server')}/{route.get('tool')}"
    holds = f"alias {route.get('alias')} → {target}, the original name in params.name"
    return (None if joined else problem, holds)


def _mcp_ids_check(request: dict[str, Any], response: dict[str, Any]) -> Check:
    paired = "id" in request and request.get("id") == response.get("id")
    problem = f"MCP ids do not pair: request {request.get('id')!r}, response {response.get('id')!r}"
    return (None if paired else problem,
            f"MCP request and response pair by id {request.get('id')!r}")


def _call_ids_check(call: dict[str, Any], feedback: dict[str, Any]) -> Check:
    paired = feedback.get("type") == "function_call_output" and feedback.get("call_id") == call.get("call_id")
    problem = f"call_ids do not pair: call {call.get('call_id')!r}, output {feedback.get('call_id')!r}"
    holds = f"function_call and function_call_output pair by call_id {call.get('call_id')!r}"
    return (None if paired else problem, holds)


def checks(fragments: dict[str, Any]) -> list[tuple[bool, str]]:
    call, route = _dict(fragments.get("call")), _dict(fragments.get("route"))
    request, response = _dict(fragments.get("mcp_request")), _dict(fragments.get("mcp_response"))
    feedback, params = _dict(fragments.get("feedback")), _dict(request.get("params"))
    strict = bool(fragments.get("strict"))
    found: list[Check] = [
        _call_check(call),
        (seedcheck.rule_problem(fragments.get("declaration"), call.get("arguments")),
         "the declaration is a rule: typed properties, no values of this call"),
        _route_check(call, route, params),
        (seedcheck.arguments_problem(call.get("arguments"), params.get("arguments"), strict),
         "arguments: JSON text on the model side, an object in MCP params.arguments, equal values"),
        _mcp_ids_check(request, response),
        _call_ids_check(call, feedback),
        (seedcheck.feedback_problem(feedback.get("output"), response),
         "the feedback carries the tool's own text"),
    ]
    return [(problem is None, problem or holds) for problem, holds in found]


def _wrong_id(fragments: dict[str, Any]) -> None:
    fragments["mcp_response"]["id"] = f"{fragments['mcp_response']['id']}-wrong"


def _call_dropped(fragments: dict[str, Any]) -> None:
    del fragments["call"]


def _arguments_object(fragments: dict[str, Any]) -> None:
    fragments["call"]["arguments"] = json.loads(fragments["call"]["arguments"])


BREAKAGES: list[seedcheck.Breakage] = [
    ("a wrong MCP id in the response", _wrong_id),
    ("the original function_call dropped", _call_dropped),
    ("the arguments text turned into an object", _arguments_object),
]

if __name__ == "__main__":
    path, fragments = seedcheck.load(sys.argv, "field_fragments.json")
    sys.exit(seedcheck.run(path, fragments, checks, BREAKAGES))
