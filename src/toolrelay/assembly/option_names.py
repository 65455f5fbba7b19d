"""Keywords given for ``RunOptions`` (``toolrelay.run(**options)``, ``Conversation(**options)``)
checked by name, for callers no type checker looked at."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from ..errors import UsageError
from .options import RunOptions

__all__ = ["check_option_names"]


def check_option_names(options: Mapping[str, Any], *, caller: str = "toolrelay.run()") -> None:
    """A ``UsageError`` naming the closest option for a keyword ``RunOptions`` lacks."""
    names = [f.name for f in fields(RunOptions)]
    for name in options:
        if name not in names:
            import difflib  # only on this error path: start-up time matters

            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            takes = ", ".join(names)
            raise UsageError(f"{caller} has no option {name!r}: {hint}RunOptions takes {takes}")
