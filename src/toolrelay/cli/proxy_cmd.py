"""``toolrelay proxy``: one MCP server for a host, fronting every server of a config.

stdio by default (the host starts ``toolrelay proxy`` as it would any server; stdout
carries only protocol messages, every notice goes to stderr); ``--http [HOST:]PORT``
serves Streamable HTTP on ``/mcp`` instead, bound to 127.0.0.1 unless another address is
named, with the Origin checks and the optional bearer token (``TOOLRELAY_TOKEN``, read
from the environment only) of ``toolrelay files --http``. ``--transcript`` records both
legs for ``toolrelay verify``, ``explain`` and ``view``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import sys
from pathlib import Path

from ..events import EventStream
from ..proxy import ProxySettings, run_proxy
from ..proxy.asks import ELICIT_CHOICES, HostAsks
from ..proxy.host_calls import HostCalls
from ..proxy.rounds import DEFAULT_WAIT
from .common import add_server_options, catalog_from_args
from .files_cmd import TOKEN_VARIABLE, byte_size, hold_seconds, listen_address
from .host_options import add_pins_option, add_policy_option, policy_from_args

__all__ = ["configure", "run"]

log = logging.getLogger("toolrelay.proxy")

EXAMPLES = f"""examples:
  toolrelay proxy --config ~/.cursor/mcp.json --transcript host.jsonl
                                 stdio: put this command in the host's own config
  toolrelay proxy --config mcp.json --http 8765 --policy policy.json
                                 Streamable HTTP on http://127.0.0.1:8765/mcp
  toolrelay verify host.jsonl    check what the host sent and what came back, both legs
  toolrelay view host.jsonl      draw it

environment:
  {TOKEN_VARIABLE}   with --http, hosts must send "Authorization: Bearer <token>"
                    (the proxy's own; upstream servers' tokens never reach a host)

Tools and prompts are offered as SERVER__NAME, resource URIs as
toolrelay://SERVER/<the server's URI> (--keep-names: a single server's own names); two
tools or prompts that would get the same name refuse the start, naming both. A call
the pins or the policy refuse is answered as a tool error
(isError) naming the rule.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    add_server_options(parser, strict=False)
    parser.add_argument(
        "--http", metavar="[HOST:]PORT", type=listen_address,
        help="serve Streamable HTTP on http://HOST:PORT/mcp instead of stdio "
             "(HOST 127.0.0.1 unless given; PORT 0 picks a free port)")
    parser.add_argument("--allow-origin", metavar="ORIGIN", action="append", default=[],
                        help="with --http, a browser Origin to accept besides loopback ones (repeatable)")
    parser.add_argument("--transcript", metavar="PATH",
                        help="record every message of both legs (host ↔ proxy ↔ servers) as JSONL")
    parser.add_argument("--name", default="toolrelay-proxy",
                        help="the server name hosts are told (default toolrelay-proxy)")
    parser.add_argument("--max-message-bytes", metavar="BYTES", type=byte_size, default=None,
                        help="largest message a host may send; larger ones are refused (default 4MiB)")
    parser.add_argument(
        "--elicit", choices=ELICIT_CHOICES, default="decline",
        help="how an upstream's elicitation is answered when the host did not declare elicitation "
             "(a host that did is asked): decline (default), or defaults (accept a form with its defaults)")
    parser.add_argument("--sse-hold", metavar="SECONDS", type=hold_seconds, default=None,
                        help="with --http, close a request's event stream after SECONDS without its answer; "
                             "the host resumes it (as toolrelay files --http --sse-hold)")
    parser.add_argument("--input-wait", metavar="SECONDS", type=input_wait_seconds, default=DEFAULT_WAIT,
                        help="how long a 2026-07-28 host's call answered input_required (a server asked "
                             "something) waits for the host's retry before it is cancelled upstream, "
                             "and a bridged task's input request for its host's answer "
                             f"(default {DEFAULT_WAIT:g})")
    parser.add_argument("--keep-names", action="store_true",
                        help="with a config of one server, offer its tools, prompts and resource URIs by "
                             "their own names (no SERVER__ prefix, no toolrelay:// URIs)")
    add_pins_option(parser)
    add_policy_option(parser)
    parser.epilog = EXAMPLES + "\n" + (parser.epilog or "")


def input_wait_seconds(text: str) -> float:
    """``--input-wait``: seconds, more than 0 (a host needs some time to answer and retry)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"must be a number of seconds more than 0, not {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    policy = policy_from_args(args)  # a bad file is refused before any server starts
    _stderr_logging()
    events = EventStream()
    asks = HostAsks(HostCalls(events), events, elicit=args.elicit)
    catalog = catalog_from_args(args, events, filters=(policy,) if policy else (), host=asks.host())
    settings = ProxySettings(asks=asks,
        name=args.name, http=args.http, allowed_origins=args.allow_origin,
        transcript=Path(args.transcript) if args.transcript else None,
        token=os.environ.get(TOKEN_VARIABLE) or None, hooks=(policy,) if policy else (), on_ready=_ready,
        keep_names=args.keep_names, sse_hold=args.sse_hold, input_wait=args.input_wait,
    )
    if args.max_message_bytes is not None:
        settings.max_message_bytes = args.max_message_bytes
    try:
        asyncio.run(run_proxy(catalog, settings))
    except KeyboardInterrupt:
        return 0  # Ctrl-C is how an HTTP proxy is stopped
    return 0


def _ready(url: str) -> None:
    token = os.environ.get(TOKEN_VARIABLE)
    log.info("serving Streamable HTTP on %s%s", url, " (bearer token required)" if token else "")


def _stderr_logging() -> None:
    """Log to stderr (on stdio, stdout belongs to the protocol)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("toolrelay proxy: %(message)s"))
    root = logging.getLogger("toolrelay")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
