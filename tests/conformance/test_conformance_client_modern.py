"""The official MCP conformance suite in client mode (0.2.0-alpha.12, on Node 22) against
toolrelay's client at 2026-07-28.

One run of the suite's ``--requirements 2026-07-28`` (its scenarios run concurrently, each
with its own test server; the suite's run of ``--suite all --spec-version 2026-07-28`` is a
subset of it, which a test checks, so that run adds nothing) drives ``client_driver.py`` at
``--protocol-version 2026-07-28``. Each scenario passes by the suite's own rule (no
FAILURE, no WARNING) unless it is listed, with its reason, in
``conformance_client_2026-07-28_expected_failures.yml``; one listed that starts passing
fails too, so the list stays true.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from testkit import conformance
from testkit.netns import loopback_only

pytestmark = pytest.mark.timeout(300)  # the first test waits for the whole run (~30 s; more when busy)
DRIVER = Path(__file__).resolve().parent / "client_driver.py"
EXPECTED_FILE = Path(__file__).with_name("conformance_client_2026-07-28_expected_failures.yml")
REVISION = "2026-07-28"
SCORED = (  # the suite's client scenarios required for 2026-07-28
    "tools_call", "request-metadata", "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2",
    "auth/metadata-var3", "auth/basic-cimd", "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined", "auth/scope-step-up",
    "auth/scope-retry-limit", "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none", "auth/pre-registration", "auth/resource-mismatch",
    "auth/offline-access-scope", "auth/offline-access-not-supported", "auth/authorization-server-migration",
    "auth/iss-supported", "auth/iss-not-advertised", "auth/iss-supported-missing", "auth/iss-wrong-issuer",
    "auth/iss-unexpected", "auth/iss-normalized", "auth/metadata-issuer-mismatch",
    "sep-2322-client-request-state", "http-standard-headers", "http-custom-headers",
    "http-invalid-tool-headers", "json-schema-ref-no-deref",
)
UNSCORED = (  # run and reported by the suite, never scored (extensions, added after the release)
    "auth/client-credentials-jwt", "auth/client-credentials-basic", "auth/enterprise-managed-authorization",
    "auth/dpop", "auth/dpop-nonce", "auth/wif-jwt-bearer", "json-schema-2020-12-preservation",
)


@dataclass(frozen=True)
class _Run:
    proc: subprocess.CompletedProcess[str]
    verdicts: dict[str, conformance.Verdict]


@pytest.fixture(scope="module")
def suite(modern_conformance_suite: list[str]) -> list[str]:
    return modern_conformance_suite


def _listed(suite: list[str], *selection: str) -> set[str]:
    """The client scenarios ``list`` names: under its "Client scenarios" heading, or tagged
    ``[client]`` among those run but never scored (``--requirements`` lists servers' too)."""
    listed = subprocess.run([*suite, "list", "--client", *selection], capture_output=True, text=True,
                            timeout=60)
    names, heading = set(), ""
    for line in (raw.strip() for raw in listed.stdout.splitlines()):
        if line.endswith(":") and not line.startswith("- "):
            heading = line
        elif line.startswith("- ") and (heading.startswith("Client") or line.endswith("[client]")):
            names.add(line[2:].split(" [")[0])
    return names


def test_the_scenarios_are_the_suites(suite: list[str]) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        selections = ["--requirements", "--spec-version"]
        required, filtered = pool.map(lambda how: _listed(suite, how, REVISION), selections)
    assert required == set(SCORED) | set(UNSCORED)
    assert filtered <= required  # what --suite all --spec-version 2026-07-28 would run


@pytest.fixture(scope="module")
def requirements_run(suite: list[str], tmp_path_factory: pytest.TempPathFactory) -> _Run:
    out = tmp_path_factory.mktemp("client-2026")
    command = shlex.join([sys.executable, str(DRIVER), "--protocol-version", REVISION])
    suite_run = [*suite, "client", "--command", command, "--requirements", REVISION, "-o", str(out)]
    proc = subprocess.run([*loopback_only(), *suite_run], capture_output=True, text=True, timeout=600)
    return _Run(proc, conformance.verdicts(out))


@pytest.mark.parametrize("scenario", SCORED + UNSCORED)
def test_client_scenario(requirements_run: _Run, scenario: str) -> None:
    verdict = requirements_run.verdicts.get(scenario)
    assert verdict is not None, requirements_run.proc.stdout + requirements_run.proc.stderr
    if scenario in conformance.expected_failures(EXPECTED_FILE, "client"):
        assert not verdict.passed, f"{scenario} passes now: remove it from {EXPECTED_FILE.name}"
        return
    assert verdict.problems == ()
    assert verdict.successes, "a pass must rest on at least one successful check"


def test_the_expected_failures_are_scenarios_of_the_run() -> None:
    assert set(conformance.expected_failures(EXPECTED_FILE, "client")) <= set(SCORED) | set(UNSCORED)
