"""Proof of what ran: check a recorded run link by link, in the seed's order.

    run = load_run("run.jsonl")        # a transcript, or a demo folder of the attachments
    verdict = verify(run)              # Verdict: findings, the first broken link, unfinished
    verdict.ok, verdict.broken, verdict.unfinished

The links (``LINKS``) are the seed's order for locating a fault: model response → parse
result → routing target → server checks → actual feedback → correlation ids → next model
input. ``explain`` renders the same chain for a person.
"""

from __future__ import annotations

from .checks import verify
from .load import load_run
from .record import CallTrace, ModelRound, RunRecord
from .verdict import LINK_TITLES, LINKS, NEXT_STEP, Finding, Verdict

__all__ = [
    "LINKS",
    "LINK_TITLES",
    "NEXT_STEP",
    "CallTrace",
    "Finding",
    "ModelRound",
    "RunRecord",
    "Verdict",
    "load_run",
    "verify",
]
