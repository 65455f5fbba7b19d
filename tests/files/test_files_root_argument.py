"""A command-line ROOT that cannot be used is a usage error for library callers too (the
errors.py error the CLI reports, exit code 2), not a bare ValueError."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrelay.errors import UsageError
from toolrelay.files import root_from_argument


def test_a_missing_root_raises_the_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(UsageError) as refused:
        root_from_argument(str(missing))
    assert str(refused.value) == f"ROOT '{missing}' does not exist"
    assert refused.value.exit_code == 2


def test_a_file_is_not_a_root(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    with pytest.raises(UsageError, match=r"is not a directory$"):
        root_from_argument(str(tmp_path / "notes.txt"))


def test_a_directory_is_a_root(tmp_path: Path) -> None:
    assert root_from_argument(str(tmp_path)).real == str(tmp_path.resolve())
