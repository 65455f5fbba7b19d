"""Shared set-up for the trace view tests: real runs, the view command, headless Chromium.

Runs are real: the ``toolrelay run`` CLI with the offline stand-in model (a real HTTP
Responses server on loopback) and the built-in file server over stdio. Pages are opened
from disk in the system's Chromium through Playwright, with a fresh profile and every
background network feature off, so any request the page makes is its own.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolrelay.transcript.reader import read_transcript

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / ".artifacts"
TOOLRELAY = [sys.executable, "-m", "toolrelay"]
MESSAGE_KINDS = frozenset({  # what the page must draw as arrows (events.py: McpMessage roles)
    "model_request", "model_response", "mcp_request", "mcp_response", "mcp_notification",
    "mcp_server_request", "mcp_reply", "mcp_unpaired",
})
SEED_TASK = "Read the first 20 lines of notes.txt"
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def chromium_path() -> str | None:
    """The system Chromium (Debian's ``chromium``, or ``chromium-browser``), if installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def chromium_context(viewport: dict[str, int] | None = None) -> Iterator[Any]:
    """A Playwright browser context on the system Chromium with a fresh user-data dir.

    Raises whatever Playwright raises when Chromium is missing or cannot start."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    if executable is None:
        raise FileNotFoundError("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="toolrelay-chromium-") as profile, \
            sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=executable, headless=True, args=CHROMIUM_ARGS,
            viewport=viewport or {"width": 1400, "height": 1000},
        )
        try:
            yield context
        finally:
            context.close()


def write_notes(folder: Path, lines: int = 30) -> None:
    (folder / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, lines + 1)), encoding="utf-8")


def real_run(folder: Path, task: str = SEED_TASK, *, script: dict[str, Any] | None = None,
             max_turns: int | None = None, stream: bool = False) -> Path:
    """Run ``task`` for real in ``folder`` (offline model, built-in file server); the transcript.
    Not streamed unless ``stream`` (calls then start in the order they are read). In the
    seed's 2025 revision: these tests draw its rows (2026-07-28's rounds: test_view_input_rounds.py)."""
    args = [*TOOLRELAY, "run", task, "--model", "offline", "--transcript", "run.jsonl", "--quiet",
            "--protocol-version", "2025-06-18"]
    if not stream:
        args.append("--no-stream")
    if script is not None:
        (folder / "script.json").write_text(json.dumps(script), encoding="utf-8")
        args += ["--script", "script.json"]
    if max_turns is not None:
        args += ["--max-turns", str(max_turns)]
    proc = subprocess.run(args, cwd=folder, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    transcript = folder / "run.jsonl"
    assert transcript.exists(), proc.stderr
    return transcript


def demo(folder: Path) -> Path:
    """``toolrelay demo --out DEMO``: the seed's scenario for real, its attachments and
    transcript in ``folder / "demo"``."""
    out = folder / "demo"
    proc = subprocess.run([*TOOLRELAY, "demo", "--out", str(out)], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    return out


def view(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None
         ) -> subprocess.CompletedProcess[str]:
    """``toolrelay view ARGS`` as a subprocess."""
    return subprocess.run([*TOOLRELAY, "view", *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env=env, cwd=cwd)


def read_events(path: Path) -> list[dict[str, Any]]:
    """The transcript's events, every request body whole, each event its own copy (the
    rebuilt bodies share their items; docs/make_screenshot.py imports this without testkit)."""
    return [copy.deepcopy(event) for event in read_transcript(path).events]


def write_events(path: Path, events: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events), encoding="utf-8")
    return path


def message_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events the page draws as arrows: model requests/responses and JSON-RPC messages."""
    return [e for e in events if e["kind"] in MESSAGE_KINDS]


@dataclass
class OpenedPage:
    """A trace page loaded in Chromium, with every request it made and every error it logged."""

    page: Any
    url: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def foreign_requests(self) -> list[str]:
        return [url for url in self.requests if url != self.url]


def open_trace(context: Any, html: Path) -> OpenedPage:
    page = context.new_page()
    opened = OpenedPage(page=page, url=html.resolve().as_uri())
    page.on("request", lambda request: opened.requests.append(request.url))
    page.on("console", lambda line: opened.errors.append(line.text) if line.type == "error" else None)
    page.on("pageerror", lambda error: opened.errors.append(str(error)))
    page.goto(opened.url)
    page.wait_for_selector(".lanes .lane")
    return opened


def screenshot(page: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)


def read_as_the_page_does(data: dict[str, Any]) -> dict[str, Any]:
    """``trace.js``'s ``withDefaults`` and ``recordText`` in Python: every row, call and
    stream group with its left-out fields back, every record's text joined again."""
    data = json.loads(json.dumps(data))
    defaults = data.pop("defaults")

    def fill(item: dict[str, Any]) -> None:
        for name, value in defaults[item["type"]].items():
            item.setdefault(name, [] if isinstance(value, list) else value)
        for row in item.get("rows", []) if item["type"] != "row" else []:
            fill(row)

    for group in data["groups"]:
        for item in group["items"]:
            fill(item)
    data["records"] = {int(seq): _joined(data["records"], seq) for seq in data["records"]}
    return data


def _joined(records: dict[str, Any], seq: str) -> str:
    entry = records[seq]
    if isinstance(entry, str):
        return entry
    base_seq, head, tail, middle = entry
    base = _joined(records, str(base_seq)).encode("utf-16-le", "surrogatepass")  # JavaScript's units
    text = base[: 2 * head] + middle.encode("utf-16-le", "surrogatepass") + base[len(base) - 2 * tail:]
    return text.decode("utf-16-le", "surrogatepass")
