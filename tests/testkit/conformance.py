"""The official MCP conformance suite (``@modelcontextprotocol/conformance`` on Node 22 from
the npm registry): installed once, run, and its verdicts read. Two pins: 0.1.16 (the
2025-06-18 and 2025-11-25 scenarios) and 0.2.0-alpha.12, the first with 2026-07-28 ones.

Both modes write one folder per scenario under ``-o DIR`` (``server-<scenario>-<time>`` in
server mode, ``<scenario>-<time>`` in client mode) holding ``checks.json``. A scenario passes here when none
of its checks is a FAILURE or a WARNING: the suite itself counts a warning as a failure
in client mode, and the tests hold server mode to the same bar.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from . import npm

__all__ = [
    "CONFORMANCE_PACKAGE", "MODERN_CONFORMANCE_PACKAGE", "NODE22_PACKAGE", "Verdict", "expected_failures",
    "install", "verdicts",
]

CONFORMANCE_PACKAGE = "@modelcontextprotocol/conformance@0.1.16"
MODERN_CONFORMANCE_PACKAGE = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
"""The suite with 2026-07-28 scenarios (``--spec-version 2026-07-28``), installed beside 0.1.16."""
NODE22_PACKAGE = "node@22"  # the suite needs Node >= 22; npm ships it as a package
_FOLDER = re.compile(r"(server-)?(.+)-\d{4}-\d{2}-\d{2}T[0-9-]+Z?")
_ENTRY = re.compile(r"\s+- ([a-z0-9/-]+)\s+#\s*(\S.*)")


def install(cache: Path, package: str = CONFORMANCE_PACKAGE) -> list[str] | str:
    """The command that runs the suite ``package`` (installed once into ``cache/conformance``,
    or ``cache/conformance-modern`` for the 2026-07-28 pin), or why it cannot be had."""
    node = "node_modules/.bin/node"
    index = "node_modules/@modelcontextprotocol/conformance/dist/index.js"
    folder = "conformance" if package == CONFORMANCE_PACKAGE else "conformance-modern"
    installed = npm.install(cache / folder, [package, NODE22_PACKAGE], [node, index])
    return [str(installed / node), str(installed / index)] if isinstance(installed, Path) else installed


@dataclass(frozen=True, slots=True)
class Verdict:
    """One scenario's result: the ids of its successful checks, and what went wrong."""

    scenario: str
    successes: frozenset[str]
    problems: tuple[str, ...]
    """``STATUS id: message`` of every FAILURE and WARNING."""

    @property
    def passed(self) -> bool:
        return not self.problems


def verdicts(results: Path) -> dict[str, Verdict]:
    """Every scenario's verdict in a ``-o`` folder, by scenario name (a name with a slash,
    ``auth/metadata-default``, is a folder inside: ``auth/metadata-default-<time>``)."""
    found: dict[str, Verdict] = {}
    for folder in sorted(path.parent for path in results.rglob("checks.json")):
        named = _FOLDER.fullmatch(folder.relative_to(results).as_posix())
        if named is None:
            continue
        checks = json.loads((folder / "checks.json").read_text(encoding="utf-8"))
        found[named.group(2)] = Verdict(
            scenario=named.group(2),
            successes=frozenset(c["id"] for c in checks if c["status"] == "SUCCESS"),
            problems=tuple(f"{c['status']} {c['id']}: {c.get('errorMessage', '')}"
                           for c in checks if c["status"] in ("FAILURE", "WARNING")),
        )
    return found


def expected_failures(listing: Path, mode: str) -> dict[str, str]:
    """The scenarios an expected-failures file (the suite's YAML shape: ``server:`` or
    ``client:``, then ``  - scenario  # reason`` lines) lists under ``mode``, with their
    reasons; every entry must give one."""
    lines = listing.read_text(encoding="utf-8").splitlines()
    listed = [line for line in lines[lines.index(f"{mode}:") + 1:] if line.strip()]
    entries = {m.group(1): m.group(2) for line in listed if (m := _ENTRY.fullmatch(line))}
    assert len(entries) == len(listed), "each entry is '  - scenario  # reason'"
    return entries
