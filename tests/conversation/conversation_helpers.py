"""Real conversations for the tests: the offline stand-in over loopback HTTP (its script
answers every user turn: turns are numbered through the conversation), toolrelay's own
file server on a folder with notes.txt, and the transcript the conversation writes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from testkit.transcripts import transcript_events
from toolrelay.client.config import builtin_file_server
from toolrelay.runner import RunOptions
from toolrelay.verify import Verdict, load_run, verify

Event = dict[str, Any]

QUESTIONS = ("What does notes.txt say?", "And its first line?", "Thanks, that is all.")
"""The three user turns: a call and an answer, another call and an answer, an answer."""
SCRIPT_TURNS: list[dict[str, Any]] = [
    {"calls": [{"name": "fs__read_text_file", "arguments": {"path": "notes.txt"}}]},
    {"message": "It lists alpha, beta and gamma."},
    {"calls": [{"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 1}}]},
    {"message": "The first line is alpha."},
    {"message": "You are welcome."},
]
ANSWERS = ("It lists alpha, beta and gamma.", "The first line is alpha.", "You are welcome.")


def conversation_folder(folder: Path, turns: list[dict[str, Any]] | None = None) -> Path:
    """``folder`` with notes.txt and the script (SCRIPT_TURNS unless ``turns``)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notes.txt").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    (folder / "script.json").write_text(json.dumps({"turns": turns or SCRIPT_TURNS}), encoding="utf-8")
    return folder


def options(folder: Path, **more: Any) -> RunOptions:
    """The offline model on ``folder``'s script, the file server on ``folder``, a transcript."""
    return RunOptions(model="offline", script=folder / "script.json", config=[builtin_file_server(folder)],
                      transcript=folder / "chat.jsonl", stream=False, **more)


def events_of(path: Path) -> list[Event]:
    return transcript_events(path)  # request bodies rebuilt from their deltas


def requests(events: list[Event]) -> dict[int, dict[str, Any]]:
    """Turn → the body of its (last) model request."""
    return {e["turn"]: e["body"] for e in events if e["kind"] == "model_request"}


def tampered(source: Path, target: Path, change: Any) -> Path:
    """A copy of the transcript at ``source`` with ``change(events)`` applied, at ``target``."""
    events = copy.deepcopy(events_of(source))
    change(events)
    target.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return target


def verdict_of(path: Path) -> Verdict:
    return verify(load_run(path))


def first_broken(verdict: Verdict) -> tuple[str, str, str]:
    """(link, check, message) of the verdict's first broken link."""
    assert verdict.broken is not None, "the verdict holds"
    return verdict.broken.link, verdict.broken.check, verdict.broken.message
