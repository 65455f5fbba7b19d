"""A run's price table read and checked once, before anything starts (``--prices FILE``).

The table's shape and arithmetic are ``relay/stages/cost.py``'s; this reads the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..protocol import json_depth
from ..relay.stages.cost import Price, parse_prices
from .options import PriceSource

__all__ = ["load_prices"]


def load_prices(source: PriceSource) -> dict[str, Price] | None:
    """The checked table ``source`` gives (None without one); a ``UsageError`` names the file
    and the key that is wrong."""
    if source is None:
        return None
    if isinstance(source, Mapping):
        return parse_prices(source, source="(the prices option)")
    path = Path(source)
    data = json_depth.load_file(path, "prices")
    return parse_prices(data, source=str(path))
