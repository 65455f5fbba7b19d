"""A batch in numbers: tasks by status, task time percentiles, tool calls and tokens.

Built from ``results.jsonl`` (every task the batch finished, in this run or an earlier
one), one result at a time; the task times are kept as an array of floats, the only
thing that grows with the number of tasks.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..relay.stages.cost import dollars
from .results import TaskResult

__all__ = ["Summary", "percentile"]


def percentile(sorted_values: array[float] | list[float], fraction: float) -> float:
    """The nearest-rank percentile of already sorted values (0.0 when there are none)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


@dataclass(slots=True)
class Summary:
    """Counts over the results of a batch."""

    statuses: Counter[str] = field(default_factory=Counter)
    durations: array[float] = field(default_factory=lambda: array("d"))
    calls: int = 0
    failed_calls: int = 0
    tokens: Counter[str] = field(default_factory=Counter)
    cost: float = 0.0
    """Dollars over the priced tasks (``--prices``)."""
    priced: int = 0
    """Tasks with a cost."""

    @classmethod
    def of(cls, results: Iterable[TaskResult]) -> Summary:
        summary = cls()
        for result in results:
            summary.add(result)
        return summary

    def add(self, result: TaskResult) -> None:
        self.statuses[result.status] += 1
        self.durations.append(result.duration)
        self.calls += result.calls
        self.failed_calls += result.failed_calls
        self.tokens.update(result.usage)
        if result.cost is not None:
            self.cost += result.cost
            self.priced += 1

    @property
    def tasks(self) -> int:
        return sum(self.statuses.values())

    @property
    def completed(self) -> int:
        return self.statuses.get("completed", 0)

    def lines(self) -> list[str]:
        """The summary as a person reads it."""
        ordered = sorted(self.statuses.items(), key=lambda item: (item[0] != "completed", -item[1], item[0]))
        by_status = ", ".join(f"{count} {status}" for status, count in ordered) or "none"
        times = array("d", sorted(self.durations))
        tokens = self.tokens
        return [
            f"tasks: {self.tasks} ({by_status})",
            f"task time: p50 {percentile(times, 0.5):.2f} s, p95 {percentile(times, 0.95):.2f} s",
            f"tool calls: {self.calls} ({self.failed_calls} failed)",
            f"tokens: {tokens.get('input_tokens', 0)} in, {tokens.get('output_tokens', 0)} out, "
            f"{tokens.get('total_tokens', 0)} total",
            *([f"cost: {dollars(self.cost)} over {self.priced} priced task(s) of {self.tasks}"]
              if self.priced else []),
        ]
