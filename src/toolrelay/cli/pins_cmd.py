"""``toolrelay pins [list|diff|approve|forget] [SERVER [TOOL]]``: the pinned tool definitions.

``list`` prints what is pinned for the config's servers (read from the pin files; no server
is started); ``diff`` starts the servers and shows, tool by tool, what changed since it was
pinned (the description as a line diff, schemas and annotations by JSON path, a
``readOnlyHint`` or ``destructiveHint`` flip called out), which tools are new and which are
gone; ``approve`` pins what the servers list now (a changed tool is offered again, a new
one under ``--pins strict``); ``forget`` drops pins. ``--json`` everywhere.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..assembly.catalogs import catalog_of
from ..client.config import ServerConfig
from ..errors import UsageError
from ..events import EventStream
from ..relay.catalog import servers_from
from ..relay.pin_diff import ToolState, compare
from ..relay.pins import PinStore, pin_mode, pin_of, utc_now
from .common import print_json, print_table
from .progress import ProgressPrinter
from .sign_in import add_auth_option, apply_auth_option
from .state_actions import add_actions

__all__ = ["configure", "run"]

_ACTIONS: dict[str, tuple[str, str]] = {
    "list": ("what is pinned (read from the pin files; no server is started)", """\
  toolrelay pins --config mcp.json                          every pin of the config's servers
  toolrelay pins list notes --config mcp.json --json"""),
    "diff": ("what changed since each tool was pinned, field by field (starts the servers)", """\
  toolrelay pins diff --config mcp.json                     every changed, new or gone tool
  toolrelay pins diff notes write_note --config mcp.json --json"""),
    "approve": ("pin what the servers list now: a changed tool (or a new one under --pins strict) is "
                "offered again", """\
  toolrelay pins approve notes write_note --config mcp.json  re-pin one tool
  toolrelay pins approve --config mcp.json                  every changed or new tool of every server"""),
    "forget": ("drop a server's pins (or one tool's): they are pinned anew on next sight", """\
  toolrelay pins forget notes --config mcp.json"""),
}
STORED = """pins live in $XDG_STATE_HOME/toolrelay/pins/ (default ~/.local/state/toolrelay/pins/), one
file per server (its config name and its command line or URL), readable by you alone."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_actions(parser, _ACTIONS, stored=STORED, options=_options, server_help="a server of the config")


def _options(parser: argparse.ArgumentParser, *, suppressed: bool = False) -> None:
    """``--config``, ``--json`` and ``--auth`` before the action and after it (suppressed
    defaults there: one given before it stays)."""
    default: dict[str, Any] = {"default": argparse.SUPPRESS} if suppressed else {}
    parser.add_argument("--config", metavar="FILE", **default,
                        help="MCP servers config file (default: the built-in file server)")
    parser.add_argument("--json", action="store_true", **default, help="print the answer as JSON")
    if not suppressed:
        add_auth_option(parser)


def run(args: argparse.Namespace) -> int:
    args.action = args.action or "list"  # `toolrelay pins` alone lists
    servers = _chosen(args)
    store = PinStore()
    if args.action == "list":
        return _list(args, servers, store)
    if args.action == "forget":
        return _forget(args, servers[0], store)
    states = asyncio.run(_states(args, servers, store))
    if args.action == "diff":
        return _diff(args, states)
    assert args.action == "approve"
    return _approve(args, servers, states, store)


def _chosen(args: argparse.Namespace) -> list[ServerConfig]:
    servers = servers_from(Path(args.config) if args.config else None)
    if args.server is None:
        return servers
    found = [server for server in servers if server.name == args.server]
    if not found:
        known = ", ".join(server.name for server in servers)
        where = args.config or "the built-in config"
        raise UsageError(f"no server {args.server!r} in {where} (servers: {known})")
    return found


def _list(args: argparse.Namespace, servers: Sequence[ServerConfig], store: PinStore) -> int:
    rows = []
    for server in servers:
        for pin in store.load(server).values():
            if args.tool is None or pin.tool == args.tool:
                rows.append({"server": server.name, "tool": pin.tool, "digest": pin.digest,
                             "pinnedAt": pin.pinned_at, "mode": pin_mode(server),
                             "file": str(store.path(server))})
    if args.json:
        print_json(rows)
    elif not rows:
        sys.stdout.write(f"no pins for {_which(args)} (in {store.root})\n")
    else:
        print_table(("SERVER", "TOOL", "PINNED", "MODE", "DIGEST"),
                    [(r["server"], r["tool"], r["pinnedAt"], r["mode"], r["digest"][:19]) for r in rows])
    return 0


def _forget(args: argparse.Namespace, server: ServerConfig, store: PinStore) -> int:
    try:
        pins = store.load(server)
    except UsageError:
        if args.tool is not None:
            raise
        pins = {}  # an unreadable file is dropped whole: what the error says to do
        store.path(server).unlink()
        sys.stdout.write(f"forgot the pins of {server.name} (an unreadable file)\n")
        return 0
    dropped = [name for name in pins if args.tool in (None, name)]
    store.save(server, {name: pin for name, pin in pins.items() if name not in dropped})
    if args.json:
        print_json({"server": server.name, "forgotten": dropped})
    elif dropped:
        sys.stdout.write(f"forgot the pins of {server.name}: {', '.join(dropped)}\n")
    else:
        sys.stdout.write(f"no pins for {_which(args)}\n")
    return 0


async def _states(
    args: argparse.Namespace, servers: Sequence[ServerConfig], store: PinStore
) -> list[ToolState]:
    """Each chosen tool against its pin, from what the servers list now (nothing pinned meanwhile)."""
    apply_auth_option(args)
    events = EventStream()
    events.subscribe(ProgressPrinter(verbose=False))
    quiet = [replace(server, pins="off") for server in servers]  # listing them must not pin them
    async with catalog_of(quiet, events=events) as catalog:
        for name, failure in catalog.unavailable.items():
            sys.stderr.write(f"toolrelay pins: server {name} is not available: {failure}\n")
        listed = catalog.pool.tools
        states = [state for server in servers if server.name in listed
                  for state in compare(server.name, store.load(server), listed[server.name])]
    return [state for state in states if args.tool in (None, state.tool)]


def _diff(args: argparse.Namespace, states: Sequence[ToolState]) -> int:
    differing = [state for state in states if state.state != "pinned"]
    if args.json:
        print_json([state.to_record() for state in differing])
        return 0
    if not differing:
        sys.stdout.write(f"{len(states)} tool(s) of {_which(args)} as pinned: nothing changed\n")
    for state in differing:
        sys.stdout.write(_state_text(state))
    return 0


def _state_text(state: ToolState) -> str:
    head = f"server {state.server}: tool {state.tool}"
    if state.state == "new":
        return f"{head}: new, not pinned\n"
    assert state.pin is not None
    if state.state == "gone":
        return f"{head}: pinned on {state.pin.date}, no longer listed\n"
    lines = [f"{head}: changed since pinned on {state.pin.date} ({state.pin.digest[:19]}…)"]
    lines += [f"  !! {flip}" for flip in state.flips]
    for change in state.changes:
        lines.append(f"  {change.field}:")
        lines += [f"    {line}" for line in change.lines]
    return "\n".join(lines) + "\n"


def _approve(args: argparse.Namespace, servers: Sequence[ServerConfig], states: Sequence[ToolState],
             store: PinStore) -> int:
    now = utc_now()
    approved: list[dict[str, Any]] = []
    for server in servers:
        chosen = [s for s in states if s.server == server.name and s.state in ("new", "changed")]
        if not chosen:
            continue
        pins = store.load(server)
        for state in chosen:
            assert state.listed is not None
            pins[state.tool] = pin = pin_of(state.listed, now)
            approved.append({"server": server.name, "tool": state.tool, "was": state.state,
                             "digest": pin.digest})
        store.save(server, pins)
    if args.json:
        print_json(approved)
    elif not approved:
        sys.stdout.write(f"nothing to approve: {_which(args)} as pinned\n")
    for entry in [] if args.json else approved:
        where = f"{entry['server']}/{entry['tool']}"
        sys.stdout.write(f"approved {where} ({entry['was']}): pinned as {entry['digest']}\n")
    return 0


def _which(args: argparse.Namespace) -> str:
    if args.server is None:
        return "the configured servers"
    return f"{args.server}/{args.tool}" if args.tool else f"server {args.server}"
