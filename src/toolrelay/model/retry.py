"""When to try a model request again, and how long to wait first.

Rate limits (429) and server trouble (500, 502, 503, 504), connection failures and
timeouts are retried with exponential backoff and jitter; a ``Retry-After`` (seconds or
an HTTP date) or ``retry-after-ms`` header from the endpoint is honoured instead, up to
a cap. Everything else ends the request at once: a 4xx will not change by asking again.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Final

__all__ = [
    "MAX_BACKOFF",
    "MAX_RETRY_WAIT",
    "RETRY_STATUSES",
    "backoff_delay",
    "retry_after_seconds",
    "retry_wait",
]

RETRY_STATUSES: Final = frozenset({429, 500, 502, 503, 504})
MAX_BACKOFF: Final = 8.0
"""Longest wait toolrelay chooses itself."""
MAX_RETRY_WAIT: Final = 60.0
"""Longest wait an endpoint's Retry-After can impose."""


def backoff_delay(attempt: int, backoff: float) -> float:
    """``backoff · 2^(attempt-1)``, capped, minus up to a quarter of jitter."""
    delay: float = min(backoff * 2.0 ** (attempt - 1), MAX_BACKOFF)
    return delay * (1 - 0.25 * random.random())


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait the endpoint asks for: ``retry-after-ms``, else ``Retry-After`` (seconds or
    HTTP date); None when absent or unreadable. Header names are matched case-insensitively."""
    lowered = {name.lower(): value for name, value in headers.items()}
    milliseconds = _number(lowered.get("retry-after-ms"))
    if milliseconds is not None:
        return max(milliseconds / 1000, 0.0)
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return max(seconds, 0.0)
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(moment.timestamp() - (time.time() if now is None else now), 0.0)


def retry_wait(headers: Mapping[str, str], attempt: int, backoff: float) -> float:
    """How long to wait before the next attempt after an answer with ``headers``."""
    asked = retry_after_seconds(headers)
    if asked is not None:
        return min(asked, MAX_RETRY_WAIT)
    return backoff_delay(attempt, backoff)


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if number == number and number != float("inf") else None
