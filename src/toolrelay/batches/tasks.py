"""The batch file: one task per line, ``{"id": "t1", "task": "…"}`` plus optional overrides.

A line's overrides replace the batch's run options for that task only: ``model``,
``instructions``, ``max_turns``, ``max_tool_calls``, ``timeout``, ``tool_choice``,
``prompt_cache_key``, ``compact_at`` (tokens: ``--compact-at``) and ``script`` (the
stand-in's script, a path relative to the tasks file), and the task's own endpoint:
``base_url``, ``api`` (``responses``, ``chat``, ``auto``) and ``api_key_env`` (the name of
the environment variable holding its key, never the key: a rollout gateway's per-session
URL and key), and the sampling fields sent in its request bodies: ``temperature``,
``top_p``, ``seed``, ``max_output_tokens``, ``top_logprobs``
(``batches.sampling``), and ``request_settings``: an object of body fields merged over
the batch's ``--request-settings`` (``assembly.request_file``: the same checks; its sampling
fields are the task's own). Ids are unique names of a
transcript file (letters, digits, ``.``, ``_``, ``-``); a duplicate id is a usage error
naming both lines, found before any task runs. Any other bad line (not JSON, no task, an
unknown key, a wrong type) is reported with its line number and skipped.

``TaskFile(path)`` reads the file once to check it (holding only the ids), and yields the
tasks when iterated, reading it again line by line: memory does not grow with the file.
``task_specs(rows)`` does the same for tasks given as dicts (the library).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..assembly.options import OFFLINE_MODEL
from ..assembly.request_file import loop_names
from ..errors import UsageError, os_reason
from ..protocol.json_depth import loads
from .sampling import SAMPLING, check_sampling

__all__ = ["OVERRIDES", "TaskFile", "TaskSpec", "names_its_endpoint", "task_specs"]

_ID: Final = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$")
_COUNTS: Final = ("max_turns", "max_tool_calls", "compact_at")
_TEXTS: Final = ("model", "instructions", "tool_choice", "script", "prompt_cache_key", "base_url",
                  "api_key_env")
_APIS: Final = ("responses", "chat", "auto")
_SETTINGS: Final = "request_settings"
OVERRIDES: Final = frozenset({*_COUNTS, *_TEXTS, *SAMPLING, "timeout", "api", _SETTINGS})
"""The run options a task line may set for itself."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskSpec:
    """One task of a batch: its id, its text and the run options it overrides."""

    id: str
    task: str
    line: int = 0
    """Where it is in the tasks file (0: given by a program)."""
    overrides: Mapping[str, Any] = field(default_factory=dict)
    """Option name → value; ``script`` already resolved against the tasks file's folder."""


class _BadLine(ValueError):
    """Internal: why one line is not a task (reported and skipped)."""


def parse_task(row: Any, *, line: int = 0, base: Path | None = None) -> TaskSpec:
    """A task from one parsed line; ``_BadLine`` says why it is not one."""
    if not isinstance(row, Mapping):
        raise _BadLine('expected an object {"id": ..., "task": ...}')
    unknown = sorted(set(row) - {"id", "task"} - OVERRIDES)
    if unknown:
        raise _BadLine(f"unknown key {unknown[0]!r} (a task has id, task and {', '.join(sorted(OVERRIDES))})")
    task_id, text = row.get("id"), row.get("task")
    if not isinstance(task_id, str) or not _ID.match(task_id):
        raise _BadLine(f"id must be a name of letters, digits, '.', '_' or '-' (up to 128), got {task_id!r}")
    if not isinstance(text, str) or not text.strip():
        raise _BadLine(f"task {task_id}: task must be a non-empty string")
    overrides = {key: _override(key, row[key], task_id) for key in sorted(OVERRIDES & set(row))}
    twice = sorted(set(SAMPLING) & set(row) & set(overrides.get(_SETTINGS, ())))
    if twice:
        raise _BadLine(f"task {task_id}: {twice[0]} is given twice, in the line and in its request_settings: "
                       "give it once")
    if "script" in overrides:
        script = Path(overrides["script"])
        overrides["script"] = str(script if script.is_absolute() or base is None else base / script)
    return TaskSpec(id=task_id, task=text, line=line, overrides=overrides)


def _override(key: str, value: Any, task_id: str) -> Any:
    if key in _COUNTS:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise _BadLine(f"task {task_id}: {key} must be a whole number of at least 1, got {value!r}")
    elif key == "api":
        if value not in _APIS:
            raise _BadLine(f"task {task_id}: api must be one of {', '.join(_APIS)}, got {value!r}")
    elif key == _SETTINGS:
        if not isinstance(value, Mapping):
            raise _BadLine(f"task {task_id}: request_settings must be an object of request body fields, "
                           f"got {value!r}")
        try:
            return loop_names(value, f"task {task_id}: request_settings")
        except UsageError as bad:
            raise _BadLine(str(bad)) from None
    elif key in SAMPLING:
        if (why := check_sampling(key, value, task_id)) is not None:
            raise _BadLine(why)
    elif key == "timeout":
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise _BadLine(f"task {task_id}: timeout must be a number of seconds above 0, got {value!r}")
    elif not isinstance(value, str) or not value:
        raise _BadLine(f"task {task_id}: {key} must be a non-empty string, got {value!r}")
    return value


class TaskFile:
    """A tasks file, checked: ``count`` tasks, ``problems`` (bad lines, each with its number)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.problems: list[str] = []
        self.count = 0
        self.first_without_endpoint: str | None = None
        """Where the first task that names no endpoint of its own is (``endpoints``), or None."""
        first_line: dict[str, int] = {}
        for number, row in self._rows():
            try:
                spec = _checked(row, number, self.path.parent)
            except _BadLine as bad:
                self.problems.append(f"{self.path}:{number}: {bad}; skipped")
                continue
            if spec.id in first_line:
                raise UsageError(
                    f"{self.path}: task id {spec.id!r} is on line {first_line[spec.id]} and line {number}; "
                    "ids must be unique (each names its transcript and its line in results.jsonl)"
                )
            first_line[spec.id] = number
            self.count += 1
            if self.first_without_endpoint is None and not names_its_endpoint(spec.overrides):
                self.first_without_endpoint = f"{self.path}:{number} (task {spec.id})"

    def __iter__(self) -> Iterator[TaskSpec]:
        for number, row in self._rows():
            try:
                yield _checked(row, number, self.path.parent)
            except _BadLine:
                continue  # reported when the file was checked

    def _rows(self) -> Iterator[tuple[int, Any]]:
        """(line number, parsed JSON or a _BadLine) for each line that is not blank."""
        try:
            with self.path.open(encoding="utf-8") as lines:
                for number, text in enumerate(lines, 1):
                    if text.strip():
                        yield number, _json(text)
        except OSError as exc:
            raise UsageError(f"cannot read the tasks file {self.path}: {os_reason(exc)}") from None
        except UnicodeDecodeError:
            raise UsageError(f"the tasks file {self.path} is not UTF-8 text") from None


def names_its_endpoint(overrides: Mapping[str, Any]) -> bool:
    """Whether a task's overrides name the endpoint it asks (so the batch's is not needed)."""
    return "base_url" in overrides or overrides.get("model") == OFFLINE_MODEL


def _json(text: str) -> Any:
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        return _NotJson(f"not a JSON line: {exc.msg} (column {exc.colno})")


class _NotJson:
    """A line that did not parse: ``parse_task`` reports it."""

    def __init__(self, why: str) -> None:
        self.why = why


def _checked(row: Any, line: int, base: Path | None) -> TaskSpec:
    if isinstance(row, _NotJson):
        raise _BadLine(row.why)
    return parse_task(row, line=line, base=base)


def task_specs(
    rows: Iterable[Mapping[str, Any] | TaskSpec], *, base: Path | None = None
) -> Iterator[TaskSpec]:
    """Tasks given by a program (dicts as in the file, or ``TaskSpec``): each checked as it
    is reached; a bad one or a duplicate id raises ``UsageError`` naming its position."""
    seen: set[str] = set()
    for position, row in enumerate(rows, 1):
        try:
            spec = row if isinstance(row, TaskSpec) else parse_task(row, base=base)
        except _BadLine as bad:
            raise UsageError(f"task {position}: {bad}") from None
        if spec.id in seen:
            raise UsageError(f"task {position}: the id {spec.id!r} was given before; ids must be unique")
        seen.add(spec.id)
        yield spec
