"""``toolrelay files [ROOT ...]``: serve the hardened, read-only MCP file server.

stdio by default: stdout carries only protocol messages and every log line goes to
stderr. ``--http [HOST:]PORT`` serves Streamable HTTP on ``/mcp`` instead, bound to
127.0.0.1 unless another address is named (then a warning). The optional bearer token is
read only from the environment (``TOOLRELAY_TOKEN``): a command line is visible to every
user of the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import re

from ..errors import ToolrelayError
from ..files import DEFAULT_MAX_RESULT_BYTES, FileService, Limits, root_from_argument
from ..protocol.framing import DEFAULT_MAX_MESSAGE_BYTES
from ..server.app import ToolService, stderr_logging
from ..server.stdio import serve_stdio
from .otel_options import add_otel_options, tracer_provider

__all__ = ["byte_size", "configure", "hold_seconds", "listen_address", "run"]

log = logging.getLogger("toolrelay.files")

TOKEN_VARIABLE = "TOOLRELAY_TOKEN"
_UNITS = {"": 1, "k": 1024, "kib": 1024, "m": 1024**2, "mib": 1024**2, "g": 1024**3, "gib": 1024**3}
_SIZE = re.compile(r"(\d+)\s*([a-z]*)", re.IGNORECASE)

EPILOG = f"""examples:
  toolrelay files ~/notes                 stdio, for a host that starts the server itself
  toolrelay files ~/notes --http 8765     Streamable HTTP on http://127.0.0.1:8765/mcp

environment:
  {TOKEN_VARIABLE}   with --http, clients must send "Authorization: Bearer <token>"
                    (never given on the command line)

Without ROOT the server serves only the directories the client declares as MCP roots;
with ROOTs, client roots can only narrow access to directories inside them.
"""


def byte_size(text: str) -> int:
    """``1048576``, ``64K``/``64KiB``, ``4M``/``4MiB``, ``1G`` → bytes (a positive count)."""
    found = _SIZE.fullmatch(text.strip())
    unit = _UNITS.get(found.group(2).lower()) if found else None
    if found is None or unit is None or int(found.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"invalid size {text!r} (examples: 1048576, 512K, 4MiB)")
    return int(found.group(1)) * unit


def hold_seconds(text: str) -> float:
    """``--sse-hold``: seconds, 0 or more (0: close right after the priming event)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value >= 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"must be a number of seconds, 0 or more, not {text!r}")
    return value


def listen_address(text: str) -> tuple[str, int]:
    """``PORT``, ``HOST:PORT`` or ``[IPV6]:PORT`` → (host, port); host 127.0.0.1 by default."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host = "127.0.0.1"
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not port.isdigit() or int(port) > 65535 or not host:
        raise argparse.ArgumentTypeError(f"invalid address {text!r} (expected [HOST:]PORT, e.g. 8765)")
    return host, int(port)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG + "\n" + (parser.epilog or "")
    parser.add_argument(
        "roots", nargs="*", metavar="ROOT", help="directory the server may read (several allowed)"
    )
    parser.add_argument(
        "--http", metavar="[HOST:]PORT", type=listen_address,
        help="serve Streamable HTTP on http://HOST:PORT/mcp instead of stdio "
        "(HOST 127.0.0.1 unless given; PORT 0 picks a free port)",
    )
    parser.add_argument(
        "--allow-origin", metavar="ORIGIN", action="append", default=[],
        help="with --http, a browser Origin to accept besides loopback ones (repeatable)",
    )
    parser.add_argument(
        "--sse-hold", metavar="SECONDS", type=hold_seconds,
        help="with --http, close a tool call's event stream after SECONDS without its answer; "
        "the client resumes it (sessions at MCP 2025-11-25; default: held open until the answer)",
    )
    parser.add_argument(
        "--max-message-bytes", metavar="BYTES", type=byte_size, default=DEFAULT_MAX_MESSAGE_BYTES,
        help="largest incoming message; larger ones are refused (default 4MiB)",
    )
    parser.add_argument(
        "--max-result-bytes", metavar="BYTES", type=byte_size, default=DEFAULT_MAX_RESULT_BYTES,
        help="most file text one result carries; head/tail stop there, whole reads above it are "
        "refused (default 1MiB)",
    )
    add_otel_options(parser)


def run(args: argparse.Namespace) -> int:
    roots = [root_from_argument(given) for given in args.roots]
    stderr_logging()
    service = _traced(FileService(roots, limits=Limits(max_result_bytes=args.max_result_bytes)), args)
    if not roots:
        log.info("no ROOT given: serving only the directories the client declares as roots")
    if args.http is None:
        asyncio.run(serve_stdio(service, max_message_bytes=args.max_message_bytes))
        return 0
    return _run_http(service, args)


def _traced(service: FileService, args: argparse.Namespace) -> ToolService:
    """The service, its calls' SERVER spans exported when tracing is on (``--otel``, OTEL_*)."""
    provider = tracer_provider(args, service="toolrelay-files")
    if provider is None:
        return service
    from ..otel.server_spans import TracedService

    tracer = provider.get_tracer("toolrelay.files")
    return TracedService(service, tracer, transport="stdio" if args.http is None else "http")


def _run_http(service: ToolService, args: argparse.Namespace) -> int:
    try:
        from ..server.http import StreamOptions, serve_http
    except ImportError:
        raise ToolrelayError("the Streamable HTTP transport is not available in this installation") from None
    host, port = args.http
    token = os.environ.get(TOKEN_VARIABLE) or None  # set but empty counts as unset
    # serve_http itself warns (on stderr, through logging) when HOST is not a loopback address.

    def ready(url: str) -> None:
        log.info("serving Streamable HTTP on %s%s", url, " (bearer token required)" if token else "")

    asyncio.run(serve_http(
        service, host=host, port=port, token=token, max_message_bytes=args.max_message_bytes,
        allowed_origins=args.allow_origin, on_ready=ready, streams=StreamOptions(hold=args.sse_hold),
    ))
    return 0
