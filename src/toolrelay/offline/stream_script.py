"""How a script entry streams: the rate, pauses, faults and hold of a streamed answer.

These keys of an entry matter only when the request asks for ``stream: true``:

- ``"tokens_per_second": 40``: text, reasoning summaries and arguments arrive one token
  (about four characters) per delta, at that rate; without it each text is one delta,
  sent at once;
- ``"pause": 1.5``: seconds between one output item's ``output_item.done`` and the next
  item;
- ``"stream_fault": {...}``, one of: ``{"error_after": N}`` (an ``error`` event after N
  events, and the stream ends), ``{"cut_after": N}`` (the connection closes after N
  events, mid-answer), ``{"failed_after_call": true}`` (``response.failed`` right after
  the first function call's item closed), ``{"no_completed": true}`` (every event but the
  terminal one, then the answer ends);
- ``"hold_completed_until_file": PATH`` (and ``"hold_timeout"``, seconds, default 30):
  the terminal event waits until PATH exists; if it does not appear in time an ``error``
  event (code ``hold_timeout``) ends the stream instead. A test proves a call started
  before the response completed by having its tool create PATH.

The chat route reads the same keys in chat's terms (``chat_stream_plan``: a frame is an
event, the finish chunk is the terminal one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..errors import UsageError

__all__ = ["STREAM_KEYS", "StreamFault", "StreamSettings", "parse_stream_settings"]

STREAM_KEYS: Final = frozenset(
    {"tokens_per_second", "pause", "stream_fault", "hold_completed_until_file", "hold_timeout"}
)
FAULT_KEYS: Final = ("error_after", "cut_after", "failed_after_call", "no_completed")
DEFAULT_HOLD_TIMEOUT: Final = 30.0


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamFault:
    """What goes wrong in a streamed answer (one field set)."""

    error_after: int | None = None
    cut_after: int | None = None
    failed_after_call: bool = False
    no_completed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamSettings:
    """How one answer streams (the defaults: every event at once, no fault)."""

    tokens_per_second: float | None = None
    pause: float = 0.0
    fault: StreamFault | None = None
    hold_file: str | None = None
    hold_timeout: float = DEFAULT_HOLD_TIMEOUT


def parse_stream_settings(entry: Mapping[str, Any], where: str) -> StreamSettings:
    """The stream keys of a script entry, checked (a ``UsageError`` names the place)."""
    rate = _number(entry, "tokens_per_second", where, positive=True)
    hold = entry.get("hold_completed_until_file")
    if hold is not None and (not isinstance(hold, str) or not hold):
        raise UsageError(f"{where}: hold_completed_until_file must be a file path (a non-empty string)")
    if "hold_timeout" in entry and hold is None:
        raise UsageError(f'{where}: "hold_timeout" goes with "hold_completed_until_file" only')
    timeout = _number(entry, "hold_timeout", where, positive=True)
    return StreamSettings(
        tokens_per_second=rate,
        pause=_number(entry, "pause", where) or 0.0,
        fault=_parse_fault(entry.get("stream_fault"), f"{where}.stream_fault"),
        hold_file=hold,
        hold_timeout=DEFAULT_HOLD_TIMEOUT if timeout is None else timeout,
    )


def _parse_fault(value: Any, where: str) -> StreamFault | None:
    if value is None:
        return None
    expected = ", ".join(FAULT_KEYS)
    if not isinstance(value, Mapping) or len(value) != 1 or next(iter(value)) not in FAULT_KEYS:
        raise UsageError(f"{where}: expected an object with one of: {expected}")
    key, setting = next(iter(value.items()))
    if key in ("error_after", "cut_after"):
        if isinstance(setting, bool) or not isinstance(setting, int) or setting < 0:
            raise UsageError(f"{where}: {key} must be an integer >= 0 (a number of events)")
        return StreamFault(error_after=setting) if key == "error_after" else StreamFault(cut_after=setting)
    if setting is not True:
        raise UsageError(f"{where}: {key} must be true")
    if key == "failed_after_call":
        return StreamFault(failed_after_call=True)
    return StreamFault(no_completed=True)


def _number(entry: Mapping[str, Any], key: str, where: str, *, positive: bool = False) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    wrong = isinstance(value, bool) or not isinstance(value, int | float)
    if wrong or value < 0 or (positive and value == 0) or value != value:
        raise UsageError(f"{where}: {key} must be a number {'> 0' if positive else '>= 0'}")
    return float(value)
