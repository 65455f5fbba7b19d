"""``toolrelay auth``: OAuth sign-in to remote MCP servers, and the sign-ins stored.

    toolrelay auth login SERVER --config F [--no-browser | --auth headless]
    toolrelay auth status [--config F]
    toolrelay auth logout SERVER --config F      (or a server's URL instead of a name)

Sign-ins are kept in ``$XDG_STATE_HOME/toolrelay/oauth`` (default
``~/.local/state/toolrelay/oauth``), one 0600 file per server and authorization server;
``logout`` deletes the server's files. Tokens are never printed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from ..assembly.catalogs import catalog_of
from ..client.auth.grant import Grant
from ..client.auth.metadata import canonical_resource
from ..client.auth.store import GrantStore
from ..client.config import ServerConfig
from ..errors import UsageError
from ..events import EventStream
from ..relay.catalog import servers_from
from .progress import ProgressPrinter
from .sign_in import apply_auth_option

__all__ = ["configure", "run"]

# each action's examples end its --help; all of them, the help of ``auth``
_ACTION_EXAMPLES = {
    "login": """\
  toolrelay auth login notes --config mcp.json                   sign in, in the browser
  toolrelay auth login notes --config mcp.json --no-browser      print the URL to open anywhere
  toolrelay auth login notes --config mcp.json --auth headless   no person (test servers, CI)
  toolrelay auth login https://notes.example/mcp                 a server by its URL, no config""",
    "status": """\
  toolrelay auth status                                          every stored sign-in (never a token)
  toolrelay auth status --config mcp.json                        the same, named as in the config""",
    "logout": """\
  toolrelay auth logout notes --config mcp.json                  delete the server's stored sign-in
  toolrelay auth logout https://notes.example/mcp                the same, by its URL""",
}
STORED = """sign-ins are stored in $XDG_STATE_HOME/toolrelay/oauth (default ~/.local/state/toolrelay/oauth),
files readable by you alone."""
EXAMPLES = "examples:\n" + "\n".join(_ACTION_EXAMPLES.values()) + "\n\n" + STORED


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="MCP servers config file")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    actions.required = True
    login = _action(actions, "login", "sign in to a server now (again, if signed in before)")
    login.add_argument("server", help="the server's name in the config, or its URL")
    _config_option(login)
    login.add_argument("--no-browser", action="store_true", help="print the URL instead of opening a browser")
    login.add_argument("--auth", choices=("auto", "headless"), default="auto",
                       help="headless: sign in without a person (test authorization servers, CI)")
    _config_option(_action(actions, "status", "list the stored sign-ins"))
    logout = _action(actions, "logout", "forget a server's stored sign-in")
    logout.add_argument("server", help="the server's name in the config, or its URL")
    _config_option(logout)
    parser.epilog = EXAMPLES + "\n\n" + (parser.epilog or "")


def _action(actions: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    """One action's parser: its examples in its --help; its own flags are the ones a typo
    is matched against (``verb_parser``)."""
    action: argparse.ArgumentParser = actions.add_parser(
        name, help=help_text, description=help_text,
        epilog=f"examples:\n{_ACTION_EXAMPLES[name]}\n\n{STORED}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    action.set_defaults(verb_parser=action)
    return action


def _config_option(parser: argparse.ArgumentParser) -> None:
    """``--config`` after the action too (suppressed default: one given before it stays)."""
    parser.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS, help="MCP servers config file")


def run(args: argparse.Namespace) -> int:
    if args.action == "login":
        return asyncio.run(_login(args))
    if args.action == "logout":
        return _logout(args)
    return _status(args)


def _server(args: argparse.Namespace) -> ServerConfig:
    """The server the arguments name: a config entry, or a URL."""
    name: str = args.server
    if name.startswith(("http://", "https://")) and not args.config:
        return ServerConfig(name=name, transport="http", url=name)
    if not args.config:
        raise UsageError(f"name the config that holds server {name!r} with --config FILE (or give its URL)")
    servers = servers_from(Path(args.config))
    found = next((s for s in servers if s.name == name or s.url == name), None)
    if found is None:
        known = ", ".join(s.name for s in servers) or "none"
        raise UsageError(f"no server {name!r} in {args.config} (servers: {known})")
    if found.url is None:
        raise UsageError(f"server {found.name} is a local process, not a remote (HTTP) server: it takes "
                         "its credentials from its environment, with no sign-in")
    return found


async def _login(args: argparse.Namespace) -> int:
    server = _server(args)
    assert server.url is not None
    policy = apply_auth_option(args, fresh=True, browser=not args.no_browser)
    events = EventStream()
    events.subscribe(ProgressPrinter(verbose=False))
    async with catalog_of([server], events=events) as catalog:
        failure = catalog.unavailable.get(server.name)
        if failure is not None:
            raise failure
    store = GrantStore(policy.store)
    grant = store.load(server.url)
    if grant is None:
        sys.stdout.write(f"server {server.name} did not ask for a sign-in: nothing stored\n")
        return 0
    sys.stdout.write(f"signed in to {server.name} at {grant.issuer}{_scopes(grant)}\n"
                     f"stored in {store.path(grant.server, grant.issuer)}\n")
    return 0


def _status(args: argparse.Namespace) -> int:
    names = {}
    if args.config:
        names = {canonical_resource(s.url): s.name for s in servers_from(Path(args.config)) if s.url}
    store = GrantStore()
    stored = store.all()
    if not stored:
        sys.stdout.write(f"no stored sign-ins (in {store.root})\n")
        return 0
    now = time.time()
    for path, grant in stored:
        if grant is None:
            sys.stdout.write(f"{path}: unreadable (delete it, or sign in again)\n")
            continue
        name = names.get(grant.server)
        who = f"{name} ({grant.server})" if name else grant.server
        sys.stdout.write(f"{who}: signed in at {grant.issuer}{_scopes(grant)}; {_expiry(grant, now)}\n")
    sys.stdout.write(f"\nstored in {store.root}\n")
    return 0


def _logout(args: argparse.Namespace) -> int:
    server = _server(args)
    assert server.url is not None
    removed = GrantStore().forget(server.url)
    if not removed:
        sys.stdout.write(f"no sign-in stored for {server.name}\n")
    else:
        sys.stdout.write(f"signed out of {server.name}: its stored sign-in is deleted\n")
    return 0


def _scopes(grant: Grant) -> str:
    return f" (scopes: {' '.join(grant.scopes)})" if grant.scopes else ""


def _expiry(grant: Grant, now: float) -> str:
    refresh = ", refreshable" if grant.tokens.refresh_token else ""
    expires = grant.tokens.expires_at
    if expires is None:
        return f"the token does not say when it expires{refresh}"
    if expires <= now:
        return f"the token has expired{refresh}"
    return f"the token expires in {int(expires - now) // 60} min{refresh}"
