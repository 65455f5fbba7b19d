"""The package layout a newcomer reads: every package says what it is for and what it never
imports, and the root package shows its public names to ``dir()`` (REPL completion)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import toolrelay
from conftest import REPO

SRC = REPO / "src" / "toolrelay"
PACKAGES = sorted(p.parent for p in SRC.rglob("__init__.py") if p.parent != SRC)


def test_the_packages_are_found() -> None:
    names = {p.name for p in PACKAGES}
    assert {"cli", "client", "files", "model", "protocol", "relay", "server", "verify", "view"} <= names


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_every_package_docstring_says_what_it_is_for_and_what_it_never_imports(package: Path) -> None:
    init = package / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    paragraphs = [p for p in doc.split("\n\n") if p.strip()]
    assert len(paragraphs) >= 2 and len(paragraphs[0].split()) >= 8, f"{init}: say what the package is for"
    assert "never" in paragraphs[-1].lower() and "import" in paragraphs[-1], (
        f"{init}: the last paragraph says what the package never imports"
    )


def test_dir_lists_the_public_names_and_only_them() -> None:
    # A fresh interpreter: in this one, other tests have already touched the lazy names.
    code = "import toolrelay; print(' '.join(dir(toolrelay)))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    listed = proc.stdout.split()
    assert {"connect", "run", "verify", "Catalog", "__version__"} <= set(listed)
    assert listed == sorted(toolrelay.__all__)  # no Any, TYPE_CHECKING, annotations, importlib
    assert dir(toolrelay) == listed  # also once the names were used and submodules imported
    assert all(getattr(toolrelay, name) is not None for name in listed)
