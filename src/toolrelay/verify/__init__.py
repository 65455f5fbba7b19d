"""Proof of what ran: check a recorded run link by link, in the order a fault is traced.

    run = load_run("run.jsonl")        # a transcript, or a demo folder (one file per message)
    verdict = verify(run)              # Verdict: findings, the first broken link, unfinished
    verdict.ok, verdict.broken, verdict.unfinished

The links (``LINKS``) are the order for locating a fault: model response → parse result →
routing target → server checks → actual feedback → correlation ids → next model input.
``explain`` renders the same chain for a person.

Layering: verify/ reads records with transcript/ and re-runs relay/'s pure stages (parse,
arguments, declare, feedback) on them; beyond those it imports only protocol/ and the
bottom modules. Never client/, model/, server/, files/, the offline stand-in, runner, cli/
or view/: it judges a record and connects to nothing.
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
