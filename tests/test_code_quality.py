"""ruff and mypy --strict are part of the test command: a lint or type error fails CI."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True)


def test_ruff_is_clean() -> None:
    proc = _run("ruff", "check", "src", "tests", "bench", "examples")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_is_clean() -> None:
    proc = _run("mypy", "--strict", "src/toolrelay")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_helper_modules_imported_by_bare_name_are_unique() -> None:
    # pytest puts each test folder on sys.path: two `from helpers import ...` of helpers.py
    # in different folders would shadow each other, depending on which test ran first.
    files = [p for p in (REPO / "tests").rglob("*.py") if p.name != "__init__.py"]
    by_name: dict[str, list[str]] = {}
    for path in files:
        by_name.setdefault(path.stem, []).append(str(path.relative_to(REPO)))
    imported = {m.group(1) for p in files for m in re.finditer(r"^from (\w+) import", p.read_text(), re.M)}
    imported.discard("conftest")  # pytest loads conftest files itself, one per folder
    clashes = {name: by_name[name] for name in imported if len(by_name.get(name, [])) > 1}
    assert clashes == {}, f"helper modules imported by a name that several files have: {clashes}"


def test_the_import_contract_holds() -> None:
    # pyproject.toml's [tool.importlinter]: one call's walk goes down the layers, never up.
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports"))], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_only_the_assembly_builds_a_relay_or_a_catalog() -> None:
    # assembly/ is the one composition root: a feature every run, batch task and verb gets
    # is installed there once, which holds only while nobody else builds these two
    built = {"Relay", "Catalog"}
    src = REPO / "src" / "toolrelay"
    found = []
    for path in sorted(src.rglob("*.py")):
        if path.is_relative_to(src / "assembly"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            func = node.func if isinstance(node, ast.Call) else None
            name = getattr(func, "id", None) or getattr(func, "attr", None)  # Catalog(…), relay.Catalog(…)
            if name in built:
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {name}(")
    assert found == [], f"built outside src/toolrelay/assembly/: {found}"
