"""A big catalog of realistic tools: 20 stdio MCP servers × 25 tools (500), standard library only.

Each server is one ``DOMAIN`` (github, slack, calendar, files, postgres, ...): its tools are
its extra tools (``merge_pull_request``, ``send_message``, ...) and then list / get /
create / update / delete / search of its entities, with descriptions, titles, read-only
hints and input schemas shaped like real servers' (required ids, enums, arrays, nested
objects). A name ``DOMAIN_K`` (K ≥ 1) is a variant of that domain: its wording, its
optional parameters and its entities' order are drawn from a generator seeded by the name,
so ``catalog(400)`` gives 10,000 tools that are different yet alike (the search bench's
big case). The same name always gives the same tools.

A call returns one text block naming the tool and echoing its arguments (``isError`` for
a tool the server does not have); ``server/discover`` and other unknown methods get
-32601, so a probing client falls back to the handshake at once.

    python catalog_server.py NAME                    serve NAME's 25 tools over stdio
    python catalog_server.py --print-config [--servers N] [--deny SERVER:PATTERN ...]
                                                     an mcpServers config that starts N servers
                                                     (default 20: the 500-tool catalog)
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

TOOLS_PER_SERVER = 25
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
Field = tuple[str, str] | list[str]  # [JSON type, description]

DOMAINS: dict[str, dict[str, Any]] = json.loads((Path(__file__).parent / "catalog_domains.json").read_text())
"""domain → its product, ``about`` (the server's instructions), ``scope`` (parameters every
tool takes), ``entities`` (plural, fields) and ``extras`` (tools of its own); a field is
[JSON type, description]."""

VERBS: dict[str, tuple[tuple[str, ...], bool]] = {
    "list": (("List {plural} in {product}, newest first; filter by {fields}, page with cursor.",
              "Returns a page of {plural} from {product}, optionally filtered by {fields}."), True),
    "get": (("Get one {thing} from {product} by its ID, with all its fields.",
             "Fetch the details of {a_thing} in {product}."), True),
    "create": (("Create a new {thing} in {product}.",
                "Add {a_thing} to {product} with the given {fields}."), False),
    "update": (("Update an existing {thing} in {product}; fields left out stay unchanged.",
                "Change the {fields} of {a_thing} in {product}."), False),
    "delete": (("Delete {a_thing} from {product}. This cannot be undone.",
                "Permanently remove {a_thing} from {product}."), False),
    "search": (("Search {plural} in {product} by free-text query.",
                "Find {plural} in {product} whose text matches a query."), True),
}


def _schema(fields: dict[str, Field], required: list[str]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name, (kind, description) in fields.items():
        prop: dict[str, Any] = {"type": kind, "description": description}
        if kind == "array":
            prop["items"] = {"type": "string"}
        elif kind == "object" and name in ("start", "end"):
            prop["properties"] = {"date_time": {"type": "string", "format": "date-time"},
                                  "time_zone": {"type": "string"}}
        properties[name] = prop
    return {"type": "object", "properties": properties, "required": [n for n in required if n in properties]}


def _tool(name: str, title: str, description: str, schema: dict[str, Any], read_only: bool) -> dict[str, Any]:
    return {"name": name, "title": title, "description": description, "inputSchema": schema,
            "annotations": {"readOnlyHint": read_only, "destructiveHint": name.startswith("delete_")}}


def _entity_tool(verb: str, entity: str, plural: str, fields: dict[str, Field], product: str,
                 scope: dict[str, Field], pick: random.Random) -> dict[str, Any]:
    templates, read_only = VERBS[verb]
    thing = entity.replace("_", " ")
    shown = ", ".join(list(fields)[:3]).replace("_", " ")
    a_thing = ("an " if thing[0] in "aeiou" else "a ") + thing
    description = pick.choice(templates).format(plural=plural, thing=thing, a_thing=a_thing, product=product,
                                                 fields=shown)
    ident = {f"{entity}_id": ("string", f"The {thing}'s ID")}
    limits = {"limit": ("integer", "Page size (1-100)"),
              "cursor": ("string", "Cursor from the previous page")}
    chosen = {"list": {**dict(list(fields.items())[:2]), **limits}, "get": ident, "delete": ident,
              "create": fields, "update": {**ident, **fields},
              "search": {"query": ("string", "Text to look for"), "limit": limits["limit"]}}[verb]
    required = {"list": [], "get": [*ident], "delete": [*ident], "create": list(fields)[:1],
                "update": [*ident], "search": ["query"]}[verb]
    params = {**scope, **{k: v for k, v in chosen.items() if k in required or pick.random() < 0.85}}
    title = f"{verb.capitalize()} {plural.title() if verb in ('list', 'search') else thing.title()}"
    name = f"{verb}_{plural.replace(' ', '_') if verb in ('list', 'search') else entity}"
    return _tool(name, title, description, _schema(params, [*scope, *required]), read_only)


def tools_for(name: str) -> list[dict[str, Any]]:
    """The 25 tools of server ``name`` (a domain, or ``DOMAIN_K`` for variant K)."""
    domain, _, variant = name.partition("_") if name not in DOMAINS else (name, "", "")
    if domain not in DOMAINS or (variant and not variant.isdigit()):
        raise SystemExit(f"unknown catalog server {name!r}: use one of {', '.join(DOMAINS)} or DOMAIN_K")
    spec = DOMAINS[domain]
    scope: dict[str, Field] = {key: tuple(value) for key, value in spec["scope"].items()}
    pick = random.Random(name)
    product = f"{spec['product']} ({variant})" if variant else spec["product"]
    found = []
    for tool, extra in spec["extras"].items():
        params = extra["parameters"]
        schema = _schema({**scope, **params}, [*scope, *list(params)[:1]])
        found.append(_tool(tool, extra["title"], extra["description"], schema, extra["read_only"]))
    order = list(spec["entities"].items())
    if variant:
        pick.shuffle(order)
    for entity, about in order:
        for verb in VERBS:
            tool = _entity_tool(verb, entity, about["plural"], about["fields"], product, scope, pick)
            if all(tool["name"] != other["name"] for other in found):  # search_files may be an extra
                found.append(tool)
    return found[:TOOLS_PER_SERVER]


def server_names(count: int = len(DOMAINS)) -> list[str]:
    """The first ``count`` servers: the 20 domains, then their variants (``github_1``, ...)."""
    domains = list(DOMAINS)
    rounds = ((n // len(domains), domains[n % len(domains)]) for n in range(count))
    return [f"{domain}_{round_}" if round_ else domain for round_, domain in rounds]


def catalog(count: int = len(DOMAINS)) -> dict[str, list[dict[str, Any]]]:
    """Server name → its tools, for ``count`` servers (20: the 500-tool catalog; 400: 10,000)."""
    return {name: tools_for(name) for name in server_names(count)}


def config(python: str = sys.executable, count: int = len(DOMAINS),
           deny: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """An ``mcpServers`` config starting ``count`` catalog servers (``deny``: per server)."""
    script = str(Path(__file__).resolve())
    servers: dict[str, Any] = {}
    for name in server_names(count):
        servers[name] = {"command": python, "args": [script, name]}
        if deny and name in deny:
            servers[name]["toolrelay"] = {"deny": deny[name]}
    return {"mcpServers": servers}


def result_for(
    name: str, method: str, params: dict[str, Any], tools: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The result of a request, or None for a method this server does not have."""
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {"protocolVersion": asked if asked in HANDSHAKE_VERSIONS else "2025-11-25",
                "capabilities": {"tools": {}}, "serverInfo": {"name": f"catalog-{name}", "version": "1"},
                "instructions": DOMAINS[name.partition("_")[0]]["about"]}
    if method == "tools/list":
        return {"tools": tools}
    if method == "tools/call":
        tool = params.get("name")
        if not any(listed["name"] == tool for listed in tools):
            return {"content": [{"type": "text", "text": f"unknown tool {tool!r}"}], "isError": True}
        said = json.dumps(params.get("arguments") or {}, sort_keys=True)
        return {"content": [{"type": "text", "text": f"{name}.{tool} done with {said}"}]}
    if method == "ping":
        return {}
    return None


def serve(name: str) -> None:
    tools = tools_for(name)
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if message.get("id") is None:
            continue  # a notification
        method = str(message.get("method"))
        result = result_for(name, method, message.get("params") or {}, tools)
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": f"Method not found: {method}"}
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", nargs="?", help="the server to serve (a domain, or DOMAIN_K)")
    parser.add_argument("--print-config", action="store_true", help="print an mcpServers config and exit")
    parser.add_argument("--servers", type=int, default=len(DOMAINS),
                        help="how many servers the config starts")
    parser.add_argument("--deny", action="append", default=[], metavar="SERVER:PATTERN",
                        help="a deny entry in the printed config (repeatable)")
    args = parser.parse_args()
    if args.print_config:
        deny: dict[str, list[str]] = {}
        for entry in args.deny:
            server, _, pattern = entry.partition(":")
            deny.setdefault(server, []).append(pattern)
        print(json.dumps(config(count=args.servers, deny=deny), indent=2))
    elif args.name:
        serve(args.name)
    else:
        parser.error("give a server name, or --print-config")


if __name__ == "__main__":
    main()
