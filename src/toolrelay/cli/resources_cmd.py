"""``toolrelay resources``: the resources and templates the servers offer, or one read.

``toolrelay resources [--json]`` lists them; ``toolrelay resources read URI`` prints a
text resource, and saves a binary one with ``-o FILE`` (it never writes bytes to a
terminal). Exit 3 when no configured server is available or a server refuses the read.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..events import EventStream
from ..protocol.jsonrpc import JSONObject
from ..relay.offered import Listed, list_offered, read_contents, server_for_uri
from .common import add_server_options, catalog_from_args, print_json, print_table

__all__ = ["configure", "run"]

EXAMPLES = """examples:
  toolrelay resources --config mcp.json              every server's resources and templates
  toolrelay resources read file:///srv/notes.txt     print a text resource
  toolrelay resources read test://image -o logo.png  save a binary one"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=["read"], help="read one resource (default: list them)")
    parser.add_argument("uri", nargs="?", help="with read: the resource's URI")
    parser.add_argument("--server", metavar="NAME",
                        help="with read: the server to ask (default: the one listing it)")
    parser.add_argument("-o", "--output", metavar="FILE", help="with read: write the contents to FILE")
    parser.add_argument("--json", action="store_true", help="print JSON (the listing, or the contents read)")
    add_server_options(parser, strict=False)
    parser.epilog = EXAMPLES + "\n\n" + (parser.epilog or "")


def run(args: argparse.Namespace) -> int:
    if args.action == "read" and not args.uri:
        raise UsageError("resources read takes the resource's URI, e.g. toolrelay resources read file:///a.txt")
    if args.action is None and (args.uri or args.output or args.server):
        raise UsageError("a URI, --server and -o go with `toolrelay resources read URI`")
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    async with catalog_from_args(args, EventStream()) as catalog:
        connections = {name: catalog.connections[name] for name in catalog.available}
        if args.action == "read":
            server = await server_for_uri(connections, args.uri, args.server)
            contents = await read_contents(connections[server], args.uri)
            return _show_contents(args, server, contents)
        resources = await list_offered(connections, "resources")
        templates = await list_offered(connections, "templates")
    if args.json:
        print_json({"resources": _flat(resources), "templates": _flat(templates)})
        return 0
    _print_listing(resources, templates)
    return 0


def _flat(listed: list[Listed]) -> list[dict[str, Any]]:
    return [{"server": entry.server, **item} for entry in listed for item in entry.items]


def _print_listing(resources: list[Listed], templates: list[Listed]) -> None:
    rows = [(r["server"], str(r.get("uri", "")), str(r.get("name", "")), str(r.get("mimeType", "")),
             str(r.get("description") or r.get("title") or "")) for r in _flat(resources)]
    print_table(("SERVER", "URI", "NAME", "MIME", "DESCRIPTION"), rows)
    shapes = [(t["server"], str(t.get("uriTemplate", "")), str(t.get("name", "")), str(t.get("mimeType", "")),
               str(t.get("description") or t.get("title") or "")) for t in _flat(templates)]
    if shapes:
        sys.stdout.write("\n")
        print_table(("SERVER", "URI TEMPLATE", "NAME", "MIME", "DESCRIPTION"), shapes)
    servers = len({entry.server for entry in resources})
    sys.stdout.write(f"\n{len(rows)} resource(s) and {len(shapes)} template(s) from {servers} server(s)\n")


def _show_contents(args: argparse.Namespace, server: str, contents: list[JSONObject]) -> int:
    if args.json:
        print_json({"server": server, "uri": args.uri, "contents": contents})
        return 0
    data = b"".join(_bytes(item) for item in contents)
    texts = all(isinstance(item.get("text"), str) for item in contents)
    if args.output:
        Path(args.output).write_bytes(data)
        sys.stderr.write(f"wrote {len(data)} bytes of {args.uri} (from {server}) to {args.output}\n")
        return 0
    if not texts:
        kinds = ", ".join(sorted({str(item.get("mimeType") or "binary") for item in contents}))
        raise UsageError(f"{args.uri} is binary ({kinds}, {len(data)} bytes): save it with -o FILE")
    sys.stdout.write(data.decode("utf-8"))
    if data and not data.endswith(b"\n"):
        sys.stdout.write("\n")
    return 0


def _bytes(item: JSONObject) -> bytes:
    text = item.get("text")
    if isinstance(text, str):
        return text.encode("utf-8")
    try:
        return base64.b64decode(str(item.get("blob", "")), validate=True)
    except (binascii.Error, ValueError):
        raise UsageError(f"the server sent {item.get('uri')} with a blob that is not base64") from None
