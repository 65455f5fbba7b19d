"""argparse types the commands share: each with its own message (argparse's would name the
function). Their own module so that option blocks anywhere in cli/ use them without
importing ``common`` (which imports those blocks)."""

from __future__ import annotations

import argparse
import math

__all__ = ["a_number", "a_whole_number", "positive_count", "positive_seconds"]


def positive_count(text: str) -> int:
    """An argparse type: a whole number of at least 1 (its own message: argparse's would
    name this function)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value


def positive_seconds(text: str) -> float:
    """An argparse type: seconds above 0 (0, negatives and nan would end every wait at once)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text!r}")
    return value


def a_number(text: str) -> float:
    """An argparse type: any number (the range is the option's own check, with its name)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, not {text!r}") from None


def a_whole_number(text: str) -> int:
    """An argparse type: any whole number (the range is the option's own check)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
