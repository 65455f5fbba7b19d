"""Options and set-up shared by the verbs that connect to MCP servers."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..assembly.catalogs import catalog_of, configured_servers
from ..client.config import PROTOCOL_CHOICES
from ..client.host import Host
from ..events import EventStream
from ..protocol.versions import DEFAULT_VERSION, LATEST_VERSION
from ..relay.catalog import STRUCTURED_OUTPUT_MODES, Catalog
from ..relay.offer import ToolFilter
from ..relay.stages.namespaces import DECLARE_MODES
from .arg_types import positive_count, positive_seconds
from .progress import ProgressPrinter
from .server_activity import ServerActivityPrinter
from .sign_in import add_auth_option, apply_auth_option

__all__ = [
    "add_root_option", "add_server_options", "catalog_from_args", "positive_count", "positive_seconds",
    "print_json", "print_table",
]

CONFIG_HELP = """config: an MCP config file as users already have it (Claude Desktop, Cursor,
Claude Code: {"mcpServers": {...}}; VS Code: {"servers": {...}, "inputs": [...]}).
Without --config, the one server is toolrelay's read-only file server on the
current directory, named "fs"."""


def add_server_options(parser: argparse.ArgumentParser, *, strict: bool = True) -> None:
    parser.add_argument("--config", metavar="FILE", help="MCP servers config file (see below)")
    parser.add_argument(
        "--protocol-version",
        default=None,  # not given: each server's config pin, else DEFAULT_VERSION
        choices=PROTOCOL_CHOICES,
        metavar="VERSION",
        help=f"MCP revision for every server, over the config's protocolVersion: {DEFAULT_VERSION} "
        f"(default: probe, speak 2026-07-28 where the server does, else the {LATEST_VERSION} "
        f"handshake) or one to pin ({', '.join(c for c in PROTOCOL_CHOICES if c != DEFAULT_VERSION)})",
    )
    add_auth_option(parser)
    if strict:
        parser.add_argument(
            "--strict",
            action="store_true",
            help="declare tools in OpenAI strict mode (optional parameters become nullable)",
        )
        parser.add_argument(
            "--declare", choices=DECLARE_MODES, default="flat",
            help="how tools are declared: flat (default; one server__tool function each) or "
                 "namespaces (one Responses namespace per server, tools under their own names)",
        )
        parser.add_argument(
            "--structured-output", choices=STRUCTURED_OUTPUT_MODES, default="auto",
            help="auto (default): a tool's outputSchema is declared as output_schema and its valid "
                 "structuredContent is sent to the model as JSON (a schema that only wraps the text "
                 "sends the text); off: the content is always sent",
        )
    parser.epilog = CONFIG_HELP + "\n\n" + (parser.epilog or "")


def add_root_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root", dest="roots", action="append", default=[], metavar="DIR",
        help="a directory every server is told it may work in (MCP roots; repeatable), over the "
             "config's roots; without --root or a config's roots, none are declared and each server "
             "keeps the directories it was started with")


def catalog_from_args(
    args: argparse.Namespace, events: EventStream, *, printer: ProgressPrinter | None = None,
    host: Host | None = None, filters: Sequence[ToolFilter] = (),
) -> Catalog:
    """The catalog the options describe; notices on stderr (``printer``, by default one
    without progress lines); ``host`` answers what the servers ask; ``filters`` join the offer chain."""
    events.subscribe(ServerActivityPrinter())  # first: its bar is cleared before other lines
    events.subscribe(printer or ProgressPrinter(verbose=False))
    apply_auth_option(args)
    servers = configured_servers(Path(args.config) if args.config else None, events=events,
                                 log_level=getattr(args, "server_log_level", None),
                                 max_call_time=getattr(args, "call_max_time", None),
                                 roots=getattr(args, "roots", ()),
                                 max_sampling_per_call=getattr(args, "max_sampling_per_call", None),
                                 pins=getattr(args, "pins", None))
    return catalog_of(servers, events=events, strict=bool(getattr(args, "strict", False)),
                      declare=getattr(args, "declare", "flat"),
                      structured_output=getattr(args, "structured_output", "auto"),
                      protocol_version=args.protocol_version, host=host, filters=filters)


def print_table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    """Columns padded to their widest cell; the last one cut to the terminal's width."""
    table = [header, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    room = max(20, shutil.get_terminal_size((120, 20)).columns - sum(widths) - 2 * len(widths))
    for row in table:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        last = row[-1] if len(row[-1]) <= room else row[-1][: room - 1] + "…"
        sys.stdout.write("  ".join([*cells, last]).rstrip() + "\n")


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
