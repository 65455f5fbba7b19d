"""A scripted MCP 2026-07-28 stdio server whose tool ``t`` answers ``input_required`` (as
does any ``prompts/get`` and ``resources/read``, shaped as their results).

MODE (argv[1]): ``ask`` (a form and a sampling request, with a requestState, then the
result echoes what the retry carried), ``roots`` (roots, then the same), ``forever``
(asks every time), ``unknown`` (asks for a method no client answers).
"""

from __future__ import annotations

import json
import sys
from typing import Any

META = "io.modelcontextprotocol/"
FORM = {"mode": "form", "message": "Age?", "requestedSchema": {
    "type": "object", "properties": {"age": {"type": "integer", "default": 30}}}}
SAMPLE = {"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}], "maxTokens": 5}
ROOTS = {"r": {"method": "roots/list", "params": {}}}


def answer(mode: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "server/discover":
        return {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                "_meta": {META + "serverInfo": {"name": "m", "version": "1"}}}
    if method == "tools/list":
        return {"resultType": "complete", "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    given = params.get("inputResponses")
    if mode == "forever" or (given is None and mode == "roots"):
        return {"resultType": "input_required", "inputRequests": ROOTS}
    if mode == "unknown":
        return {"resultType": "input_required", "inputRequests": {"x": {"method": "tasks/get", "params": {}}}}
    if given is None:
        return {"resultType": "input_required", "requestState": "s-1", "inputRequests": {
            "form": {"method": "elicitation/create", "params": FORM},
            "ask": {"method": "sampling/createMessage", "params": SAMPLE}}}
    seen = json.dumps({"caps": params["_meta"][META + "clientCapabilities"], "responses": given,
                       "state": params.get("requestState")})
    if method == "prompts/get":
        message = {"role": "user", "content": {"type": "text", "text": seen}}
        return {"resultType": "complete", "messages": [message]}
    if method == "resources/read":
        return {"resultType": "complete", "contents": [{"uri": params["uri"], "text": seen}]}
    return {"resultType": "complete", "content": [{"type": "text", "text": seen}]}


def main() -> None:
    mode = sys.argv[1]
    for line in sys.stdin:
        message = json.loads(line)
        if "id" in message and "method" in message:
            result = answer(mode, message["method"], message.get("params") or {})
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)


if __name__ == "__main__":
    main()
