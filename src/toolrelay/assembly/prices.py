"""A run's price table read and checked once, before anything starts (``--prices FILE``).

The table's shape and arithmetic are ``relay/stages/cost.py``'s; this reads the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ..errors import UsageError
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
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read prices {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"prices {path} is not UTF-8 text: {exc.reason}") from exc
    try:
        data = json_depth.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise UsageError(f"prices {path} is not valid JSON: {where}: {exc.msg}") from exc
    return parse_prices(data, source=str(path))
