"""The official MCP conformance suite in client mode (0.1.16, on Node 22) against toolrelay's
client, for 2025-06-18 and 2025-11-25.

Each client scenario of a revision (the 14 auth scenarios too) runs ``client_driver.py`` (``toolrelay tools``
or ``toolrelay call`` with a config that names the suite's test server) and passes by
the suite's own rule: no FAILURE, no WARNING, exit 0. The expected failures below are
listed with their reasons; one that starts passing fails the test too, so the list
stays true. The suite's test servers listen on every interface, so where the machine
allows it the suite runs in a private network namespace that has only loopback.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REPO, require_or_skip
from testkit import conformance
from testkit.netns import loopback_only

DRIVER = Path(__file__).resolve().parent / "client_driver.py"
SCENARIOS = {  # the suite's non-auth client scenarios, by revision
    "2025-06-18": ("initialize", "tools_call"),
    "2025-11-25": ("initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"),
}
AUTH_SCENARIOS = {  # the suite's 14 auth client scenarios (its `auth` suite), by revision
    "2025-06-18": ("auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-none",
                   "auth/token-endpoint-auth-post"),
    "2025-11-25": ("auth/basic-cimd", "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2",
                   "auth/metadata-var3", "auth/pre-registration", "auth/scope-from-scopes-supported",
                   "auth/scope-from-www-authenticate", "auth/scope-omitted-when-undefined",
                   "auth/scope-retry-limit", "auth/scope-step-up", "auth/token-endpoint-auth-basic",
                   "auth/token-endpoint-auth-none", "auth/token-endpoint-auth-post"),
}
"""Run through the same driver, signing in headless (``client_driver.py``)."""
EXPECTED_FAILURES: dict[str, str] = {}


@pytest.fixture(scope="module")
def suite() -> list[str]:
    found = conformance.install(REPO / ".toolrelay-cache")
    if isinstance(found, str):
        require_or_skip(found)
    assert isinstance(found, list)
    return found


@pytest.fixture(scope="module")
def listings(suite: list[str]) -> dict[str, subprocess.CompletedProcess[str]]:
    """The suite's ``list --client`` for each revision, run once for both list tests."""
    def listing(version: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*suite, "list", "--client", "--spec-version", version],
                              capture_output=True, text=True, timeout=60)
    versions = sorted(SCENARIOS.keys() | AUTH_SCENARIOS.keys())
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(versions, pool.map(listing, versions), strict=True))


@pytest.mark.parametrize("version", sorted(SCENARIOS))
def test_the_scenario_list_is_the_suites(listings: dict[str, subprocess.CompletedProcess[str]],
                                         version: str) -> None:
    listed = listings[version]
    names = [line.strip()[2:].split(" [")[0] for line in listed.stdout.splitlines()
             if line.strip().startswith("- ")]
    assert names, listed.stdout + listed.stderr
    assert sorted(n for n in names if not n.startswith("auth/")) == sorted(SCENARIOS[version])


@pytest.mark.parametrize("version", sorted(AUTH_SCENARIOS))
def test_the_auth_scenario_list_is_the_suites(listings: dict[str, subprocess.CompletedProcess[str]],
                                              version: str) -> None:
    listed = listings[version]
    names = [line.strip()[2:].split(" [")[0] for line in listed.stdout.splitlines()
             if line.strip().startswith("- auth/")]
    assert sorted(names) == sorted(AUTH_SCENARIOS[version]), listed.stdout + listed.stderr


CASES = [(v, s) for table in (SCENARIOS, AUTH_SCENARIOS) for v, names in table.items() for s in names]
ALONE = {"sse-retry"}
"""Judged on timing (a reconnection within 200 ms of the server's ``retry:``): run alone,
never beside other scenarios; the rest run three at a time (each in its own folder, the
suite's servers on ports of their own), which keeps the module's wall time down."""


@dataclass(frozen=True)
class _Run:
    proc: subprocess.CompletedProcess[str]
    out: Path


def _run(suite: list[str], version: str, scenario: str, out: Path) -> _Run:
    command = shlex.join([sys.executable, str(DRIVER), "--protocol-version", version])
    proc = subprocess.run(
        [*loopback_only(), *suite, "client", "--command", command, "--scenario", scenario,
         "--spec-version", version, "-o", str(out)],
        capture_output=True, text=True, timeout=180,
    )
    return _Run(proc, out)


@pytest.fixture(scope="module")
def side_by_side(suite: list[str], tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], _Run]:
    cases = [case for case in CASES if case[1] not in ALONE]
    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = {case: pool.submit(_run, suite, *case, tmp_path_factory.mktemp("scenario")) for case in cases}
        return {case: run.result() for case, run in runs.items()}


@pytest.mark.parametrize(("version", "scenario"), CASES)
def test_client_scenario(suite: list[str], side_by_side: dict[tuple[str, str], _Run], version: str,
                         scenario: str, tmp_path: Path) -> None:
    run = _run(suite, version, scenario, tmp_path) if scenario in ALONE else side_by_side[(version, scenario)]
    proc = run.proc
    verdict = conformance.verdicts(run.out).get(scenario)
    assert verdict is not None, proc.stdout + proc.stderr
    if scenario in EXPECTED_FAILURES:
        assert not verdict.passed, f"{scenario} passes now: remove it from EXPECTED_FAILURES"
        return
    assert verdict.problems == ()
    assert verdict.successes, "a pass must rest on at least one successful check"
    assert proc.returncode == 0, proc.stdout + proc.stderr
