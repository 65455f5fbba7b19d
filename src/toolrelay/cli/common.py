"""Options and set-up shared by the verbs that connect to MCP servers."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from ..client.config import PROTOCOL_CHOICES
from ..events import EventStream
from ..protocol.versions import DEFAULT_VERSION
from ..relay.catalog import Catalog, servers_from
from .progress import ProgressPrinter

__all__ = ["add_server_options", "catalog_from_args", "positive_count", "positive_seconds", "print_json"]

CONFIG_HELP = """config: an MCP config file as users already have it (Claude Desktop, Cursor,
Claude Code: {"mcpServers": {...}}; VS Code: {"servers": {...}, "inputs": [...]}).
Without --config, the one server is toolrelay's read-only file server on the
current directory, named "fs"."""


def add_server_options(parser: argparse.ArgumentParser, *, strict: bool = True) -> None:
    parser.add_argument("--config", metavar="FILE", help="MCP servers config file (see below)")
    parser.add_argument(
        "--protocol-version",
        default=DEFAULT_VERSION,
        choices=PROTOCOL_CHOICES,
        help=f"MCP revision to speak: a 2025 one asks for it in the handshake (default {DEFAULT_VERSION}); "
        "2026-07-28 speaks the stateless revision; auto probes with server/discover and speaks "
        "2026-07-28 where the server does, else the handshake at 2025-11-25",
    )
    if strict:
        parser.add_argument(
            "--strict",
            action="store_true",
            help="declare tools in OpenAI strict mode (optional parameters become nullable)",
        )
    parser.epilog = CONFIG_HELP + "\n\n" + (parser.epilog or "")


def positive_count(text: str) -> int:
    """An argparse type: a whole number of at least 1 (its own message: argparse's would
    name this function)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value


def positive_seconds(text: str) -> float:
    """An argparse type: seconds above 0 (0, negatives and nan would end every wait at once)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text!r}")
    return value


def catalog_from_args(
    args: argparse.Namespace, events: EventStream, *, printer: ProgressPrinter | None = None
) -> Catalog:
    """The catalog the options describe; notices on stderr (``printer``, by default one
    without progress lines)."""
    events.subscribe(printer or ProgressPrinter(verbose=False))
    servers = servers_from(Path(args.config) if args.config else None, events=events)
    return Catalog(
        servers,
        events=events,
        strict=bool(getattr(args, "strict", False)),
        protocol_version=args.protocol_version,
    )


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
