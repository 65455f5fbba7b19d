"""``toolrelay tools``: what the model will see — a table, the exact ``tools`` array
(``--json``), or the strict conversion report (``--report``; as JSON with ``--json``).
The table shows each tool's title and icons as listed, and each server's instructions
(which a run passes on to the model); a tool that runs as an MCP task is marked
``[task]``. The tools the offer chain withholds (the config's ``deny``, a task tool where
tasks cannot run, ...) are listed after the table with the reason; ``--all --json``
prints ``{"tools": [...], "withheld": [...]}``. Exit 3 when no configured server is available. A
server that samples while it is listed gets ``--model`` (approved by ``--yes`` or on the
terminal)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import sys
import textwrap
from typing import Any

from ..client.task_rules import task_required
from ..events import EventStream
from ..relay.catalog import Catalog
from ..relay.stages.declare import DeclarationReport
from ..relay.stages.namespaces import function_tools_by_alias
from .common import add_root_option, add_server_options, catalog_from_args, print_json
from .host_options import (
    add_pins_option,
    add_policy_option,
    add_sampling_options,
    check_sampling_args,
    host_from_args,
    policy_from_args,
)
from .server_activity import add_log_level_option
from .tools_search import add_search_options, check_search_args, print_search
from .tools_tokens import (
    add_tokens_option,
    check_tokens_args,
    count_exactly,
    endpoint_counter,
    print_tokens,
    server_costs,
)

__all__ = ["configure", "run"]

EXAMPLES = """examples:
  toolrelay tools                          the built-in file server on this directory
  toolrelay tools --config ~/.cursor/mcp.json --json
  toolrelay tools --all --json             the tools array and the withheld tools, with why
  toolrelay tools --strict --report        what strict mode changes, tool by tool
  toolrelay tools --search "read a file" --limit 3   what a tool search would load, best first
  toolrelay tools --tokens                 the input tokens each server costs every request (estimated)"""


def configure(parser: argparse.ArgumentParser) -> None:
    add_server_options(parser)
    add_root_option(parser)
    add_log_level_option(parser)
    add_pins_option(parser)
    add_policy_option(parser)
    parser.add_argument("--json", action="store_true", help="print the exact Responses tools array")
    parser.add_argument("--all", action="store_true",
                        help='with --json: print {"tools": [that array], "withheld": [the tools not offered, '
                             "with why]}")
    parser.add_argument(
        "--report", action="store_true", help="print the strict-mode conversion report for every tool"
    )
    add_search_options(parser)
    add_tokens_option(parser)
    add_sampling_options(parser)
    parser.epilog = EXAMPLES + "\n\n" + (parser.epilog or "")


def run(args: argparse.Namespace) -> int:
    check_sampling_args(args)
    check_search_args(args)
    check_tokens_args(args)
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    async with contextlib.AsyncExitStack() as stack:
        host = await host_from_args(args, stack)
        policy = policy_from_args(args)
        filters = (policy,) if policy else ()
        made = catalog_from_args(args, EventStream(), host=host, filters=filters)
        catalog = await stack.enter_async_context(made)
        if args.search is not None:
            print_search(catalog, args)
        elif args.tokens is not None:
            costs = server_costs(catalog)
            if args.tokens == "exact":
                await count_exactly(costs, args.model, await endpoint_counter(stack, args))
            print_tokens(costs, args.tokens, args.json)
        elif args.report and args.json:
            print_json([_report_json(report) for report in catalog.report(strict=True)])
        elif args.json and args.all:
            print_json({"tools": catalog.declarations(),
                        "withheld": [entry.to_record() for entry in catalog.withheld]})
        elif args.json:
            print_json(catalog.declarations())
        elif args.report:
            _print_report(catalog)
        else:
            _print_table(catalog)
    return 0


def _print_table(catalog: Catalog) -> None:
    tools = function_tools_by_alias(catalog.declarations())
    rows = [("ALIAS", "SERVER", "TOOL", "READ-ONLY", "STRICT", "DESCRIPTION")]
    icons: list[str] = []
    for route in catalog.routes:
        declared, listed = tools[route.alias], catalog.listed(route)
        description = (declared.get("description") or "").split("\n", 1)[0]
        title = _title(listed, route.tool)
        if title:
            description = f"{title} — {description}" if description else title
        if task_required(listed):
            description = f"[task] {description}"
        icons.extend(_icons(route.alias, listed.get("icons")))
        rows.append((
            route.alias, route.server, route.tool, "yes" if route.read_only else "no",
            "yes" if declared.get("strict") else "no", description,
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    room = max(20, shutil.get_terminal_size((120, 20)).columns - sum(widths) - 10)
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        text = row[5] if len(row[5]) <= room else row[5][: room - 1] + "…"
        sys.stdout.write("  ".join([*cells, text]).rstrip() + "\n")
    # why each unavailable one is missing was said once, as it happened (stderr)
    notes = f"; unavailable: {', '.join(sorted(catalog.unavailable))}" if catalog.unavailable else ""
    notes += f"; {len(catalog.withheld)} withheld" if catalog.withheld else ""
    sys.stdout.write(f"\n{len(rows) - 1} tool(s) from {len(catalog.available)} server(s){notes}\n")
    for entry in catalog.withheld:
        sys.stdout.write(f"  - {entry.alias} ({entry.server}/{entry.tool}) not offered: {entry.reason}\n")
    if icons:
        sys.stdout.write("icons: " + ", ".join(icons) + "\n")
    for server, text in catalog.server_instructions().items():
        lines = [wrapped for line in text.strip().splitlines() for wrapped in textwrap.wrap(line, 96) or [""]]
        shown = "\n".join(f"  {line}".rstrip() for line in lines[:_INSTRUCTION_LINES])
        sys.stdout.write(f"\ninstructions from {server} (passed on to the model):\n{shown}\n")
        if len(lines) > _INSTRUCTION_LINES:
            sys.stdout.write(f"  … {len(lines) - _INSTRUCTION_LINES} more line(s)\n")


_INSTRUCTION_LINES = 12


def _title(listed: dict[str, Any], name: str) -> str | None:
    """The tool's display title when it says more than its name (``Get File Info`` does not)."""
    annotations = listed.get("annotations")
    title = listed.get("title") or (annotations.get("title") if isinstance(annotations, dict) else None)
    if not isinstance(title, str) or not title.strip():
        return None
    plain = title.strip().lower().replace(" ", "_").replace("-", "_")
    return None if plain == name.lower().replace("-", "_") else title.strip()


def _icons(alias: str, icons: Any) -> list[str]:
    """``alias (image/png 48x48)`` for each icon a tool lists (2025-11-25)."""
    found = []
    for icon in icons if isinstance(icons, list) else []:
        if isinstance(icon, dict) and isinstance(icon.get("src"), str):
            sizes = icon.get("sizes")
            size = " " + " ".join(str(s) for s in sizes) if isinstance(sizes, list) and sizes else ""
            found.append(f"{alias} ({icon.get('mimeType') or 'image'}{size})")
    return found


def _print_report(catalog: Catalog) -> None:
    for report in catalog.report(strict=True):
        verdict = "strict" if report.strict else f"non-strict (fell back: {report.fallback_reason})"
        sys.stdout.write(f"{report.alias}  ({report.server}/{report.tool}): {verdict}\n")
        lines = report.lines()
        for line in lines:
            sys.stdout.write(f"  - {line}\n")
        if not lines:
            sys.stdout.write("  - no changes\n")


def _report_json(report: DeclarationReport) -> dict[str, Any]:
    return {
        "alias": report.alias, "server": report.server, "tool": report.tool,
        "strict_requested": report.strict_requested, "strict": report.strict,
        "fallback_reason": report.fallback_reason, "notes": list(report.notes),
        "changes": [{"pointer": change.pointer, "note": change.note} for change in report.changes],
    }
