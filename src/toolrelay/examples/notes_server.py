"""A small MCP server with resources and a prompt (Python standard library only, stdio).

The examples (docs/config.md) of ``toolrelay resources``, ``toolrelay prompts`` and ``toolrelay run
--prompt`` / ``--resource`` use it, with ``notes.json`` beside it:

    toolrelay resources --config examples/notes.json

Resources: ``note://today`` (text) and the template ``note://day/{date}``. Prompt:
``summarise(topic*)``. Tools: ``word_count(text)``, and ``find_note(date)``, whose result
is a ``resource_link`` to the day's note (``toolrelay run --expose-resources`` lets the
model follow it).
"""

from __future__ import annotations

import json
import sys
from typing import Any

TODAY = "Water the plants.\nCall the plumber about the kitchen tap.\n"
TOOLS = [{
    "name": "word_count", "description": "Count the words in a text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "annotations": {"readOnlyHint": True},
}, {
    "name": "find_note", "description": "Find the note of a day (YYYY-MM-DD): a link to read it.",
    "inputSchema": {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]},
    "annotations": {"readOnlyHint": True},
}]
RESOURCES = [{"uri": "note://today", "name": "today", "mimeType": "text/plain",
              "description": "Today's note"}]
TEMPLATES = [{"uriTemplate": "note://day/{date}", "name": "day", "mimeType": "text/plain",
              "description": "The note of a day (YYYY-MM-DD)"}]
PROMPTS = [{"name": "summarise", "description": "Summarise today's note on a topic",
            "arguments": [{"name": "topic", "description": "what to look for", "required": True}]}]


class _Refused(Exception):
    """A JSON-RPC error to answer with."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def read(uri: str) -> dict[str, Any]:
    if uri == "note://today":
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": TODAY}]}
    if uri.startswith("note://day/"):
        day = uri.removeprefix("note://day/")
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": f"No note for {day}.\n"}]}
    raise _Refused(-32002, f"Resource not found: {uri}")


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if name == "find_note":
        date = str(arguments.get("date", ""))
        link = {"type": "resource_link", "uri": f"note://day/{date}", "name": f"note of {date}",
                "mimeType": "text/plain"}
        return {"content": [{"type": "text", "text": f"The note of {date} is at note://day/{date}."}, link]}
    return {"content": [{"type": "text", "text": str(len(str(arguments.get("text", "")).split()))}]}


def prompt(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if name != "summarise" or "topic" not in arguments:
        raise _Refused(-32602, f"prompt {name} needs the argument topic" if name == "summarise" else
                      f"Unknown prompt: {name}")
    note = {"type": "resource", "resource": {"uri": "note://today", "mimeType": "text/plain", "text": TODAY}}
    ask = f"Summarise what today's note says about {arguments['topic']}, in one sentence."
    return {"messages": [{"role": "user", "content": note},
                         {"role": "user", "content": {"type": "text", "text": ask}}]}


def result_for(method: str, params: dict[str, Any]) -> dict[str, Any]:
    answers = {
        "initialize": lambda: {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                               "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                               "serverInfo": {"name": "notes", "version": "1"}},
        "ping": dict,
        "tools/list": lambda: {"tools": TOOLS},
        "tools/call": lambda: call(str(params.get("name")), params.get("arguments") or {}),
        "resources/list": lambda: {"resources": RESOURCES},
        "resources/templates/list": lambda: {"resourceTemplates": TEMPLATES},
        "resources/read": lambda: read(str(params.get("uri"))),
        "prompts/list": lambda: {"prompts": PROMPTS},
        "prompts/get": lambda: prompt(str(params.get("name")), params.get("arguments") or {}),
    }
    if method not in answers:
        raise _Refused(-32601, f"Method not found: {method}")
    return answers[method]()


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line) if line.strip() else {}
        if "id" not in message:
            continue  # a notification
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = result_for(str(message.get("method")), message.get("params") or {})
        except _Refused as refused:
            reply["error"] = {"code": refused.code, "message": str(refused)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
