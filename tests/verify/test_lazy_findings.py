"""A verdict's findings make their words and seq numbers when first read; read, copied or
pickled, they say exactly what they would have said made at once."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

from toolrelay.verify import Finding, load_run, verify


def test_a_verdict_pickles_and_copies_with_the_words_it_shows(seed_run: Path) -> None:
    verdict = verify(load_run(seed_run))
    shown = [finding.to_dict() for finding in verify(load_run(seed_run)).findings]
    for again in (pickle.loads(pickle.dumps(verdict)), copy.deepcopy(verdict)):
        assert [finding.to_dict() for finding in again.findings] == shown
    assert verdict.findings == pickle.loads(pickle.dumps(verdict)).findings
    parse = next(f for f in verdict.findings if f.link == "parse")
    assert parse.message.startswith(f"{parse.call_id}: arguments text ")
    assert parse.seqs and all(isinstance(seq, int) for seq in parse.seqs)


def test_words_given_as_a_function_are_made_once_when_read() -> None:
    made: list[str] = []

    def say() -> str:
        made.append("said")
        return "the route holds"

    finding = Finding(link="routing", ok=True, message=say, seqs=lambda: (3, 5), check="route")
    assert made == []
    assert (finding.message, finding.message, finding.seqs) == ("the route holds", "the route holds", (3, 5))
    assert made == ["said"]
    assert finding == Finding(link="routing", ok=True, message="the route holds", seqs=(3, 5), check="route")
    assert repr(finding).startswith("Finding(link='routing', ok=True, message='the route holds'")
