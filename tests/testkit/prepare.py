"""Install, ahead of a test run, what the tests otherwise install on first use: the Node
reference file server, server-everything, both conformance suites with Node 22 (npm, into
``.toolrelay-cache``) and Ray (pip, into this interpreter's environment).

The tests install each of these themselves when it is missing, so this is never required;
CI runs it before README's test command so that the test run's time is the tests' own.
Exit 1 naming what could not be installed.
"""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

from conftest import CACHE, _install_node_fs_server  # noqa: E402
from testkit import conformance, everything  # noqa: E402
from testkit.ray_setup import ensure_ray  # noqa: E402


def main() -> int:
    steps = {
        "the Node reference file server": _install_node_fs_server,
        "server-everything": lambda: everything.install(CACHE),
        "the conformance suite": lambda: conformance.install(CACHE),
        "the 2026-07-28 conformance suite": lambda: conformance.install(
            CACHE, conformance.MODERN_CONFORMANCE_PACKAGE),
        "Ray": lambda: ensure_ray(CACHE),
    }
    failed = []
    for name, install in steps.items():
        outcome = install()
        if isinstance(outcome, str):
            failed.append(f"{name}: {outcome}")
        print(f"prepare: {name}: {'FAILED' if isinstance(outcome, str) else 'ready'}", flush=True)
    for line in failed:
        print(f"prepare: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
