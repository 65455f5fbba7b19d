"""The tasks file: bad lines are reported by number and skipped, duplicate ids are a
usage error naming both lines, overrides are checked, scripts resolved next to the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_helpers import write_tasks

from toolrelay.batches import TaskFile
from toolrelay.batches.tasks import task_specs
from toolrelay.errors import UsageError


def test_bad_lines_are_reported_with_their_numbers_and_skipped(tmp_path: Path) -> None:
    path = write_tasks(tmp_path / "tasks.jsonl", [
        {"id": "a", "task": "first"},
        "{not json",
        {"id": "b"},
        {"id": "c", "task": "x", "modle": "gpt"},
        {"id": "../d", "task": "x"},
        {"id": "e", "task": "x", "max_turns": 0},
        {"id": "f", "task": "last", "max_turns": 2, "script": "s.json"},
    ])
    tasks = TaskFile(path)
    assert tasks.count == 2
    assert [(spec.id, spec.line) for spec in tasks] == [("a", 1), ("f", 7)]
    where = [problem.split(": ", 1)[0] for problem in tasks.problems]
    assert where == [f"{path}:{n}" for n in (2, 3, 4, 5, 6)]
    assert "not a JSON line" in tasks.problems[0] and tasks.problems[0].endswith("; skipped")
    assert "task b: task must be a non-empty string" in tasks.problems[1]
    assert "unknown key 'modle'" in tasks.problems[2]
    assert "id must be a name of letters" in tasks.problems[3]
    assert "max_turns must be a whole number of at least 1" in tasks.problems[4]
    last = list(tasks)[-1]
    assert last.overrides == {"max_turns": 2, "script": str(tmp_path / "s.json")}


def test_a_duplicate_id_is_a_usage_error_naming_both_lines(tmp_path: Path) -> None:
    path = write_tasks(tmp_path / "tasks.jsonl", [{"id": "a", "task": "x"}, "", {"id": "b", "task": "y"},
                                                  {"id": "a", "task": "z"}])
    with pytest.raises(UsageError, match=r"task id 'a' is on line 1 and line 4"):
        TaskFile(path)


def test_tasks_given_by_a_program_are_checked_as_they_are_reached() -> None:
    specs = task_specs([{"id": "a", "task": "x"}, {"id": "a", "task": "y"}])
    assert next(specs).id == "a"
    with pytest.raises(UsageError, match="task 2: the id 'a' was given before"):
        next(specs)
    with pytest.raises(UsageError, match="task 1: unknown key 'nope'"):
        next(task_specs([{"id": "a", "task": "x", "nope": 1}]))


def test_an_unreadable_tasks_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read the tasks file"):
        TaskFile(tmp_path / "missing.jsonl")
