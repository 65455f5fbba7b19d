"""The verdict's findings in the seed's link order, each link's in the order found: when the
checks' findings come sorted already (the common case, found in C) and when they do not."""

from __future__ import annotations

import random

from toolrelay.verify.checks import _in_link_order
from toolrelay.verify.verdict import LINKS, Finding, link_rank


def _findings(links: list[str]) -> list[Finding]:
    return [Finding(link=link, ok=True, message=f"{n}", check=f"c{n}") for n, link in enumerate(links)]


def _stable_sort(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda finding: link_rank(finding.link))


def test_findings_sorted_or_not_come_out_in_link_order_and_found_order() -> None:
    shuffled = random.Random(29)
    cases = [
        [],
        list(LINKS),
        [link for link in LINKS for _ in range(3)],
        ["parse", "model_response", "parse", "feedback", "model_response"],
        ["correlation", "a link of another tool", "model_response", "next_input"],
        *([shuffled.choice([*LINKS, "unknown"]) for _ in range(40)] for _ in range(20)),
    ]
    for links in cases:
        findings = _findings(links)
        ordered = _in_link_order(findings)
        assert [f.message for f in ordered] == [f.message for f in _stable_sort(findings)]
        assert ordered is not findings  # a list of its own: the verdict's, to extend
