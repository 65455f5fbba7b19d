"""``toolrelay prompts``: the prompts the servers offer, with their arguments.

A prompt starts a run with ``toolrelay run --prompt SERVER/NAME --arg k=v``. Exit 3 when no
configured server is available.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from ..events import EventStream
from ..relay.offered import list_offered
from .common import add_server_options, catalog_from_args, print_json, print_table

__all__ = ["configure", "run"]

EXAMPLES = """examples:
  toolrelay prompts --config mcp.json
  toolrelay run --config mcp.json --prompt ev/args-prompt --arg city=Paris"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print every prompt as JSON (with its server)")
    add_server_options(parser, strict=False)
    parser.epilog = EXAMPLES + "\n\n" + (parser.epilog or "")


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    async with catalog_from_args(args, EventStream()) as catalog:
        connections = {name: catalog.connections[name] for name in catalog.available}
        listed = await list_offered(connections, "prompts")
    prompts = [{"server": entry.server, **item} for entry in listed for item in entry.items]
    if args.json:
        print_json(prompts)
        return 0
    rows = [(f"{p['server']}/{p.get('name', '')}", _arguments(p.get("arguments")),
             str(p.get("description") or p.get("title") or "")) for p in prompts]
    print_table(("PROMPT", "ARGUMENTS", "DESCRIPTION"), rows)
    counted = f"{len(rows)} prompt(s) from {len(listed)} server(s)"
    sys.stdout.write(f"\n{counted}; arguments marked * are required\n")
    return 0


def _arguments(declared: Any) -> str:
    names = [f"{a.get('name')}{'*' if a.get('required') else ''}"
             for a in (declared if isinstance(declared, list) else []) if isinstance(a, dict)]
    return " ".join(names) or "-"
