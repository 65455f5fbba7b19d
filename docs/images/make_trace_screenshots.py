"""Regenerate the README's pictures of a traced run: the trace in Arize Phoenix, a real
OpenTelemetry trace viewer, and the same run in ``toolrelay view``.

Phoenix is not a dependency of toolrelay: install it in a throwaway venv and serve it on
loopback first (it takes OTLP/HTTP traces on its UI port, at ``/v1/traces``):

    python -m venv /tmp/phoenix-venv && /tmp/phoenix-venv/bin/pip install arize-phoenix
    PHOENIX_HOST=127.0.0.1 PHOENIX_PORT=6006 PHOENIX_WORKING_DIR=$(mktemp -d) \
        /tmp/phoenix-venv/bin/phoenix serve &
    .venv/bin/python docs/images/make_trace_screenshots.py          # writes docs/images/*.png

In a scratch folder with a ``notes.txt`` it runs the Quickstart's run for real,
``toolrelay run "Read the first 3 lines of notes.txt" --model offline --otel``, with the
file server as a stdio server that traces too (``toolrelay files . --otel``), both
exporting to Phoenix, the run's spans also written with ``--otel-file``. It waits until
Phoenix holds every span of that trace, opens the trace in the system Chromium (headless,
through Playwright), selects the ``execute_tool`` span and saves the window
(``phoenix-trace.png``); then draws the run's transcript with ``toolrelay view`` and saves
the call's side panel with its trace and span ids (``view-call-span.png``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.view.helpers import chromium_context, open_trace  # noqa: E402

TASK = "Read the first 3 lines of notes.txt"
PROJECT = "toolrelay-demo"
VIEWPORT = {"width": 1400, "height": 860}
TOOLRELAY = [sys.executable, "-m", "toolrelay"]


def traced_run(folder: Path, phoenix: str) -> str:
    """The Quickstart's run, traced to ``phoenix``; its trace id."""
    (folder / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 31)), encoding="utf-8")
    exporting = {"OTEL_EXPORTER_OTLP_ENDPOINT": phoenix, "OTEL_METRICS_EXPORTER": "none",  # no metrics there
                 "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={PROJECT}"}
    server = {"command": sys.executable, "args": ["-m", "toolrelay", "files", ".", "--otel"],
              "env": exporting}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"notes": server}}), encoding="utf-8")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}, **exporting}
    done = subprocess.run([*TOOLRELAY, "run", TASK, "--config", "mcp.json", "--model", "offline",
                           "--transcript", "run.jsonl", "--otel", "--otel-file", "spans.jsonl"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"toolrelay run failed: {done.stderr}")
    [trace_id] = {span["traceId"] for span in exported_spans(folder)}
    return str(trace_id)


def exported_spans(folder: Path) -> list[dict[str, Any]]:
    """The spans the run wrote with ``--otel-file`` (OTLP JSON, one export a line)."""
    exports = [json.loads(line) for line in (folder / "spans.jsonl").read_text().splitlines()]
    return [span for export in exports for resource in export.get("resourceSpans", ())
            for scope in resource["scopeSpans"] for span in scope["spans"]]


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())


def project_id(phoenix: str, trace_id: str, spans: int, timeout: float = 30.0) -> str:
    """Phoenix's id of the demo project, once it holds the trace's ``spans`` spans (both
    processes')."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        projects = {p["name"]: p["id"] for p in get_json(f"{phoenix}/v1/projects")["data"]}
        if PROJECT in projects:
            found = get_json(f"{phoenix}/v1/projects/{PROJECT}/spans?limit=1000")["data"]
            if sum(span["context"]["trace_id"] == trace_id for span in found) >= spans:
                return str(projects[PROJECT])
        time.sleep(0.5)
    raise SystemExit(f"Phoenix at {phoenix} did not receive the run's {spans} spans")


def phoenix_screenshot(phoenix: str, project: str, trace_id: str, out: Path) -> None:
    with chromium_context(VIEWPORT) as context:
        page = context.new_page()
        page.goto(f"{phoenix}/projects/{project}/traces/{trace_id}")
        page.get_by_text("execute_tool read_text_file").first.click()
        page.wait_for_timeout(2500)  # the span's details load after the click
        page.mouse.move(0, 0)  # no hover highlight in the picture
        page.screenshot(path=str(out))


def view_screenshot(folder: Path, out: Path) -> None:
    html = folder / "run.html"
    done = subprocess.run([*TOOLRELAY, "view", "run.jsonl", "-o", str(html)], cwd=folder,
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"toolrelay view failed: {done.stderr}")
    with chromium_context(VIEWPORT) as context:
        opened = open_trace(context, html)
        page = opened.page
        page.click('.row.msg[data-kind="mcp_request"]:has-text("tools/call")')
        page.wait_for_selector("#panel:not([hidden])")
        page.evaluate("window.scrollTo(0, 0)")
        page.mouse.move(0, 0)
        page.screenshot(path=str(out))
        problems = [*opened.foreign_requests(), *opened.errors]
        if problems:
            raise SystemExit(f"the page fetched or logged something: {problems}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phoenix", default="http://127.0.0.1:6006", help="the Phoenix server (UI and OTLP)")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images", help="the folder of the PNGs")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="toolrelay-traced-") as scratch:
        folder = Path(scratch)
        trace_id = traced_run(folder, args.phoenix)
        spans = len(exported_spans(folder)) + 1  # and the file server's tools/call span
        project = project_id(args.phoenix, trace_id, spans)
        phoenix_screenshot(args.phoenix, project, trace_id, args.out / "phoenix-trace.png")
        view_screenshot(folder, args.out / "view-call-span.png")
    for name in ("phoenix-trace.png", "view-call-span.png"):
        print(f"{args.out / name}: {(args.out / name).stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
