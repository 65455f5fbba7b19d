"""What README's commands write into a clone stays out of git: the demo folder and the page
``toolrelay view`` draws of it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import REPO
from toolrelay.cli.view_cmd import default_output
from toolrelay.demo import DEFAULT_OUT


@pytest.mark.parametrize(
    "written",
    [f"{DEFAULT_OUT}/transcript.jsonl", str(default_output(REPO / DEFAULT_OUT).relative_to(REPO))],
    ids=["toolrelay demo", "toolrelay view toolrelay-demo"],
)
def test_files_the_demo_and_view_write_are_ignored(written: str) -> None:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    # check-ignore answers for paths that do not exist, so nothing is written here
    proc = subprocess.run(["git", "check-ignore", "--no-index", written], cwd=REPO, capture_output=True)
    assert proc.returncode == 0, f"{written} is not ignored by .gitignore"


def test_view_writes_the_page_beside_the_folder(tmp_path: Path) -> None:
    (tmp_path / DEFAULT_OUT).mkdir()
    assert default_output(tmp_path / DEFAULT_OUT) == tmp_path / f"{DEFAULT_OUT}.html"
