"""What a run's tokens cost, by a price table the user gives (``--prices FILE``).

A price table is a JSON object: model name → its prices in dollars per million tokens,
``{"gpt-4.1": {"input": 2.0, "cached_input": 0.5, "output": 8.0}}``. ``input`` and
``output`` are required; ``cached_input`` (input read from the prompt cache) and
``cache_write`` (input written to it) are optional and, when absent, those tokens are
priced as ``input``. toolrelay ships no prices: a table is the user's statement, recorded
with the run (``run_end``'s ``price``) so that ``verify`` can redo the arithmetic.

The counts are the run's usage (``usage.py``): ``input_tokens`` includes the cached and the
cache-written tokens (they are its details), so uncached input is what is left; reasoning
tokens are part of ``output_tokens`` and priced as output.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ...errors import UsageError

__all__ = ["PRICE_KEYS", "Price", "cost_of", "cost_text", "dollars", "parse_prices"]

Price = dict[str, float]
"""One model's prices: ``input``, ``output`` and optionally ``cached_input``, ``cache_write``."""

PRICE_KEYS: Final = ("input", "cached_input", "cache_write", "output")
_REQUIRED: Final = ("input", "output")
_PER: Final = 1_000_000


def parse_prices(data: Any, *, source: str) -> dict[str, Price]:
    """A checked price table from parsed JSON; a ``UsageError`` names the file and the key."""
    if not isinstance(data, Mapping) or not data:
        raise UsageError(f'prices {source}: expected a JSON object of model → prices, such as '
                         '{"gpt-4.1": {"input": 2.0, "output": 8.0}} (dollars per million tokens)')
    return {str(model): _price(row, f"prices {source}: {model}") for model, row in data.items()}


def _price(row: Any, where: str) -> Price:
    if not isinstance(row, Mapping):
        raise UsageError(f"{where}: expected an object of prices (input, output, cached_input, cache_write)")
    unknown = sorted(set(row) - set(PRICE_KEYS))
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (expected: {', '.join(PRICE_KEYS)})")
    missing = [key for key in _REQUIRED if key not in row]
    if missing:
        raise UsageError(f"{where}: no {missing[0]!r} price (input and output are required)")
    price: Price = {}
    for key in PRICE_KEYS:
        if key not in row:
            continue
        value = row[key]
        if not isinstance(value, int | float) or isinstance(value, bool) or not value >= 0 \
                or value == float("inf"):
            raise UsageError(f"{where}.{key}: expected a number of dollars per million tokens (0 or more), "
                             f"got {value!r}")
        price[key] = float(value)
    return price


def cost_of(usage: Mapping[str, int], price: Price) -> dict[str, float]:
    """The dollars ``usage`` costs at ``price``: each part and ``total``; {} without counts."""
    if "input_tokens" not in usage and "output_tokens" not in usage:
        return {}
    cached = usage.get("cached_input_tokens", 0)
    written = usage.get("cache_write_tokens", 0)
    fresh = max(0, usage.get("input_tokens", 0) - cached - written)
    parts = {
        "input": fresh * price["input"],
        "cached_input": cached * price.get("cached_input", price["input"]),
        "cache_write": written * price.get("cache_write", price["input"]),
        "output": usage.get("output_tokens", 0) * price["output"],
    }
    cost = {key: value / _PER for key, value in parts.items() if key == "input" or key == "output" or value}
    cost["total"] = sum(parts.values()) / _PER
    return cost


def cost_text(cost: Any) -> str:
    """``$0.0123 (input $0.0100, cached input $0.000300, output $0.0020)``; "" with no cost."""
    if not isinstance(cost, Mapping) or not isinstance(cost.get("total"), int | float):
        return ""
    parts = ", ".join(f"{key.replace('_', ' ')} {dollars(value)}" for key, value in cost.items()
                      if key != "total" and isinstance(value, int | float))
    return f"{dollars(cost['total'])} ({parts})"


def dollars(value: float) -> str:
    """``$1.2345``; a small amount with six decimals (``$0.000888``), so that it is not $0.0000."""
    return f"${value:.4f}" if value >= 0.01 or value == 0 else f"${value:.6f}"
