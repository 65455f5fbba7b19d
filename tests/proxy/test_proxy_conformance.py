"""The official MCP conformance suite's server scenarios against ``toolrelay proxy --http``
fronting a server that passes them directly: the proxy passes the same scenarios as the
server alone, in every revision (0.1.16 for 2025-06-18 and 2025-11-25, 0.2.0-alpha.12 for
2026-07-28; ``--suite all``).

The server is the suite's fixtures with resources, prompts and completion
(``testkit/servers/conformance_features.py``): directly on toolrelay's Streamable HTTP
endpoint, and as the proxy's one upstream over stdio with ``--keep-names`` (the
scenarios name the fixtures' own tools, URIs and prompts). Both hold a request's stream
0.2 s (``--sse-hold``), so ``server-sse-polling`` resumes through the proxy too. The test
prints both lists; every scenario the server passes passes through the proxy, the only
ones the proxy passes besides are those it serves itself (``PROXY_OWN``, with why), the
resource, prompt and completion scenarios are among them, and the proxy's transcript of
the whole suite verifies.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import REPO, require_or_skip
from testkit import conformance
from testkit.mcp_http import running_server
from testkit.servers.conformance_features import ConformanceFeatures
from toolrelay.server.http_streams import StreamOptions

from .proxy_helpers import http_proxy, script_entry, verify, write_config

FEATURES = REPO / "tests" / "testkit" / "servers" / "conformance_features.py"
HOLD = 0.2
SUITES = {"2025-06-18": conformance.CONFORMANCE_PACKAGE, "2025-11-25": conformance.CONFORMANCE_PACKAGE,
          "2026-07-28": conformance.MODERN_CONFORMANCE_PACKAGE}
MUST_PASS = {  # what a pass through the proxy must include, by revision: the features it now fronts
    "2025-06-18": {"resources-list", "resources-read-text", "resources-read-binary",
                   "resources-templates-read", "resources-subscribe", "resources-unsubscribe", "prompts-list",
                   "prompts-get-simple", "prompts-get-with-args", "prompts-get-embedded-resource",
                   "prompts-get-with-image", "completion-complete", "tools-call-simple-text",
                   "server-initialize"},
    "2025-11-25": {"resources-read-text", "prompts-get-with-args", "completion-complete",
                   "server-sse-polling"},
    "2026-07-28": {"resources-list", "resources-read-text", "resources-templates-read",
                   "prompts-get-with-args", "completion-complete", "caching", "sep-2164-resource-not-found",
                   "tools-call-simple-text"},
}


PROXY_OWN = {  # what passes through the proxy though not against the server alone, and why
    "logging-set-level": "the proxy answers logging/setLevel itself, per host: it relays its servers' "
                         "log messages at the level each host set (the server alone has no logging)",
}


def _verdicts(suite: list[str], url: str, version: str, out: Path) -> dict[str, bool]:
    """Each scenario the suite ran against ``url``: whether it passed."""
    proc = subprocess.run([*suite, "server", "--url", url, "--suite", "all", "--spec-version", version,
                           "-o", str(out)], capture_output=True, text=True, timeout=300)
    verdicts = conformance.verdicts(out)
    assert len(verdicts) >= 26, proc.stdout + proc.stderr
    return {scenario: verdict.passed for scenario, verdict in verdicts.items()}


@pytest.mark.parametrize("version", list(SUITES))
def test_the_proxy_passes_what_the_server_passes(version: str, tmp_path: Path) -> None:
    found = conformance.install(REPO / ".toolrelay-cache", SUITES[version])
    if isinstance(found, str):
        require_or_skip(found)
    assert isinstance(found, list)
    config = write_config(tmp_path, {"everything": script_entry(FEATURES)})
    transcript = tmp_path / "proxy.jsonl"
    streams = StreamOptions(hold=HOLD)
    with running_server(ConformanceFeatures(), streams=streams) as direct_url, \
            http_proxy(config, transcript, "--keep-names", "--sse-hold", str(HOLD)) as proxy_url, \
            ThreadPoolExecutor(max_workers=2) as pool:
        direct = pool.submit(_verdicts, found, direct_url, version, tmp_path / "direct")
        through = pool.submit(_verdicts, found, proxy_url, version, tmp_path / "proxy")
        by_server, by_proxy = direct.result(), through.result()
    alone = {scenario for scenario, passed in by_server.items() if passed}
    proxied = {scenario for scenario, passed in by_proxy.items() if passed}
    print(f"\n{version}: {len(alone)} of {len(by_server)} scenarios pass directly, "
          f"{len(proxied)} of {len(by_proxy)} through the proxy")
    for scenario in sorted(by_server.keys() | by_proxy.keys()):
        print(f"  {'pass' if scenario in alone else 'fail'} directly · "
              f"{'pass' if scenario in proxied else 'fail'} through the proxy · {scenario}")
    assert by_proxy.keys() == by_server.keys()
    assert alone - proxied == set()  # nothing the server passes is lost through the proxy
    assert proxied - alone == {s for s in PROXY_OWN if s in by_proxy}, sorted(proxied - alone)
    assert MUST_PASS[version] <= proxied, sorted(MUST_PASS[version] - proxied)
    checked = verify(transcript)
    assert checked.returncode == 0, checked.stdout
