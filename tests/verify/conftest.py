"""Real runs shared by the proof tests: each made once per session, then only copied.

Every run ends honestly in its own way (a tool error, invalid arguments, a crashed
server, max turns, chain mode, strict mode, parallel calls, a changed tool list...), so
each must verify clean, and each tampered copy must fail on the right link.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolrelay.client.config import builtin_file_server

from .helpers import honest_server, media_server, real_run


def _read(path: str, **arguments: Any) -> dict[str, Any]:
    return {"name": "fs__read_text_file", "arguments": {"path": path, **arguments}}


def _box(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": f"box__{tool}", "arguments": arguments}


def _media(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": f"media__{tool}", "arguments": arguments}


RUNS: dict[str, dict[str, Any]] = {
    "seed_run": {},
    "tool_error_run": {"turns": [{"calls": [_read("missing.txt")]}]},
    "invalid_run": {
        "turns": [
            {
                "calls": [
                    {"name": "fs__read_text_file", "arguments_text": "{not json"},
                    _read("notes.txt", head="twenty"),
                    {"name": "fs__delete_everything", "arguments": {}},
                ]
            }
        ]
    },
    "crash_run": {"turns": [{"calls": [_box("crash")]}], "box": True},
    "errors_run": {
        "turns": [
            {"calls": [_box("fail", text="x"), _box("reject"), _box("picture"), _box("write", text="t")]}
        ],
        "box": True,
    },
    "change_run": {"turns": [{"calls": [_box("change")]}, {"calls": [_box("added")]}], "box": True},
    "max_turns_run": {"max_turns": 1},
    "chain_run": {
        "chain": True,
        "turns": [{"calls": [_read("notes.txt", head=2)]}, {"calls": [_read("notes.txt", tail=2)]}],
    },
    "strict_run": {"strict": True, "turns": [{"calls": [_read("notes.txt", head=20, tail=None)]}]},
    "parallel_run": {
        "turns": [{"reasoning": "three reads", "calls": [_read("notes.txt", head=n) for n in (1, 2, 3)]}]
    },
    "many_calls_run": {"turns": [{"calls": [_read("notes.txt", head=n) for n in range(1, 8)]}]},
    "media_run": {
        "turns": [
            {"calls": [_media("sound"), _media("photo", kb=1), _media("photo", kb=300), _media("note")]}
        ],
        "media": True,
        "media_budget": 100_000,
    },
    "streamed_run": {"stream": True},
    "streamed_parallel_run": {
        "stream": True,
        "turns": [{"reasoning": "two reads", "calls": [_read("notes.txt", head=1), _read("todo.md")]},
                  {"message": "both read"}],
    },
    "streamed_errors_run": {
        "stream": True,
        "turns": [{"calls": [_box("fail", text="x"), _box("write", text="t")]}],
        "box": True,
    },
    "duplicate_call_id_run": {  # the repeat of call_id "dup" is refused, not run
        "turns": [{"calls": [{**_read("notes.txt", head=1), "call_id": "dup"}, _read("notes.txt", tail=1),
                             {**_read("todo.md"), "call_id": "dup"}]}]
    },
}


def _make(name: str, factory: pytest.TempPathFactory) -> Path:
    settings = dict(RUNS[name])
    folder = factory.mktemp(name)
    servers = [honest_server(), builtin_file_server(folder)] if settings.pop("box", False) else None
    servers = [media_server(), builtin_file_server(folder)] if settings.pop("media", False) else servers
    transcript, _ = real_run(folder, servers=servers, **settings)
    return transcript


@pytest.fixture(scope="session")
def made_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Runs made on first use, kept for the session (name → transcript path)."""
    return {}


@pytest.fixture
def run_named(made_runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``run_named("crash_run")`` → the transcript of that real run (made once)."""

    def get(name: str) -> Path:
        if name not in made_runs:
            made_runs[name] = _make(name, tmp_path_factory)
        return made_runs[name]

    return get


@pytest.fixture
def seed_run(run_named: Any) -> Path:
    path: Path = run_named("seed_run")
    return path
