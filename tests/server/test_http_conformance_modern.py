"""The official MCP conformance suite (server mode, 0.2.0-alpha.12, on Node 22) at
``--spec-version 2026-07-28`` against ``toolrelay files --http``: the whole suite runs
(``--suite all``), and every scenario passes by its own checks (no FAILURE, no WARNING)
except those listed, each with its reason, in ``conformance_2026-07-28_expected_failures.yml``:
what a tools-only file server cannot offer. One of those that starts passing fails the
test too: the list must stay true.

The suite also runs against the suite's tool fixtures (``testkit/servers/conformance_service.py``)
on toolrelay's HTTP endpoint, where the ``tools-call-*`` scenarios that call those fixtures
pass in 2026-07-28 too (the fixture service uses no client roots, so its calls are never
answered ``input_required``).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit import conformance
from testkit.mcp_http import files_http_process, running_server
from testkit.servers.conformance_service import ConformanceService

EXPECTED_FILE = Path(__file__).with_name("conformance_2026-07-28_expected_failures.yml")

REQUIRED_CHECKS = {  # a pass must rest on these checks, not on INFO lines alone
    "tools-list": {"tools-list", "tools-name-format"},
    "dns-rebinding-protection": {"localhost-host-rebinding-rejected", "localhost-host-valid-accepted"},
    "http-header-validation": {"sep-2243-server-reject-invalid-headers", "sep-2243-server-reject-error-code",
                               "sep-2243-header-name-case-insensitive"},
    "server-sse-multiple-streams": {"server-accepts-multiple-post-streams"},
}
PARTLY_APPLICABLE = {  # expected to fail, but only by these checks; the rest must pass
    "server-stateless": {
        "sep-2575-server-rejects-undeclared-capability", "sep-2575-missing-capability-http-400",
        "sep-2575-http-server-no-independent-requests-on-stream", "sep-2575-server-no-log-without-loglevel",
    },
    "caching": {"sep-2549-prompts-list-caching-hints", "sep-2549-resources-list-caching-hints",
                "sep-2549-resources-templates-list-caching-hints"},
}
SERVED_BY_FIXTURES = {  # listed for the file server; the fixture service has these tools
    "tools-call-simple-text", "tools-call-image", "tools-call-audio", "tools-call-embedded-resource",
    "tools-call-mixed-content", "tools-call-error",
}
FIXTURE_REASONS = {  # why the fixture service still fails some of the file server's list
    "json-schema-2020-12":
        "the fixture's schema predates 0.2's SEP-2106 checks (allOf, if/then/else, $anchor)",
}
STATELESS_CHECKS = {  # what server-stateless verifies of the envelope and the HTTP path
    "sep-2575-request-meta-invalid-missing-meta", "sep-2575-http-server-meta-invalid-400",
    "sep-2575-server-implements-discover", "sep-2575-server-identifies-in-result-meta",
    "sep-2575-server-unsupported-version-error", "sep-2575-http-server-unsupported-version-400",
    "sep-2575-http-server-header-mismatch-400", "sep-2575-http-server-method-not-found-404",
    "sep-2575-http-server-method-not-found-404-initialize", "sep-2575-http-server-error-jsonrpc-id",
}


def expected_failures() -> dict[str, str]:
    """The listed scenarios and their reasons (every entry must give one)."""
    return conformance.expected_failures(EXPECTED_FILE, "server")


@pytest.fixture(scope="module")
def suite(modern_conformance_suite: list[str]) -> list[str]:
    return modern_conformance_suite


@pytest.fixture(scope="module", params=["files", "fixtures"])
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    if request.param == "fixtures":
        with running_server(ConformanceService()) as url:
            yield request.param, url
        return
    root = tmp_path_factory.mktemp("conformance-root")
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    with files_http_process(root) as url:
        yield request.param, url


def test_conformance_suite_2026_07_28(suite: list[str], target: tuple[str, str], tmp_path: Path) -> None:
    name, url = target
    proc = subprocess.run(
        [*suite, "server", "--url", url, "--suite", "all", "--spec-version", "2026-07-28",
         "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    verdicts = conformance.verdicts(tmp_path)
    assert len(verdicts) >= 40, proc.stdout + proc.stderr
    expected = expected_failures()
    assert set(expected) <= set(verdicts), "every listed scenario is one the suite runs"
    required = dict(REQUIRED_CHECKS)
    if name == "fixtures":
        expected = {s: FIXTURE_REASONS.get(s, why) for s, why in expected.items()
                    if s not in SERVED_BY_FIXTURES}
        required |= {scenario: {scenario} for scenario in SERVED_BY_FIXTURES}  # each one's own check
    failed = {s: v.problems for s, v in verdicts.items() if not v.passed and s not in expected}
    assert failed == {}
    stale = sorted(s for s, v in verdicts.items() if v.passed and s in expected)
    assert stale == [], f"expected to fail, but passed: {stale} (update {EXPECTED_FILE.name})"
    for scenario, checks in required.items():
        assert checks <= verdicts[scenario].successes, scenario
    for scenario, allowed in PARTLY_APPLICABLE.items():
        failing = {problem.split(" ", 2)[1].rstrip(":") for problem in verdicts[scenario].problems}
        assert failing == allowed, scenario
    assert verdicts["server-stateless"].successes >= STATELESS_CHECKS
