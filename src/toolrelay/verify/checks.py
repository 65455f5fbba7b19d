"""``verify(run)``: every link check over one run record, and the verdict.

Each check is a pure function ``(run, facts) -> findings`` for one invariant; they run in
the seed's order and the first broken link in that order is the verdict's ``broken``.
For a demo folder, where files depart from the transcript is reported too, ranked after
the link checks (which already ran on the files themselves). A run that did not finish
is not broken: what is missing is listed in ``unfinished``. Time is linear in the
transcript's size; the checks with one finding per call judge the calls together, each
call by all of them in turn (``CALL_STEPS``), which gives the same findings in the same
order as each check over every call in turn.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Final

from ..gc_pause import paused_gc
from ..relay.stages.endings import ending_line
from .agreement import check_agreement
from .attachments import STREAMED, no_call_text
from .body_digests import check_body_digests
from .call_common import CommonCalls
from .compaction import check_compaction_records
from .context import check_answer_order, check_context, check_declarations
from .conversation import check_user_turn_endings, check_user_turn_places, check_user_turns
from .correlation import check_call_links, check_event_order, check_mcp_pairs, check_outputs, link_of_call
from .cost import check_cost
from .definitions import check_definitions, definition_of_call
from .direct_call import check_direct_call, direct_status, direct_unfinished, is_direct_call
from .duplicates import check_duplicates
from .facts import CallJudge, RunFacts
from .feedback import check_feedback, feedback_of_call
from .listens import check_listens
from .mcp_side import check_routing, check_server, route_of_call, server_of_call
from .model_side import check_answer, check_parse, check_rounds, parse_of_call
from .policy_checks import check_policy
from .progress_logs import check_progress_and_logs
from .proxy_legs import is_proxy_run, verify_proxy
from .record import RunRecord
from .resumed import check_resumes
from .searches import check_search_calls, check_search_pairs
from .server_requests import check_server_requests
from .settings import check_request_settings
from .streamed import check_streams
from .tasks import check_tasks
from .usage import check_usage
from .verdict import LINKS, Finding, Verdict, link_rank

__all__ = ["CHECKS", "unfinished_reasons", "verify"]

Check = Callable[[RunRecord, RunFacts], list[Finding]]

CHECKS: tuple[tuple[str, Check], ...] = (
    ("model_response", check_rounds),
    ("model_response", check_answer),
    ("model_response", check_streams),
    ("model_response", check_usage),
    ("model_response", check_cost),
    ("model_response", check_user_turn_endings),
    ("parse", check_parse),
    ("parse", check_duplicates),
    ("routing", check_routing),
    ("routing", check_definitions),
    ("routing", check_policy),
    ("routing", check_search_calls),
    ("server_check", check_server),
    ("feedback", check_feedback),
    ("correlation", check_event_order),
    ("correlation", check_mcp_pairs),
    ("correlation", check_call_links),
    ("correlation", check_server_requests),
    ("correlation", check_progress_and_logs),
    ("correlation", check_listens),
    ("correlation", check_tasks),
    ("correlation", check_outputs),
    ("correlation", check_search_pairs),
    ("correlation", check_resumes),
    ("correlation", check_user_turn_places),
    ("next_input", check_declarations),
    ("next_input", check_context),
    ("next_input", check_compaction_records),
    ("next_input", check_user_turns),
    ("next_input", check_request_settings),
    ("next_input", check_body_digests),
    ("next_input", check_answer_order),
)
"""Each check with the link it judges, in the seed's order."""
DIRECT_CHECKS: Final = (("parse", check_direct_call),
                        *((link, check) for link, check in CHECKS if check is not check_parse))
"""A ``toolrelay call`` transcript's: the call asked for in place of the model's (``direct_call.py``)."""

CALL_STEPS: Final[dict[Check, CallJudge]] = {
    check_parse: parse_of_call,
    check_routing: route_of_call,
    check_definitions: definition_of_call,
    check_server: server_of_call,
    check_feedback: feedback_of_call,
    check_call_links: link_of_call,
}
"""The checks whose findings are one per call, with the step that judges one call: run
together, call by call (``RunFacts.judge_together``)."""

_RANKS: Final = {link: rank for rank, link in enumerate(LINKS)}
_LINK_OF: Final = operator.attrgetter("link")
_OK: Final = operator.attrgetter("ok")
_UNEXPECTED_SHAPE = (TypeError, AttributeError, KeyError, IndexError, ValueError)


def verify(run: RunRecord) -> Verdict:
    """Check every link the record holds; the first broken one in the seed's order."""
    with paused_gc():  # many small findings over a large record: see paused_gc
        if is_proxy_run(run):  # recorded by toolrelay proxy: no model side (proxy_legs.py)
            return verify_proxy(run)
        if is_direct_call(run):  # recorded by toolrelay call: one call, no model side
            return _verdict(run, DIRECT_CHECKS, direct_unfinished, direct_status(run))
        return _verdict(run)


def _verdict(run: RunRecord, checks: Sequence[tuple[str, Check]] = CHECKS,
             unfinished: Callable[[RunRecord, RunFacts], list[str]] | None = None,
             status: str | None = None) -> Verdict:
    facts = RunFacts(run)
    facts.judge_together([step for _, check in checks if (step := CALL_STEPS.get(check)) is not None],
                         common=CommonCalls)  # the calls of the common shape judged at once
    found = [finding for link, check in checks for finding in _run_check(link, check, run, facts)]
    findings = _in_link_order(found)
    agreement = check_agreement(run)
    streamed = _streamed_run(run)
    broken = _first_broken(findings) or _first_broken(agreement) or _first_broken(streamed)
    reasons = (unfinished or unfinished_reasons)(run, facts)
    return Verdict(
        findings=findings + agreement + streamed,
        broken=broken,
        finished=not reasons,
        unfinished=reasons,
        run_status=status or run.status,
        run_id=run.run_id,
        source=str(run.source),
    )


def _in_link_order(findings: list[Finding]) -> list[Finding]:
    """The findings sorted by link in the seed's order, each link's in the order found (a
    stable sort, by buckets: one pass over tens of thousands of findings, no key calls).
    The checks run in that order, so their findings mostly come sorted: that is found in C."""
    try:
        ranks = list(map(_RANKS.__getitem__, map(_LINK_OF, findings)))
    except KeyError:  # a link not among the seed's: sorted last, by the buckets
        ranks = None
    if ranks is not None and all(map(operator.le, ranks, ranks[1:])):
        return list(findings)
    buckets: dict[str, list[Finding]] = {link: [] for link in LINKS}
    others: list[Finding] = []  # unknown links sort last (link_rank)
    for finding in findings:
        buckets.get(finding.link, others).append(finding)
    return [finding for bucket in (*buckets.values(), others) for finding in bucket]


def _streamed_run(run: RunRecord) -> list[Finding]:
    """A demo folder's ``streamed/`` run, verified on its own: one finding saying how."""
    streamed = run.streamed_run
    if streamed is None:
        return []
    verdict = _verdict(streamed)
    where = f"{STREAMED}/ (the walk-through again, streamed)"
    broken = verdict.broken
    if broken is not None:
        return [Finding(link=broken.link, ok=False, check="streamed_run", turn=broken.turn,
                        call_id=broken.call_id, message=f"{where}: {broken.message}")]
    held = sum(1 for finding in verdict.findings if finding.ok)
    events = sum(len(current.stream) for current in streamed.rounds)
    files = ", ".join(sorted(streamed.stream_texts)) or "no stream file"
    unfinished = f"; unfinished: {verdict.unfinished[0]}" if verdict.unfinished else ""
    message = f"{where}: {held} checks hold; {events} stream events, in {files}{unfinished}"
    return [Finding(link="model_response", ok=True, check="streamed_run", message=message)]


def _run_check(link: str, check: Check, run: RunRecord, facts: RunFacts) -> list[Finding]:
    """The check's findings; evidence in a shape no toolrelay run produces (a hand-edited
    body, say) cannot be judged, so it breaks the link instead of crashing verify."""
    try:
        return check(run, facts)
    except _UNEXPECTED_SHAPE as exc:
        what = f"{type(exc).__name__}: {exc}"
        return [Finding(link=link, ok=False, check=check.__name__.removeprefix("check_"),
                        message=f"the record cannot be checked here: it holds a value in a shape toolrelay "
                                f"never writes ({what})")]


def _first_broken(findings: list[Finding]) -> Finding | None:
    broken = list(itertools.filterfalse(_OK, findings))  # in C: a verdict has tens of thousands
    return min(broken, key=lambda finding: link_rank(finding.link)) if broken else None


def unfinished_reasons(run: RunRecord, facts: RunFacts) -> list[str]:
    """Why the run is not finished: no run_end, another status, calls left without output."""
    reasons: list[str] = []
    if run.run_end is None:
        last = run.events[-1]["seq"] if run.events else 0
        cut = "; its last line was cut short" if run.cut_tail else ""
        reasons.append(
            f"the transcript ends at seq {last} without run_end: the run was stopped before it ended{cut}"
        )
    elif run.status != "completed":
        turns = run.run_end.get("turns")
        count = turns if isinstance(turns, int) else 0
        reasons.append("the run " + ending_line(str(run.status), count, str(run.run_end.get("reason") or "")))
    if not run.calls:  # a finished run's words; a cut one says how far its records go
        reasons.append(no_call_text(run) + (": nothing ran" if run.run_end is not None else ""))
    for call in run.calls:
        if call.dropped or facts.fed_back(call):  # a dropped call's output has no place to go
            continue
        if call.status == "cancelled":
            reasons.append(f"{call.call_id} was cancelled: {(call.outcome or {}).get('message')}")
        elif call.outcomes:
            reasons.append(f"{call.call_id} has no output in a later request: the model never saw its result")
        else:
            reasons.append(f"{call.call_id} has no output: it was not run to its end")
    return reasons
