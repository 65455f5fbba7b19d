"""The test servers, one file each, run by path as subprocesses (tests and bench/ alike).

stdio MCP servers (the standard library only, unless noted):
  minimal_echo_server.py  echo(text): the cheapest possible peer (the client bench's too)
  sdk_server.py           the official SDK's MCPServer, stdio or Streamable HTTP (mcp)
  toolbox_server.py       misbehaves on request: crash, hang, huge, garbage, spawn, ...
  honest_server.py        its tools end every way a call can end, honestly
  hostile_server.py       tool names and schemas the OpenAI API dislikes
  growing_server.py       every call adds a tool (tools/list_changed)
  rug_server.py           changes its tools between runs (by env) or mid-run (pull(): the "rug pull")
  media_server.py         audio, images and blobs in results
  flood_server.py         floods toolrelay with notifications during a call
  touch_server.py         a read-only tool that touches a file when called (early-execution proof)
  capital_server.py       the recorded streams' tools (get_capital, final_result), touching a file too
  slow_server.py          a read-only tool that takes its time (the stream bench's)
  progress_server.py      reports progress and log messages during a call (honours logging/setLevel)
  offer_server.py         instructions, an outputSchema, audience annotations, a resource_link
  ledger_server.py        notes every call it runs in a ledger file (batch kill-and-resume proof)
  catalog_server.py       one of 20 realistic servers × 25 tools (github, slack, ...): the 500-tool
                          catalog of the tool search tests and benches (``--print-config``)
  echo_stdio_server.py    ``EchoService`` on toolrelay's own stdio server runtime
  asking_server.py        asks its client for roots, sampling, elicitation (also as tasks) during a call
  resource_events_server.py  resources that change (list_changed, subscribe / updated), a blob
  sdk_plain_resources_server.py  the SDK's low-level Server with resources but no templates method (mcp)
HTTP:
  echo_http_server.py     ``EchoService`` on toolrelay's own Streamable HTTP endpoint
  fake_responses.py       a stateless fake Responses endpoint (the loop bench's)
  fake_stream.py          a paced streaming Responses endpoint (the stream bench's)
  sdk_modern_server.py    the official SDK's MCPServer as a 2026-07-28-only server (slow or
                          refusing probes on request; an x-mcp-header tool, a warning log)

A script here imports nothing from the tests; ``echo_service.py`` is the one module the
scripts share, and tests import it as ``testkit.servers.echo_service``.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

SERVERS = Path(__file__).resolve().parent
MINIMAL_ECHO_SERVER = SERVERS / "minimal_echo_server.py"
SDK_SERVER = SERVERS / "sdk_server.py"
TOOLBOX_SERVER = SERVERS / "toolbox_server.py"
HONEST_SERVER = SERVERS / "honest_server.py"
HOSTILE_SERVER = SERVERS / "hostile_server.py"
GROWING_SERVER = SERVERS / "growing_server.py"
RUG_SERVER = SERVERS / "rug_server.py"
MEDIA_SERVER = SERVERS / "media_server.py"
FLOOD_SERVER = SERVERS / "flood_server.py"
TOUCH_SERVER = SERVERS / "touch_server.py"
CAPITAL_SERVER = SERVERS / "capital_server.py"
SLOW_SERVER = SERVERS / "slow_server.py"
PROGRESS_SERVER = SERVERS / "progress_server.py"
OFFER_SERVER = SERVERS / "offer_server.py"
LEDGER_SERVER = SERVERS / "ledger_server.py"
CATALOG_SERVER = SERVERS / "catalog_server.py"
ASKING_SERVER = SERVERS / "asking_server.py"
TASK_SERVER = SERVERS.parents[2] / "examples" / "task_server.py"
"""Tools that must run as MCP tasks (complete, fail, never end, ask): docs/host.md's example too."""
RESOURCE_EVENTS_SERVER = SERVERS / "resource_events_server.py"
SDK_PLAIN_RESOURCES_SERVER = SERVERS / "sdk_plain_resources_server.py"
SDK_MRTR_SERVER = SERVERS / "sdk_mrtr_server.py"
SDK_MODERN_SERVER = SERVERS / "sdk_modern_server.py"
MODERN_INPUT_SERVER = SERVERS / "modern_input_server.py"
SDK_TASKS_EXT_SERVER = SERVERS / "sdk_tasks_ext_server.py"
"""The official SDK's server with the 2026-07-28 tasks extension (SEP-2663) written to the SEP."""
FAKE_STREAM = SERVERS / "fake_stream.py"
ECHO_STDIO_SERVER = SERVERS / "echo_stdio_server.py"
ECHO_HTTP_SERVER = SERVERS / "echo_http_server.py"
FAKE_RESPONSES = SERVERS / "fake_responses.py"


def late_file_server(root: Path, delay: float = 0.5) -> dict[str, object]:
    """A config entry (``mcpServers``) for the built-in file server on ``root``, started
    ``delay`` s late: the era probe waits past ``client.era_probe.PROBE_WAIT``, so the fallback
    ``initialize`` goes out beside it every time, as it does when a real start is slow."""
    start = f"sleep {delay}; exec {shlex.quote(sys.executable)} -m toolrelay files {shlex.quote(str(root))}"
    return {"command": "/bin/sh", "args": ["-c", start]}
