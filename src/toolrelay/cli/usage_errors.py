"""What a usage error says: one short usage line, then the error, naming the flag that was
meant when a given one is a typo of it (``--modle`` → ``--model``).

The whole usage of ``run`` is 17 lines of options, which buried the one line that matters;
``--help`` still shows it all.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence

__all__ = ["short_usage", "unrecognized"]


def short_usage(parser: argparse.ArgumentParser) -> str:
    """``usage: toolrelay call [options] alias [arguments]``: the positionals as argparse
    writes them, every option folded into ``[options]`` (a usage set already, as
    ``help_layout`` sets a short one, is used as it is)."""
    if parser.usage is not None:
        return f"{parser.format_usage().strip()} (see {parser.prog} --help)\n"
    positionals = [action for action in parser._actions if not action.option_strings]
    formatter = parser._get_formatter()
    formatter.add_usage(None, positionals, [])
    before, prog, after = formatter.format_help().strip().partition(parser.prog)
    return f"{before}{prog} [options]{after} (see {parser.prog} --help)\n"


def unrecognized(extras: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """The error for arguments no option or positional took, with the nearest flag for
    each one that looks like a typo of a flag."""
    said = f"unrecognized arguments: {' '.join(extras)}"
    flags = [flag for action in parser._actions if not isinstance(action, argparse._HelpAction)
             for flag in action.option_strings if flag.startswith("--")]  # --help is never what was meant
    meant: list[tuple[str, str]] = []
    for word in extras:
        given = word.split("=", 1)[0]
        if given.startswith("-") and (near := difflib.get_close_matches(given, flags, n=1, cutoff=0.6)):
            meant.append((given, near[0]))
    if not meant:
        return said
    if len(meant) == 1:
        return f"{said} (did you mean {meant[0][1]}?)"
    return f"{said} (did you mean {', '.join(f'{flag} for {given}' for given, flag in meant)}?)"
