"""model_response: the token usage ``run_end`` claims is the sum of the recorded responses'.

``RunResult.usage`` adds up each turn's answered response (``relay.stages.usage``); the record
holds those responses, so the sum is re-derived from them (each by its dialect's reader)
and compared. A transcript
written before run_end recorded usage has nothing to compare; one written before cache
writes were counted is compared without them.
"""

from __future__ import annotations

from typing import Final

from ..relay.stages.dialects import known_reader
from ..relay.stages.usage import add_counts, usage_text
from .evidence import seqs_of
from .facts import RunFacts
from .record import RunRecord
from .verdict import Finding

__all__ = ["check_usage"]

LATER_KEY: Final = "cache_write_tokens"
"""Counted since transcripts record deltas: an older run_end's usage never has it."""


def check_usage(run: RunRecord, facts: RunFacts) -> list[Finding]:
    end = run.run_end
    if end is None or "usage" not in end:
        return []
    summed: dict[str, int] = {}
    for current in run.rounds:
        reader = known_reader(current.dialect)
        if reader is not None:  # an unknown dialect: model_response says so
            summed = add_counts(summed, reader.usage(current.answer))
    claimed = end["usage"]
    if isinstance(claimed, dict) and LATER_KEY not in claimed:
        summed.pop(LATER_KEY, None)  # written before cache writes were counted: not claimed, not compared
    said = usage_text(summed) or "no counts"
    if claimed == summed:
        message = f"run_end's token usage is what the {len(run.rounds)} turn(s)' responses add up to: {said}"
    else:
        message = (f"run_end claims the tokens {usage_text(claimed) or repr(claimed)}, but the "
                   f"{len(run.rounds)} turn(s)' recorded responses add up to {said}")
    return [Finding(link="model_response", ok=claimed == summed, check="usage", message=message,
                    seqs=seqs_of(end))]
