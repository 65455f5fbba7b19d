"""Real runs for the proof tests, and the tools to tamper with copies of their records.

Every run is real: the offline stand-in model over loopback HTTP (its --script picks the
calls), toolrelay's own file service (in-process unless a run names its servers: the
same server session, no process to start) and/or ``testkit/servers/honest_server.py`` as
a stdio subprocess, and the transcript written by the run itself. Tests mutate copies only.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from testkit.mcp_http import files_http_process
from testkit.processes import run
from testkit.servers import HONEST_SERVER, MEDIA_SERVER
from testkit.transcripts import transcript_events
from toolrelay.client.config import ServerConfig
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.relay.loop import RunLimits, RunResult
from toolrelay.runner import RunOptions, run_async
from toolrelay.verify import Verdict, load_run, verify

TASK = "Read the first 20 lines of notes.txt"
Event = dict[str, Any]


def honest_server(name: str = "box") -> ServerConfig:
    """The stdlib server whose tools end every way a call can end."""
    return ServerConfig(name=name, transport="stdio", command=sys.executable, args=(str(HONEST_SERVER),))


def media_server(name: str = "media") -> ServerConfig:
    """The stdlib server whose results hold audio, an image of any size and a text/plain blob."""
    return ServerConfig(name=name, transport="stdio", command=sys.executable, args=(str(MEDIA_SERVER),))


def write_notes(root: Path, lines: int = 30) -> None:
    (root / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, lines + 1)), encoding="utf-8")


def real_run(
    folder: Path,
    turns: list[dict[str, Any]] | None = None,
    *,
    task: str = TASK,
    servers: list[ServerConfig] | None = None,
    chain: bool = False,
    strict: bool = False,
    max_turns: int = 10,
    media_budget: int | None = None,
    stream: bool = False,
) -> tuple[Path, RunResult]:
    """One real run in ``folder`` (notes.txt, the file service as fs); its transcript and result.
    Not streamed unless ``stream``: most checks are about whole responses, and a transcript
    without stream events is what older toolrelay versions wrote."""
    folder.mkdir(parents=True, exist_ok=True)
    write_notes(folder)
    script = None
    if turns is not None:
        script = folder / "script.json"
        script.write_text(json.dumps({"turns": turns}), encoding="utf-8")
    transcript = folder / "run.jsonl"
    options = RunOptions(
        model="offline",
        script=script,
        config=servers or [in_process_file_server(folder)],
        transcript=transcript,
        chain=chain,
        strict=strict,
        stream=stream,
        limits=RunLimits(max_turns=max_turns)
        if media_budget is None
        else RunLimits(max_turns=max_turns, media_budget=media_budget),
    )
    result = asyncio.run(run_async(task, options))
    return transcript, result


def read_events(path: Path) -> list[Event]:
    """The transcript's events, every request body whole (testkit.transcripts)."""
    return transcript_events(path)


def write_events(path: Path, events: list[Event]) -> Path:
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events), encoding="utf-8")
    return path


def tampered(source: Path, target: Path, change: Callable[[list[Event]], None]) -> Path:
    """A copy of the transcript ``source`` at ``target`` with ``change`` applied to its events."""
    events = copy.deepcopy(read_events(source))
    change(events)
    return write_events(target, events)


def tampered_folder(source: Path, target: Path, name: str, change: Callable[[Any], object]) -> Path:
    """A copy of a demo folder with one JSON file changed in place by ``change``."""
    shutil.copytree(source, target)
    path = target / name
    value = json.loads(path.read_text(encoding="utf-8"))
    change(value)
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return target


def find(events: list[Event], kind: str, **fields: Any) -> Event:
    """The first event of ``kind`` whose fields match."""
    return next(iter_events(events, kind, **fields))


def iter_events(events: list[Event], kind: str, **fields: Any) -> Iterator[Event]:
    return (e for e in events if e["kind"] == kind and all(e.get(k) == v for k, v in fields.items()))


def tool_call(events: list[Event], n: int = 0, role: str = "mcp_request") -> Event:
    """The n-th tools/call request (or response) event."""
    return list(iter_events(events, role, method="tools/call"))[n]


def model_body(events: list[Event], kind: str, turn: int) -> Any:
    """The body of the last model_request / model_response of ``turn``."""
    return list(iter_events(events, kind, turn=turn))[-1]["body"]


def findings_said(path: Path) -> list[tuple[Any, ...]]:
    """What verify says of the transcript ``path``, finding by finding (ids, words, seqs)."""
    return [(f.link, f.ok, f.check, f.turn, f.call_id, f.message, f.seqs) for f in verdict_of(path).findings]


def said_by_the_assembler(path: Path, monkeypatch: Any) -> list[tuple[Any, ...]]:
    """``findings_said`` with the streams' one pass turned off: every stream judged by the
    assembler's path (``streamed.common_stream``)."""
    from toolrelay.verify import streamed

    with monkeypatch.context() as patched:
        patched.setattr(streamed, "common_stream", lambda current, fields: None)
        return findings_said(path)


def verdict_of(path: Path) -> Verdict:
    return verify(load_run(path))


def broken_link(path: Path) -> tuple[str | None, str]:
    """(the first broken link, its message) of the run at ``path``."""
    verdict = verdict_of(path)
    return (verdict.broken.link, verdict.broken.message) if verdict.broken else (None, "")


@contextmanager
def http_file_server(root: Path, token: str) -> Iterator[str]:
    """``toolrelay files ROOT --http 0`` (bearer token required) as a subprocess; its URL."""
    with files_http_process(root, env={**os.environ, "TOOLRELAY_TOKEN": token}) as url:
        yield url


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python -m toolrelay ARGS`` as a real subprocess."""
    return run([sys.executable, "-m", "toolrelay", *args], text=True, cwd=cwd, env=env, timeout=timeout)


def edited_copies(
    source: Path, folder: Path, count: int, rng: random.Random,
    edit: Callable[[list[Event], random.Random], None],
) -> Iterator[tuple[int, Path]]:
    """``count`` copies of the transcript ``source`` in ``folder``, each with one ``edit``
    made (seeded by ``rng``): the number of each and its path."""
    original = [json.loads(line) for line in source.read_text().splitlines()]
    for number in range(count):
        events = copy.deepcopy(original)
        edit(events, rng)
        path = folder / f"edit-{number}.jsonl"
        path.write_text("".join(json.dumps(event) + "\n" for event in events))
        yield number, path


def odd_edit(kinds: tuple[str, ...] | None, odd: list[Any]) -> Callable[[list[Event], random.Random], None]:
    """An ``edited_copies`` edit: a value inside one event of ``kinds`` (None: of any kind;
    picked by the seeded ``rng``) replaced with one of ``odd``, or removed from its object."""

    def edit(events: list[Event], rng: random.Random) -> None:
        event = rng.choice(events if kinds is None else [e for e in events if e["kind"] in kinds])
        path = rng.choice(_paths(event)[1:])
        parent: Any = event
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and rng.random() < 0.3:
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(odd))

    return edit


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found += _paths(item, (*path, key))
    return found


def modern_files_run(folder: Path, files: dict[str, str], task: str, script: dict[str, Any]) -> Path:
    """``toolrelay run TASK`` for real against toolrelay's own file server pinned to
    2026-07-28 over stdio (each tools/call answered input_required for the roots, then
    retried), ``files`` in its root; the transcript."""
    root = folder / "root"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    server = {"command": sys.executable, "args": ["-m", "toolrelay", "files", str(root)],
              "toolrelay": {"roots": [str(root)]}}
    config = {"mcpServers": {"files": server}}
    (folder / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "script.json").write_text(json.dumps(script), encoding="utf-8")
    proc = run_cli("run", task, "--config", "mcp.json", "--model", "offline", "--script", "script.json",
                   "--protocol-version", "2026-07-28", "--quiet", "--transcript", "run.jsonl", cwd=folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder / "run.jsonl"
