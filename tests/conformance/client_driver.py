"""The conformance suite's client-mode driver: ``client_driver.py [--protocol-version V] URL``.

For each client scenario the suite starts a test server and runs ``<command> <url>``
(with ``MCP_CONFORMANCE_SCENARIO`` set). This writes an MCP config naming that URL as
the server ``conf`` and runs toolrelay the way a user would: ``toolrelay tools`` to
connect and list, and ``toolrelay call conf__TOOL ARGS`` for the scenarios that need a
tool called, with the options that answer what its server asks (``--elicit defaults``).
A scenario that wants several calls gets one ``toolrelay call`` each, in order (those of
``http-custom-headers`` come in the suite's ``MCP_CONFORMANCE_CONTEXT`` as ``toolCalls``);
its exit code is the first failing one's, else 0.

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

CALLS: dict[str, list[tuple[str, dict[str, object]]]] = {
    "tools_call": [("add_numbers", {"a": 2, "b": 3})],
    "sse-retry": [("test_reconnection", {})],
    "elicitation-sep1034-client-defaults": [("test_client_elicitation_defaults", {})],
    "auth/scope-step-up": [("test-tool", {})],  # the 403 step-up comes with a tools/call
    "http-invalid-tool-headers": [("valid_tool", {"region": "us-west1"})],  # the others are left out
    "sep-2322-client-request-state": [(tool, {}) for tool in (
        "test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type")],
}
"""The tools each scenario wants called, in order; any other scenario only connects and lists
(or names its calls in the context: ``toolCalls``; or echoes a schema: ``ECHOED``)."""
ECHOED = {"json-schema-2020-12-preservation": ("json_schema_2020_12_tool", "json_schema_echo")}
"""Scenario → (the tool whose schema the model is shown, the tool that takes it back as ``schema``)."""
OPTIONS: dict[str, list[str]] = {
    "elicitation-sep1034-client-defaults": ["--elicit", "defaults"],
    "sep-2322-client-request-state": ["--elicit", "defaults"],
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


def planned_calls(scenario: str, context: str | None) -> list[tuple[str, dict[str, object]]]:
    """The calls a scenario wants: the table's, or those its context lists (``toolCalls``)."""
    listed = json.loads(context).get("toolCalls") if context else None
    if isinstance(listed, list):  # a null argument is left out: a model's null for an optional
        # parameter is stripped before the call (relay/stages/optional_nulls.py), and toolrelay refuses
        # one the schema does not allow; either way the argument is "not provided"
        return [(call["name"], {k: v for k, v in (call.get("arguments") or {}).items() if v is not None})
                for call in listed]
    return CALLS.get(scenario, [])


def echo_schema(toolrelay: list[str], common: list[str],
                tools: tuple[str, str]) -> list[tuple[str, dict[str, object]]]:
    """The call that hands the model's view of one tool's schema back to the server."""
    shown, echo = tools
    listed = subprocess.run([*toolrelay, "tools", "--json", *common], capture_output=True, text=True)
    declared = {tool["name"]: tool for tool in json.loads(listed.stdout or "[]")}
    schema = declared.get(f"conf__{shown}", {}).get("parameters")
    return [(echo, {"schema": schema})] if isinstance(schema, dict) else []


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol-version", default="2025-11-25")
    parser.add_argument("url")
    args = parser.parse_args()
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    toolrelay = [sys.executable, "-m", "toolrelay"]
    with tempfile.TemporaryDirectory(prefix="toolrelay-conformance-") as folder:
        config = Path(folder) / "mcp.json"
        entry: dict[str, object] = {"url": args.url}
        common = ["--config", str(config), "--protocol-version", args.protocol_version]
        environment = dict(os.environ)
        if scenario.startswith("auth/"):
            entry["toolrelay"] = {"oauth": oauth_settings(context)}
            common += ["--auth", "headless"]
            environment["XDG_STATE_HOME"] = str(Path(folder) / "state")
        config.write_text(json.dumps({"mcpServers": {"conf": entry}}), encoding="utf-8")
        calls = planned_calls(scenario, None if scenario.startswith("auth/") else context)
        if scenario in ECHOED:
            calls = echo_schema(toolrelay, common, ECHOED[scenario])
        commands = [["call", f"conf__{tool}", json.dumps(arguments), *common, *OPTIONS.get(scenario, [])]
                    for tool, arguments in calls] or [["tools", *common]]
        codes = [subprocess.run([*toolrelay, *command], cwd=folder, env=environment).returncode
                 for command in commands]
        return next((code for code in codes if code), 0)


if __name__ == "__main__":
    sys.exit(main())
