"""The official MCP conformance suite (server mode, 0.1.16, on Node 22) against our
Streamable HTTP server: the scenarios a tool server without prompts, resources, logging
or sampling can pass. Run against the echo test service and against ``toolrelay files``."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from http_helpers import install_conformance_suite

from conftest import require_or_skip
from testkit.mcp_http import files_http_process, running_server

SCENARIOS = {
    "server-initialize": {"server-initialize"},
    "ping": {"ping"},
    "tools-list": {"tools-list"},
    "dns-rebinding-protection": {"localhost-host-rebinding-rejected", "localhost-host-valid-accepted"},
    "server-sse-multiple-streams": {"server-accepts-multiple-post-streams"},
}


@pytest.fixture(scope="module")
def conformance() -> list[str]:
    found = install_conformance_suite()
    if isinstance(found, str):
        require_or_skip(found)
    assert isinstance(found, list)
    return found


@pytest.fixture(scope="module", params=["echo", "files"])
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if request.param == "echo":
        with running_server() as url:
            yield url
        return
    root = tmp_path_factory.mktemp("conformance-root")
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    with files_http_process(root) as url:
        yield url


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_conformance_scenario(conformance: list[str], target: str, scenario: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [*conformance, "server", "--url", target, "--scenario", scenario, "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    [checks_file] = tmp_path.glob(f"server-{scenario}-*/checks.json")
    checks = json.loads(checks_file.read_text())
    failures = [f"{c['id']}: {c.get('errorMessage')}" for c in checks
                if c["status"] in ("FAILURE", "WARNING")]
    assert failures == [], proc.stdout
    assert {c["id"] for c in checks if c["status"] == "SUCCESS"} >= SCENARIOS[scenario]
    assert proc.returncode == 0, proc.stdout + proc.stderr
