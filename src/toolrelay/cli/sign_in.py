"""How the CLI answers a server that asks for an OAuth sign-in: the ``--auth`` option and
the terminal's side of a sign-in (the offer, the browser or the printed URL).

    --auth auto       a person at a terminal is offered the sign-in; without a terminal the
                      server is reported unavailable, naming ``toolrelay auth login`` (default)
    --auth headless   no person: toolrelay follows the authorization URL itself (test
                      authorization servers, CI)
    --auth never      stored sign-ins only
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import webbrowser
from pathlib import Path

from ..client.auth.policy import Mode, SignInPolicy, use_policy

__all__ = ["AUTH_CHOICES", "TerminalPresenter", "add_auth_option", "apply_auth_option", "login_hint"]

AUTH_CHOICES = ("auto", "headless", "never")


def add_auth_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--auth", choices=AUTH_CHOICES, default="auto",
        help="OAuth sign-in: auto (default: offer it on a terminal), headless (no person), or never "
             "(stored sign-ins only)",
    )


def login_hint(config: str | None) -> str:
    where = f" --config {config}" if config else ""
    return f"sign in first with `toolrelay auth login {{server}}{where}`"


class TerminalPresenter:
    """Asks on the terminal, then opens the browser (or only prints the URL)."""

    def __init__(self, *, ask: bool, browser: bool) -> None:
        self.ask = ask
        self.browser = browser

    async def offer(self, server: str) -> bool:
        if not self.ask:
            return True
        sys.stderr.write(f"server {server} needs an OAuth sign-in. Sign in now in a browser? [Y/n] ")
        sys.stderr.flush()
        answer = await asyncio.to_thread(sys.stdin.readline)
        return answer.strip().lower() in ("", "y", "yes")

    async def show(self, server: str, url: str) -> None:
        sys.stderr.write(f"To sign in to {server}, open this URL in a browser:\n\n  {url}\n\n"
                         "Waiting for the sign-in to come back...\n")
        sys.stderr.flush()
        if self.browser:
            await asyncio.to_thread(webbrowser.open, url)


def apply_auth_option(args: argparse.Namespace, *, fresh: bool = False, browser: bool = True) -> SignInPolicy:
    """The sign-in policy the options say, made the one of this process's connections."""
    choice = getattr(args, "auth", "auto")
    config = getattr(args, "config", None)
    mode: Mode
    if choice == "headless":
        mode = "headless"
    elif choice == "never":
        mode = "never"
    else:
        at_terminal = sys.stdin.isatty() and sys.stderr.isatty()
        mode = "person" if at_terminal or fresh else "never"  # login: a person is there
    presenter = TerminalPresenter(ask=not fresh, browser=browser) if mode == "person" else None
    policy = SignInPolicy(mode=mode, presenter=presenter, fresh=fresh,
                          login_hint=login_hint(str(Path(config)) if config else None))
    use_policy(policy)
    return policy
