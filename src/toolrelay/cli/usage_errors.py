"""What a usage error says: one short usage line, then the error, naming the flag that was
meant when a given one is a typo of it (``--modle`` → ``--model``).

The whole usage of ``run`` is 17 lines of options, which buried the one line that matters;
``--help`` still shows it all.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence

__all__ = ["compact_usage", "short_usage", "unrecognized"]


def compact_usage(parser: argparse.ArgumentParser) -> str:
    """``%(prog)s [-h] [options] ALIAS [ARGUMENTS]``: the positionals, every option folded
    into ``[options]`` (argparse's own usage of ``run`` is 17 lines of options)."""
    positionals = [(str(action.metavar or action.dest).upper(), action.nargs == "?")
                   for action in parser._get_positional_actions()]
    shown = " ".join(f"[{name}]" if optional else name for name, optional in positionals)
    return f"%(prog)s [-h] [options] {shown}".rstrip()


def short_usage(parser: argparse.ArgumentParser) -> str:
    """The usage line of an error: the parser's own when it has a short one set
    (``help_layout``), else the compact one; and where the whole usage is."""
    usage = (parser.usage or compact_usage(parser)) % {"prog": parser.prog}
    return f"usage: {usage} (see {parser.prog} --help)\n"


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
