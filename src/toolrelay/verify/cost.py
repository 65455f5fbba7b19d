"""model_response: the cost ``run_end`` records is its usage at its recorded price.

A run priced by a table (``--prices``) records the model's row (``price``) and the dollars
(``cost``) in ``run_end``; the usage beside them is held to the responses by ``usage.py``,
and here the arithmetic is done again (``relay.stages.cost.cost_of``) and compared. A
price that is no price table row (a negative number, an unknown key) is named.
"""

from __future__ import annotations

from typing import Any

from ..errors import UsageError
from ..relay.stages.cost import cost_of, cost_text, parse_prices
from .evidence import seqs_of
from .facts import RunFacts
from .record import RunRecord
from .verdict import Finding

__all__ = ["check_cost"]


def check_cost(run: RunRecord, facts: RunFacts) -> list[Finding]:
    end = run.run_end
    if end is None or "cost" not in end:
        return []
    model = str((run.run_start or {}).get("model"))
    try:
        price = parse_prices({model: end.get("price")}, source="recorded in run_end")[model]
    except UsageError as exc:
        return [_finding(False, f"run_end's cost comes with a price that is none: {exc}", end)]
    recorded = end.get("usage")
    usage = {k: v for k, v in recorded.items() if isinstance(v, int)} if isinstance(recorded, dict) else {}
    expected, claimed = cost_of(usage, price), end["cost"]
    rates = ", ".join(f"{key} ${value:g}/M" for key, value in price.items())
    if claimed == expected:
        return [_finding(True, f"run_end's cost {cost_text(claimed)} is its token usage at the recorded "
                               f"prices of {model} ({rates})", end)]
    return [_finding(False, f"run_end claims the cost {cost_text(claimed) or repr(claimed)}, but its token "
                            f"usage at the recorded prices of {model} ({rates}) costs {cost_text(expected)}",
                     end)]


def _finding(ok: bool, message: str, end: dict[str, Any]) -> Finding:
    return Finding(link="model_response", ok=ok, check="cost", message=message, seqs=seqs_of(end))
