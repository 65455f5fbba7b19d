"""Check responses_roundtrip.json as the seed's verify_roundtrip.py does (standard library only).

    python3 path/to/verify_roundtrip.py toolrelay-demo       (the demo folder, or the file)

The bundle holds one real run: every model request and response, the MCP request and
response of each executed call, and the links between call_id and MCP id. It checks
that the declarations are kept (the same rules every round, no values in them), that
the rounds are continuous (replay: each request carries the previous input and output
items unchanged, then the outputs; chain: previous_response_id), that call_ids and MCP
ids each pair up, that arguments are text on the model side and an equal object on the
MCP side, and that the tool's own text enters the feedback. Then it breaks copies three
ways (a wrong id, the original call dropped, the arguments text turned into an object)
and requires each to be rejected. Exit 0 only when all of that holds; 1 otherwise; 2
for an unreadable file.
"""

from __future__ import annotations

import itertools
import json
import sys
from typing import Any

import seedcheck


def _items(value: Any, key: str) -> list[Any]:
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, list) else []


def _calls(response: Any) -> list[dict[str, Any]]:
    return [i for i in _items(response, "output") if isinstance(i, dict) and i.get("type") == "function_call"]


def _outputs(request: Any) -> list[dict[str, Any]]:
    return [
        i for i in _items(request, "input") if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]


def declarations_problem(bundle: dict[str, Any], rounds: list[Any]) -> str | None:
    first = _items(rounds[0].get("request"), "tools")
    for current in rounds[1:]:
        if _items(current.get("request"), "tools") != first:
            return f"the declarations changed in turn {current.get('turn')}"
    calls = {c.get("call_id"): c for r in rounds for c in _calls(r.get("response"))}
    for declaration in _items(bundle, "declarations"):
        if declaration.get("function_tool") not in first:
            return f"{declaration.get('alias')} is not among the tools the model was offered"
        used = [c for c in calls.values() if c.get("name") == declaration.get("alias")]
        problem = seedcheck.rule_problem(declaration, used[0].get("arguments") if used else None)
        if problem is not None:
            return problem
    return None


def continuity_problem(previous: dict[str, Any], current: dict[str, Any], mode: str) -> str | None:
    request, response = current.get("request") or {}, previous.get("response") or {}
    items = _items(request, "input")
    if mode == "chain" or "previous_response_id" in request:
        if request.get("previous_response_id") != response.get("id"):
            return f"turn {current.get('turn')} does not continue response {response.get('id')!r}"
        carried: list[Any] = []
    else:
        carried = _items(previous.get("request"), "input") + _items(response, "output")
        if items[: len(carried)] != carried:
            return f"turn {current.get('turn')} does not carry the previous input and output items unchanged"
    if any(not isinstance(i, dict) or i.get("type") != "function_call_output" for i in items[len(carried) :]):
        return f"turn {current.get('turn')} adds something other than outputs after the carried context"
    return None


def pairing_problem(previous: dict[str, Any], current: dict[str, Any], mode: str) -> str | None:
    asked = [c.get("call_id") for c in _calls(previous.get("response"))]
    given = [o.get("call_id") for o in _outputs(current.get("request"))]
    fresh = given if mode == "chain" else given[-len(asked) :] if asked else []
    if sorted(map(str, fresh)) != sorted(map(str, asked)):
        return f"turn {current.get('turn')}: call_ids {asked} are answered by outputs {fresh}"
    if mode != "chain":
        held = {
            i.get("call_id")
            for i in _items(current.get("request"), "input")
            if isinstance(i, dict) and i.get("type") == "function_call"
        }
        stray = [g for g in given if g not in held]
        if stray:
            return f"turn {current.get('turn')}: the output for {stray[0]} has no function_call in the input"
    return None


FEEDBACK_HOLDS = "the feedback carries the tool's own text"


def _pair_of(bundle: dict[str, Any], link: dict[str, Any]) -> dict[str, Any] | None:
    """The MCP request/response pair a call_id ↔ mcp id link names."""
    return next((p for p in _items(bundle, "mcp") if (p.get("request") or {}).get("id") == link.get("mcp_id")
                 and p.get("server") == link.get("server")), None)


def _item_for(items: list[dict[str, Any]], call_id: Any) -> dict[str, Any]:
    return next((item for item in items if item.get("call_id") == call_id), {})


def call_problems(bundle: dict[str, Any], rounds: list[Any]) -> list[tuple[bool, str]]:
    """For each executed call: MCP ids pair, arguments text = MCP object, feedback = tool text."""
    results: list[tuple[bool, str]] = []
    for link in (link for link in _items(bundle, "links") if link.get("mcp_id") is not None):
        name, turn, pair = link.get("call_id"), link.get("turn") or 0, _pair_of(bundle, link)
        if pair is None or not 0 < turn <= len(rounds):
            results.append((False, f"{name}: no MCP request with id {link.get('mcp_id')!r} in turn {turn}"))
            continue
        request, response = pair.get("request") or {}, pair.get("response") or {}
        ids = f"{name}: MCP request id {request.get('id')!r} ↔ response id {response.get('id')!r}"
        results.append((request.get("id") == response.get("id"), ids))
        call = _item_for(_calls(rounds[turn - 1].get("response")), name)
        sent = (request.get("params") or {}).get("arguments")
        problem = seedcheck.arguments_problem(call.get("arguments"), sent, bool(bundle.get("strict")))
        results.append((problem is None, f"{name}: {problem or 'arguments text = MCP arguments object'}"))
        output = _item_for(_outputs(rounds[turn].get("request")), name) if turn < len(rounds) else {}
        problem = seedcheck.feedback_problem(output.get("output"), response) if output else "no output"
        results.append((problem is None, f"{name}: {problem or FEEDBACK_HOLDS}"))
    return results


def checks(bundle: dict[str, Any]) -> list[tuple[bool, str]]:
    rounds = [r for r in _items(bundle, "rounds") if isinstance(r, dict)]
    if len(rounds) < 2:
        return [(False, "a round trip needs two rounds: the model never saw a tool's output")]
    mode = str(bundle.get("context_mode", "replay"))
    results: list[tuple[bool, str]] = []
    problem = declarations_problem(bundle, rounds)
    results.append((problem is None, problem or "the declarations are kept: the same rules every round"))
    for previous, current in itertools.pairwise(rounds):
        for find, holds in ((continuity_problem, "context continues"), (pairing_problem, "call_ids pair")):
            problem = find(previous, current, mode)
            results.append(
                (problem is None, problem or f"turn {previous.get('turn')} → {current.get('turn')}: {holds}")
            )
    results += call_problems(bundle, rounds)
    return results


def _first_call(bundle: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in _calls(bundle["rounds"][0]["response"]))


def _wrong_id(bundle: dict[str, Any]) -> None:
    bundle["mcp"][0]["response"]["id"] = f"{bundle['mcp'][0]['response']['id']}-wrong"


def _call_dropped(bundle: dict[str, Any]) -> None:
    call_id = _first_call(bundle)["call_id"]
    request = bundle["rounds"][1]["request"]
    request["input"] = [
        i for i in request["input"] if not (i.get("type") == "function_call" and i.get("call_id") == call_id)
    ]
    if bundle.get("context_mode") == "chain":  # chain mode carries no call: drop its output's anchor instead
        request["previous_response_id"] = None


def _arguments_object(bundle: dict[str, Any]) -> None:
    call_id = _first_call(bundle)["call_id"]
    for current in bundle["rounds"]:
        for item in _items(current.get("request"), "input") + _items(current.get("response"), "output"):
            if item.get("type") == "function_call" and item.get("call_id") == call_id:
                item["arguments"] = json.loads(item["arguments"])


BREAKAGES: list[seedcheck.Breakage] = [
    ("a wrong MCP id in the response", _wrong_id),
    ("the original function_call dropped from the second request", _call_dropped),
    ("the arguments text turned into an object", _arguments_object),
]

if __name__ == "__main__":
    path, bundle = seedcheck.load(sys.argv, "responses_roundtrip.json")
    sys.exit(seedcheck.run(path, bundle, checks, BREAKAGES))
