"""``toolrelay demo``: the seed's scenario run for real, written out as its attachments.

A temporary workspace gets a ``notes.txt`` of more than 20 lines; the built-in file
server serves it as ``fs``; the model (the offline stand-in by default, or a real one) is
asked for the first 20 lines. The run's transcript is kept, and the seed's attachments
are written from it — the exact messages of that run, not illustrations: the model
requests and responses of each turn, the MCP request and response of the call, the
round-trip bundle and the field fragments. That run asks for whole responses, so each
file is the seed's exact JSON.

The stream is extra: the same walk-through is then run again as ``toolrelay run`` runs
it, streamed, into ``streamed/``: its transcript (every server-sent event as received)
and each turn's stream as the event-stream text it arrived as (``response_N.sse``). A
second run, not the first one streamed: a streamed request says ``"stream": true``, so
its request files could not be the seed's and still be the bytes sent. The folder is then
verified as a folder, ``streamed/`` with it, so the files themselves are what is checked.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from .client.config import builtin_file_server
from .errors import UsageError, os_reason
from .events import EventStream
from .protocol.versions import SEED_VERSION
from .relay.loop import RunResult
from .runner import OFFLINE_MODEL, RunOptions, check_options, run_async
from .verify import RunRecord, Verdict, load_run, verify
from .verify.attachments import (
    FIELD_FRAGMENTS,
    ROUNDTRIP,
    STREAMED,
    TRANSCRIPT,
    bundles,
    executed,
    is_attachment,
    slots,
)
from .verify.stream_files import STREAM_FILE, sse_text, stream_files

__all__ = [
    "DEFAULT_OUT",
    "DEMO_TASK",
    "STANDALONE_CHECKS",
    "DemoResult",
    "notes_text",
    "run_demo",
    "standalone_check",
    "write_attachments",
    "write_stream_files",
]

DEMO_TASK: Final = "Read the first 20 lines of notes.txt"
DEFAULT_OUT: Final = "toolrelay-demo"
NOTES_LINES: Final = 30
STANDALONE_CHECKS: Final = ("verify_roundtrip.py", "verify_fields.py")
"""Scripts that check a demo folder with the standard library only (no toolrelay import)."""


def standalone_check(name: str) -> Path:
    """Where a standalone check ships: the package's ``examples`` folder, installed or not."""
    return Path(__file__).resolve().parent / "examples" / name


@dataclass(slots=True, kw_only=True)
class DemoResult:
    """The run, the folder written from it, and the folder's verdict."""

    out: Path
    result: RunResult
    run: RunRecord
    verdict: Verdict
    files: list[str]
    streamed: RunResult
    """The walk-through run again, streamed (written to ``out/streamed``)."""
    stream_files: list[str]

    @property
    def called(self) -> bool:
        """Whether the seed's call happened: a tools/call reached the file server."""
        return bool(executed(self.run))

    @property
    def ok(self) -> bool:
        return self.result.completed and self.streamed.completed and self.called and self.verdict.ok


def notes_text() -> str:
    """The workspace's notes.txt: more than 20 numbered lines, so head 20 is a real cut."""
    return "".join(f"note {n:02d}: line {n} of the demo's notes.txt\n" for n in range(1, NOTES_LINES + 1))


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _prepare_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        clear_folder(folder)
    except OSError as exc:
        raise UsageError(f"cannot write the demo folder {folder}: {os_reason(exc)}") from None


def clear_folder(out: Path) -> None:
    """Remove a previous demo's files (only those: other files in DIR are left alone)."""
    for path in out.iterdir() if out.is_dir() else []:
        if path.is_file() and (is_attachment(path.name) or path.name in (ROUNDTRIP, FIELD_FRAGMENTS)):
            path.unlink()
    streamed = out / STREAMED
    for path in streamed.iterdir() if streamed.is_dir() else []:
        if path.is_file() and STREAM_FILE.match(path.name) is not None:
            path.unlink()


def write_attachments(run: RunRecord, out: Path) -> list[str]:
    """Write every attachment of ``run`` into ``out``; the file names, in order."""
    names: list[str] = []
    for slot in slots(run):
        (out / slot.name).write_text(_dump(slot.value), encoding="utf-8")
        names.append(slot.name)
    for name, bundle in bundles(run).items():
        (out / name).write_text(_dump(bundle), encoding="utf-8")
        names.append(name)
    return [*names, TRANSCRIPT]


def write_stream_files(run: RunRecord, out: Path) -> list[str]:
    """Write each streamed turn of ``run`` into ``out`` as ``response_N.sse``; the folder's
    file names (its transcript first)."""
    names: list[str] = []
    for name, events in stream_files(run).items():
        (out / name).write_text(sse_text(events), encoding="utf-8")
        names.append(name)
    return [TRANSCRIPT, *names]


def run_demo(
    out: str | Path = DEFAULT_OUT,
    *,
    model: str = OFFLINE_MODEL,
    base_url: str | None = None,
    events: EventStream | None = None,
    environ: Mapping[str, str] | None = None,
    tracer_provider: Any = None,
) -> DemoResult:
    """Run the read_text_file walk-through, write each of its messages into ``out``, run
    it again streamed into ``out/streamed``, and verify the folder (each run a trace, with
    ``tracer_provider``). A usage error (no API key for a hosted model) creates nothing."""
    folder = Path(out)
    streamed_folder = folder / STREAMED
    with tempfile.TemporaryDirectory(prefix="toolrelay-demo-") as workspace:
        root = Path(workspace)
        options = RunOptions(
            model=model,
            base_url=base_url,
            config=[builtin_file_server(root)],
            # the walk-through's files are the whole request and response of each turn,
            # as the seed shows them: asked for without streaming, and without the file
            # server's instructions (the seed's request has none)
            stream=False,
            server_instructions=False,
            protocol_version=SEED_VERSION,  # the seed's revision: its files stay the seed's
            transcript=folder / TRANSCRIPT,
            events=events,
            environ=environ,
            tracer_provider=tracer_provider,
        )
        check_options(options)
        _prepare_folder(folder)
        (root / "notes.txt").write_text(notes_text(), encoding="utf-8")
        result = asyncio.run(run_async(DEMO_TASK, options))
        files = write_attachments(load_run(folder / TRANSCRIPT), folder)
        again = replace(options, stream=True, transcript=streamed_folder / TRANSCRIPT)
        streamed = asyncio.run(run_async(DEMO_TASK, again))
    stream_names = write_stream_files(load_run(streamed_folder / TRANSCRIPT), streamed_folder)
    run = load_run(folder)
    return DemoResult(out=folder, result=result, run=run, verdict=verify(run), files=files,
                      streamed=streamed, stream_files=stream_names)
