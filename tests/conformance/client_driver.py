"""The conformance suite's client-mode driver: ``client_driver.py [--protocol-version V] URL``.

For each client scenario the suite starts a test server and runs ``<command> <url>``
(with ``MCP_CONFORMANCE_SCENARIO`` set). This writes an MCP config naming that URL as
the server ``conf`` and runs toolrelay the way a user would: ``toolrelay tools`` to
connect and list, and ``toolrelay call conf__TOOL ARGS`` for the scenarios that need a
tool called, with the options that answer what its server asks (``--elicit defaults``).
Its exit code is toolrelay's.

The auth scenarios (``auth/...``) sign in without a person (``--auth headless``), with a
state directory of their own; the pre-registered client the suite passes in
``MCP_CONFORMANCE_CONTEXT`` becomes the server's ``"toolrelay": {"oauth": {"clientId",
"clientSecret"}}``, and the CIMD scenario's client id its ``clientMetadataUrl``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CALLS: dict[str, tuple[str, dict[str, object]]] = {
    "tools_call": ("add_numbers", {"a": 2, "b": 3}),
    "sse-retry": ("test_reconnection", {}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
    "auth/scope-step-up": ("test-tool", {}),  # the 403 step-up comes with a tools/call
}
"""The tool each scenario wants called; any other scenario only connects and lists."""
OPTIONS: dict[str, list[str]] = {
    "elicitation-sep1034-client-defaults": ["--elicit", "defaults"],
}
"""How toolrelay answers what the scenario's server asks (here: accept a form with its defaults)."""

CIMD_CLIENT_ID = "https://conformance-test.local/client-metadata.json"
"""The Client ID Metadata Document URL the suite's CIMD scenario expects as client id."""


def oauth_settings(context: str | None) -> dict[str, object]:
    """The ``oauth`` block of the suite's server entry for an auth scenario."""
    settings: dict[str, object] = {"clientMetadataUrl": CIMD_CLIENT_ID}
    credentials = json.loads(context) if context else {}
    if isinstance(credentials, dict) and isinstance(credentials.get("client_id"), str):
        settings["clientId"] = credentials["client_id"]
        if isinstance(credentials.get("client_secret"), str):
            settings["clientSecret"] = credentials["client_secret"]
    return settings


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol-version", default="2025-11-25")
    parser.add_argument("url")
    args = parser.parse_args()
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    with tempfile.TemporaryDirectory(prefix="toolrelay-conformance-") as folder:
        config = Path(folder) / "mcp.json"
        entry: dict[str, object] = {"url": args.url}
        common = ["--config", str(config), "--protocol-version", args.protocol_version]
        environment = dict(os.environ)
        if scenario.startswith("auth/"):
            context = os.environ.get("MCP_CONFORMANCE_CONTEXT")
            entry["toolrelay"] = {"oauth": oauth_settings(context)}
            common += ["--auth", "headless"]
            environment["XDG_STATE_HOME"] = str(Path(folder) / "state")
        config.write_text(json.dumps({"mcpServers": {"conf": entry}}), encoding="utf-8")
        if scenario in CALLS:
            tool, arguments = CALLS[scenario]
            command = ["call", f"conf__{tool}", json.dumps(arguments), *common, *OPTIONS.get(scenario, [])]
        else:
            command = ["tools", *common]
        return subprocess.run([sys.executable, "-m", "toolrelay", *command], cwd=folder,
                              env=environment).returncode


if __name__ == "__main__":
    sys.exit(main())
