"""Request bytes with the 500-tool catalog: what turn 1 and the whole run send to the model,
``--declare flat`` vs ``namespaces`` vs ``--tool-search hosted`` vs ``client``, beside what
the OpenAI Agents SDK sends for the same 500 MCP tools.

The servers are ``tests/testkit/servers/catalog_server.py``'s 20 (github, slack, calendar,
... × 25 tools). The model is toolrelay's offline stand-in on loopback, which counts each
request body's bytes as received. The task needs two tools on two servers
(``github.search_issues``, ``slack.send_message``); each mode runs the same scripted model:

  flat        every tool a ``server__tool`` function; the model calls at once, then answers
  namespaces  one namespace per server, every tool in it; the same calls
  hosted      every tool in its namespace with ``defer_loading: true`` plus ``tool_search``:
              the API (here the stand-in) searches and loads within the response, the calls
              follow. Hosted deferral still sends every definition for the API to load from:
              it saves the model's context, not request bytes
  client      only a client ``tool_search`` tool: the model searches, toolrelay answers with
              the best matches of its own index, the next response calls them
  agents      the Agents SDK (``openai-agents``, in the bench venv ``setup_peers.py`` makes):
              20 ``MCPServerStdio`` with ``include_server_in_tool_names``; its turn 1 (the
              stand-in then answers without a call, so only turn 1 compares)

Goal: ``client``'s turn 1 ≤ 10% of ``flat``'s bytes. Byte counts are deterministic: one run
each, so BENCH_QUICK changes nothing here. The stand-in's token counts are estimates, so
none are reported.

    python bench/request_bytes_bench.py                 every mode and the Agents SDK
    options: --no-agents (skip the SDK), --servers N, --json-out FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from agents_catalog import agents_catalog_run
from common import BENCH_DIR, TEST_SERVERS, append_jsonl, arg_parser, print_ratios, print_table, ratio

TASK = "Find the github issue about the login bug and tell #general on slack about it"
ARGUMENTS = ({"owner": "acme", "repo": "web", "query": "login bug"},
             {"channel_id": "C1", "text": "login bug: #12"})
QUERY = "search github issues, send a slack message"
API_KEY = "sk-fake-bench"


def _calls(flat: bool) -> list[dict[str, Any]]:
    named = (("github", "search_issues"), ("slack", "send_message"))
    if flat:
        return [{"name": f"{server}__{tool}", "arguments": arguments}
                for (server, tool), arguments in zip(named, ARGUMENTS, strict=True)]
    return [{"namespace": server, "name": tool, "arguments": arguments}
            for (server, tool), arguments in zip(named, ARGUMENTS, strict=True)]


ANSWER = {"message": "Found the issue and told #general."}
SCRIPTS: dict[str, dict[str, Any]] = {
    "flat": {"turns": [{"calls": _calls(True)}, ANSWER]},
    "namespaces": {"turns": [{"calls": _calls(False)}, ANSWER]},
    "hosted": {"turns": [{"search": {"query": QUERY, "limit": 6}, "calls": _calls(False)}, ANSWER]},
    "client": {"turns": [{"search": {"query": QUERY, "limit": 6}}, {"calls": _calls(False)}, ANSWER]},
}
OPTIONS: dict[str, dict[str, str]] = {
    "flat": {}, "namespaces": {"declare": "namespaces"}, "hosted": {"tool_search": "hosted"},
    "client": {"tool_search": "client"},
}


def toolrelay_bytes(config: Path, mode: str) -> dict[str, Any]:
    """One scripted toolrelay run in ``mode``: each request's bytes."""
    from toolrelay.offline import OfflineModel
    from toolrelay.offline.script import parse_script
    from toolrelay.relay.stages.consent import approve_all
    from toolrelay.runner import RunOptions, run_async

    with OfflineModel(parse_script(SCRIPTS[mode])) as model:
        options = RunOptions(model="gpt-5.4", base_url=model.base_url, api_key=None, config=config,
                             environ={}, approve=approve_all, **OPTIONS[mode])  # type: ignore[arg-type]
        result = asyncio.run(run_async(TASK, options))
        if result.status != "completed" or [c.status for c in result.calls] != ["ok", "ok"]:
            raise RuntimeError(f"{mode}: the run did not go as scripted: {result.status} {result.reason}")
        return {"requests": list(model.request_bytes)}


async def agents_peer(entries: dict[str, dict[str, Any]], base_url: str) -> str:
    return await agents_catalog_run(entries, base_url, task=TASK, model="gpt-5.4", api_key=API_KEY)


def agents_bytes(config: Path) -> dict[str, Any] | None:
    """The Agents SDK's requests for the same servers (None: its bench venv is not there)."""
    from toolrelay.offline import OfflineModel

    try:
        from setup_peers import bench_python

        python = str(bench_python())
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"# the Agents SDK is not measured: its bench venv cannot be set up ({exc})", file=sys.stderr)
        return None
    with OfflineModel() as model:
        command = [python, str(BENCH_DIR / "request_bytes_bench.py"), "--agents-peer", str(config),
                   model.base_url]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "OPENAI_API_KEY": API_KEY})
        if done.returncode != 0:
            raise RuntimeError(f"the Agents SDK run failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return {"requests": list(model.request_bytes)}


Table = dict[str, dict[str, float | None]]


def report(found: dict[str, dict[str, Any]]) -> tuple[Table, dict[str, float | None]]:
    table: Table = {
        label: {"requests": len(record["requests"]), "turn_1_bytes": record["requests"][0],
                "run_bytes": sum(record["requests"]) if label != "agents" else None}
        for label, record in found.items()
    }
    print_table(table, title="request bytes (the stand-in counts each body as received)")
    flat = table["flat"]
    ratios: dict[str, float | None] = {
        f"{mode} / flat, turn 1" + (" (goal <= 0.10)" if mode == "client" else ""):
            ratio(table[mode]["turn_1_bytes"], flat["turn_1_bytes"])
        for mode in ("namespaces", "hosted", "client")
    }
    ratios.update({f"{mode} / flat, whole run": ratio(table[mode]["run_bytes"], flat["run_bytes"])
                   for mode in ("namespaces", "hosted", "client")})
    if "agents" in table:
        ratios["agents / flat, turn 1"] = ratio(table["agents"]["turn_1_bytes"], flat["turn_1_bytes"])
        agents = table["agents"]["turn_1_bytes"]
        ratios["client / agents, turn 1"] = ratio(table["client"]["turn_1_bytes"], agents)
    print()
    print_ratios(ratios)
    return table, ratios


def main() -> None:
    parser = arg_parser(__doc__)
    parser.add_argument("--servers", type=int, default=20, help="how many catalog servers (25 tools each)")
    parser.add_argument("--no-agents", action="store_true", help="do not measure the Agents SDK")
    parser.add_argument("--json-out", help="append the summary as one JSON line")
    parser.add_argument("--agents-peer", nargs=2, metavar=("CONFIG", "URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.agents_peer:
        config, base_url = args.agents_peer
        print(asyncio.run(agents_peer(json.loads(Path(config).read_text())["mcpServers"], base_url)))
        return
    sys.path.insert(0, str(TEST_SERVERS))
    import catalog_server

    with tempfile.TemporaryDirectory(prefix="request-bytes-") as folder:
        config = Path(folder) / "catalog.json"
        config.write_text(json.dumps(catalog_server.config(sys.executable, args.servers)))
        found = {mode: toolrelay_bytes(config, mode) for mode in SCRIPTS}
        peer = None if args.no_agents else agents_bytes(config)
        if peer is not None:
            found["agents"] = peer
    table, ratios = report(found)
    append_jsonl(args.json_out, {"bench": "request_bytes", "servers": args.servers, "table": table,
                                 "ratios": ratios, "records": found})


if __name__ == "__main__":
    main()
