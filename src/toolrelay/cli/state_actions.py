"""The ``ACTION [SERVER [TOOL]]`` sub-verbs of the verbs over the state folder's per-server
files (``toolrelay pins``, ``toolrelay approvals``): one parser shape for both."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping

__all__ = ["Actions", "add_actions"]

Actions = Mapping[str, tuple[str, str]]
"""Action name → (its help, its examples)."""
Options = Callable[..., None]
"""Adds the verb's options to a parser; called again with ``suppressed=True`` for each action
(a default suppressed there, so an option given before the action stays)."""


def add_actions(parser: argparse.ArgumentParser, actions: Actions, *, stored: str, options: Options,
                server_help: str) -> None:
    """``parser``'s options, then one sub-parser per action taking ``SERVER`` (required by
    ``forget``, else optional: every one) and ``TOOL``; the epilogs end with ``stored``
    (where the files live)."""
    options(parser)
    parser.set_defaults(server=None, tool=None)
    choices = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    for name, (help_text, example) in actions.items():
        action: argparse.ArgumentParser = choices.add_parser(
            name, help=help_text, description=help_text, epilog=f"examples:\n{example}\n\n{stored}",
            formatter_class=argparse.RawDescriptionHelpFormatter)
        action.set_defaults(verb_parser=action)
        every = "" if name == "forget" else " (default: every one)"
        action.add_argument("server", nargs=None if name == "forget" else "?", help=f"{server_help}{every}")
        action.add_argument("tool", nargs="?", help="one tool of that server (its MCP name)")
        options(action, suppressed=True)
    parser.epilog = "examples:\n" + "\n".join(example for _, example in actions.values()) + "\n\n" + stored
