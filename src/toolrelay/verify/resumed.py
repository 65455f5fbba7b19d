"""A run resumed in its own transcript: each ``run_resumed`` after the run began, at a
turn it had reached (the next one at most), the records before it left as they were."""

from __future__ import annotations

from ..events import ModelRequestEvent
from .facts import RunFacts
from .record import RunRecord
from .verdict import Finding

__all__ = ["check_resumes"]


def check_resumes(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """correlation: where the run went on after a stop, and that it could go on there."""
    findings: list[Finding] = []
    for event in run.resumes:
        seq, turn = event["seq"], event.get("turn")
        asked = max((e["turn"] for e in run.of_kind(ModelRequestEvent.kind)
                     if e["seq"] < seq and isinstance(e.get("turn"), int)), default=0)
        problem = None
        if run.run_start is None or run.run_start["seq"] > seq:
            problem = "comes before the run began (no run_start before it)"
        elif not isinstance(turn, int) or not 1 <= turn <= asked + 1:
            problem = f"goes on at turn {turn!r}, but the run had asked turn {asked} at most"
        if problem is not None:
            findings.append(Finding(link="correlation", ok=False, check="resumes", seqs=(seq,),
                                    message=f"run_resumed at seq {seq} {problem}"))
            continue
        note = f": {event['note']}" if event.get("note") else ""
        findings.append(Finding(link="correlation", ok=True, check="resumes", seqs=(seq,),
                                message=f"the run was stopped and went on at turn {turn} (seq {seq}){note}"))
    return findings
