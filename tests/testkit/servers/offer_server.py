"""A stdlib MCP stdio server whose offer goes beyond plain text tools (MCP host, part 2).

It sends ``instructions`` in its initialize result (``--instructions TEXT``, default a
short sentence; ``--instructions ''`` sends none) and offers:
  weather(city)   declares an outputSchema ({"temperature": number, "unit": "C"|"F"}); returns
                  it honestly, except for city "Atlantis" (a string temperature: breaks it)
                  and "Nowhere" (no structuredContent at all); for "Lyon" its text is a
                  sentence, not the JSON (what --structured-output tells apart)
  report()        three text blocks: one for the user only (annotations.audience ["user"]),
                  one for the assistant only, one for both
  link()          a resource_link with a description and a MIME type
Each tool has a ``title`` and an ``icons`` entry, as 2025-11-25 allows. Resources:
``note://today`` (text), ``img://logo`` (a PNG blob), the template ``note://day/{date}``
(any date reads as a note; ``note://day/never`` is -32002 "Resource not found"); listing
comes in two pages. Prompts: ``plan(city*, days)`` (a user message and an assistant one),
``bare()`` (no arguments); an unknown prompt or a missing required argument is -32602.

    python offer_server.py [--instructions TEXT]        (stdio)
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
ICON = [{"src": "data:image/svg+xml;base64,PHN2Zy8+", "mimeType": "image/svg+xml"}]
WEATHER_OUT = {
    "type": "object",
    "properties": {"temperature": {"type": "number"}, "unit": {"enum": ["C", "F"]}},
    "required": ["temperature", "unit"],
    "additionalProperties": False,
}
CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
NOTHING: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "weather", "title": "Weather now", "description": "The temperature in a city.",
     "inputSchema": CITY, "outputSchema": WEATHER_OUT, "icons": ICON,
     "annotations": {"readOnlyHint": True}},
    {"name": "report", "title": "Status report", "description": "A report in three parts.",
     "inputSchema": NOTHING, "icons": ICON, "annotations": {"readOnlyHint": True}},
    {"name": "link", "title": "Link to the manual", "description": "Where the manual is.",
     "inputSchema": NOTHING, "annotations": {"readOnlyHint": True}},
]
OPTIONS = argparse.Namespace(instructions="Call weather before you talk about the weather.")


def _text(text: str, audience: list[str] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if audience is not None:
        block["annotations"] = {"audience": audience, "priority": 0.5}
    return block


def weather(city: str) -> dict[str, Any]:
    if city == "Nowhere":
        return {"content": [_text("21 C")]}
    structured: dict[str, Any] = {"temperature": "warm" if city == "Atlantis" else 21.5, "unit": "C"}
    said = f"It is 21.5 C in {city}." if city == "Lyon" else json.dumps(structured)
    return {"content": [_text(said)], "structuredContent": structured}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if name == "weather":
        return weather(str(arguments.get("city", "")))
    if name == "report":
        return {"content": [
            _text("Heads up: this report cost 3 credits.", ["user"]),
            _text("Internal: the cache was warm.", ["assistant"]),
            _text("All 4 checks passed.", ["user", "assistant"]),
        ]}
    if name == "link":
        return {"content": [{
            "type": "resource_link", "uri": "file:///srv/manual.pdf", "name": "manual.pdf",
            "title": "The manual", "description": "Operator's manual, chapter 3 covers resets",
            "mimeType": "application/pdf",
        }]}
    return {"content": [_text(f"unknown tool {name}")], "isError": True}


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
RESOURCES = [
    {"uri": "note://today", "name": "today", "mimeType": "text/plain", "description": "Today's note"},
    {"uri": "img://logo", "name": "logo", "mimeType": "image/png", "title": "The logo"},
]
TEMPLATES = [{"uriTemplate": "note://day/{date}", "name": "day", "mimeType": "text/plain",
              "description": "The note of any day"}]
PROMPTS = [
    {"name": "plan", "description": "Plan a trip", "arguments": [
        {"name": "city", "required": True}, {"name": "days", "description": "how long"}]},
    {"name": "bare", "title": "A prompt without arguments"},
]


class Refused(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def read(uri: str) -> dict[str, Any]:
    if uri == "note://today":
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "Water the plants.\n"}]}
    if uri == "img://logo":
        return {"contents": [{"uri": uri, "mimeType": "image/png", "blob": PNG}]}
    if uri.startswith("note://day/") and uri != "note://day/never":
        day = uri.removeprefix("note://day/")
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": f"Nothing planned on {day}."}]}
    raise Refused(-32002, f"Resource not found: {uri}")


def prompt(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if name == "bare":
        return {"messages": [{"role": "user", "content": {"type": "text", "text": "Say hello."}}]}
    if name != "plan":
        raise Refused(-32602, f"Unknown prompt: {name}")
    if "city" not in arguments:
        raise Refused(-32602, "Missing required argument: city")
    days = arguments.get("days", "2")
    return {"description": "Plan a trip", "messages": [
        {"role": "user", "content": {"type": "text", "text": f"Plan {days} days in {arguments['city']}."}},
        {"role": "assistant", "content": {"type": "text", "text": "Which season?"}},
        {"role": "user", "content": {"type": "resource", "resource": {
            "uri": "note://today", "mimeType": "text/plain", "text": "Spring."}}},
    ]}


def page(items: list[dict[str, Any]], key: str, params: dict[str, Any]) -> dict[str, Any]:
    """Two pages: the first item, then the rest (cursor "2")."""
    if params.get("cursor") == "2":
        return {key: items[1:]}
    return {key: items[:1], "nextCursor": "2"} if len(items) > 1 else {key: items}


def result_for(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    if method == "initialize":
        asked = params.get("protocolVersion")
        result: dict[str, Any] = {
            "protocolVersion": asked if asked in VERSIONS else "2025-11-25",
            "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
            "serverInfo": {"name": "offer", "version": "1"},
        }
        if OPTIONS.instructions:
            result["instructions"] = OPTIONS.instructions
        return result
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return call(str(params.get("name")), params.get("arguments") or {})
    if method == "resources/list":
        return page(RESOURCES, "resources", params)
    if method == "resources/templates/list":
        return {"resourceTemplates": TEMPLATES}
    if method == "resources/read":
        return read(str(params.get("uri")))
    if method == "prompts/list":
        return {"prompts": PROMPTS}
    if method == "prompts/get":
        return prompt(str(params.get("name")), params.get("arguments") or {})
    if method == "ping":
        return {}
    return None


def answer(message: dict[str, Any]) -> dict[str, Any]:
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    try:
        result = result_for(str(message.get("method")), message.get("params") or {})
    except Refused as refused:
        return reply | {"error": {"code": refused.code, "message": str(refused)}}
    if result is None:
        return reply | {"error": {"code": -32601, "message": f"Method not found: {message.get('method')}"}}
    return reply | {"result": result}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--instructions", default=OPTIONS.instructions)
    parser.parse_args(namespace=OPTIONS)
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if message.get("id") is None:
            continue
        reply = answer(message)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
