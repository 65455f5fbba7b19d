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


def test_no_module_of_toolrelay_imports_itself_round_a_circle() -> None:
    # Every import counts: deferred ones inside functions and those under TYPE_CHECKING too.
    import grimp

    graph = grimp.build_graph("toolrelay", cache_dir=None)
    circles = set()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                circles.add(" -> ".join((importer, *back)))
    assert sorted(circles) == [], "import circles:\n" + "\n".join(sorted(circles))


ALLOWED_CONTEXT_VARS: dict[str, str] = {
    # module: the one ContextVar it may hold; docs/architecture.md ("Context variables") says why
    "toolrelay.client.auth.policy": "_POLICY",
    "toolrelay.batches.routing": "_TASK",
    "toolrelay.client.http": "_RENEWING",
}


def _context_vars() -> dict[str, list[str]]:
    """Each module of src/toolrelay that creates a ContextVar: the names it binds them to."""
    found: dict[str, list[str]] = {}
    for path in sorted((REPO / "src" / "toolrelay").rglob("*.py")):
        module = ".".join(path.relative_to(REPO / "src").with_suffix("").parts)
        tree = ast.parse(path.read_text(), str(path))
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and "ContextVar" in ast.unparse(n.func)]
        named = {id(n.value): n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign))}
        for call in calls:
            bound = named.get(id(call))
            targets = [bound.target] if isinstance(bound, ast.AnnAssign) else bound.targets if bound else []
            found.setdefault(module, []).extend([ast.unparse(t) for t in targets] or ["(unnamed)"])
    return found


def test_no_context_variable_carries_data_unless_the_architecture_lists_it() -> None:
    found = _context_vars()
    assert found == {module: [name] for module, name in ALLOWED_CONTEXT_VARS.items()}, (
        "a ContextVar passes data unseen by the import contract: pass the value explicitly, or "
        "list it in docs/architecture.md with why (at most two between modules)")
    listed = (REPO / "docs" / "architecture.md").read_text()
    for module, name in ALLOWED_CONTEXT_VARS.items():
        path = "/".join(module.split(".")[1:]) + ".py"
        assert f"`{path}` `{name}`" in listed, f"docs/architecture.md does not list {path} {name}"


STAGES = "toolrelay.relay.stages"
STAGES_MAY_IMPORT = (STAGES, "toolrelay.protocol", "toolrelay.events", "toolrelay.errors",
                     "toolrelay.redaction")
"""What a pure stage may import of toolrelay: other stages and the bottom, I/O-free layers."""


def _toolrelay_imports() -> dict[str, set[str]]:
    import grimp  # installed with import-linter

    graph = grimp.build_graph("toolrelay")
    return {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_the_pure_stages_import_nothing_that_does_io() -> None:
    imports = _toolrelay_imports()
    stages = [m for m in imports if _within(m, (STAGES,))]
    assert len(stages) > 15  # the package exists and holds the stages
    reaching = {m: sorted(i for i in imports[m] if not _within(i, STAGES_MAY_IMPORT)) for m in stages}
    assert {m: found for m, found in reaching.items() if found} == {}


def test_verify_and_view_reach_the_relay_only_through_its_pure_stages() -> None:
    imports = _toolrelay_imports()
    readers = [m for m in imports if _within(m, ("toolrelay.verify", "toolrelay.view"))]
    reaching = {m: sorted(i for i in imports[m]
                          if _within(i, ("toolrelay.relay",)) and not _within(i, (STAGES,)))
                for m in readers}
    assert {m: found for m, found in reaching.items() if found} == {}
