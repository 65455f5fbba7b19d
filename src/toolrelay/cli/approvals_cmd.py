"""``toolrelay approvals [list|forget] [SERVER [TOOL]]``: the consent answers saved for later
runs (the terminal prompt's ``s``: always for this tool on this server).

They live in the state folder, one file per server identity (its config name and its command
line or URL; ``relay/approvals.py``). ``list`` (the default) reads them; ``forget SERVER
[TOOL]`` drops them, so the tool is asked about again. Without ``--config`` every saved file
counts; with it, only those of the config's servers as they are configured now (a server
started another way has approvals of its own). No server is started. ``--json`` for both.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..relay.approvals import ApprovalStore, SavedApprovals
from ..relay.catalog import servers_from
from .common import print_json, print_table
from .state_actions import add_actions

__all__ = ["configure", "run"]

_ACTIONS: dict[str, tuple[str, str]] = {
    "list": ("the saved approvals (read from their files; no server is started)", """\
  toolrelay approvals                                       every saved approval
  toolrelay approvals list notes --config mcp.json --json"""),
    "forget": ("drop a server's saved approvals (or one tool's): it is asked about again", """\
  toolrelay approvals forget notes write_note"""),
}
STORED = """saved approvals live in $XDG_STATE_HOME/toolrelay/approvals/ (default
~/.local/state/toolrelay/approvals/), one file per server (its config name and its command line
or URL), readable by you alone."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_actions(parser, _ACTIONS, stored=STORED, options=_options, server_help="a server's name")


def _options(parser: argparse.ArgumentParser, *, suppressed: bool = False) -> None:
    """``--config`` and ``--json`` before the action and after it."""
    default: dict[str, Any] = {"default": argparse.SUPPRESS} if suppressed else {}
    parser.add_argument("--config", metavar="FILE", **default,
                        help="only the approvals of this config's servers, as configured now")
    parser.add_argument("--json", action="store_true", **default, help="print the answer as JSON")


def run(args: argparse.Namespace) -> int:
    args.action = args.action or "list"  # `toolrelay approvals` alone lists
    store = ApprovalStore()
    chosen = _chosen(args, store)
    if args.action == "list":
        return _list(args, chosen, store)
    assert args.action == "forget"
    return _forget(args, chosen, store)


def _chosen(args: argparse.Namespace, store: ApprovalStore) -> list[SavedApprovals]:
    """The files of SERVER (of the config's servers with ``--config``), holding TOOL if given."""
    saved = store.saved()
    if args.config is not None:
        servers = servers_from(Path(args.config))
        if args.server is not None and args.server not in {server.name for server in servers}:
            known = ", ".join(server.name for server in servers)
            raise UsageError(f"no server {args.server!r} in {args.config} (servers: {known})")
        paths = {store.path(server) for server in servers}
        saved = [entry for entry in saved if entry.path in paths]
    if args.server is None:
        return saved
    found = [entry for entry in saved if entry.server == args.server]
    if not found:
        known = ", ".join(sorted({entry.server for entry in saved})) or "none"
        raise UsageError(f"no saved approvals for server {args.server!r} (saved for: {known}; "
                         f"in {store.root})")
    if args.tool is not None and not any(args.tool in entry.tools for entry in found):
        tools = ", ".join(sorted({tool for entry in found for tool in entry.tools}))
        raise UsageError(f"server {args.server} has no saved approval of tool {args.tool!r} (saved: {tools})")
    return found


def _rows(args: argparse.Namespace, chosen: Sequence[SavedApprovals]) -> list[dict[str, Any]]:
    return [{"server": entry.server, "tool": tool, "digest": str(saved.get("digest")),
             "savedAt": str(saved.get("savedAt", "")), "target": entry.target, "file": str(entry.path)}
            for entry in chosen for tool, saved in entry.tools.items() if args.tool in (None, tool)]


def _list(args: argparse.Namespace, chosen: Sequence[SavedApprovals], store: ApprovalStore) -> int:
    rows = _rows(args, chosen)
    if args.json:
        print_json(rows)
    elif not rows:
        sys.stdout.write(f"no saved approvals (in {store.root})\n")
    else:
        print_table(("SERVER", "TOOL", "SAVED", "TARGET"),
                    [(r["server"], r["tool"], r["savedAt"], r["target"]) for r in rows])
    return 0


def _forget(args: argparse.Namespace, chosen: Sequence[SavedApprovals], store: ApprovalStore) -> int:
    rows = _rows(args, chosen)
    for entry in chosen:
        store.forget(entry, [row["tool"] for row in rows if row["file"] == str(entry.path)])
    forgotten = sorted({row["tool"] for row in rows})
    if args.json:
        print_json({"server": args.server, "forgotten": forgotten})
    else:
        sys.stdout.write(f"forgot the saved approvals of {args.server}: {', '.join(forgotten)} (asked "
                         "about again)\n")
    return 0
