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


# The top of the repository is its layout; a scratch file committed there by mistake (a
# transcript, a policy tried out by hand) shows up here instead of in a user's clone.
LAYOUT = {".ci", ".gitignore", "README.md", "bench", "docs", "examples", "pyproject.toml", "src", "tests"}


def test_the_repository_top_holds_only_its_layout() -> None:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    proc = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    tops = {path.split("/", 1)[0] for path in proc.stdout.splitlines()}
    stray = sorted(tops - LAYOUT)
    assert stray == [], f"files at the top of the repository beside its layout: {stray}"
