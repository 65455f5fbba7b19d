"""The demo's closing hints work where the user is: after a non-editable install, run from
another folder, each printed command succeeds as printed (the standalone checks ship with
the package; the commands name what this installation can run)."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from toolrelay.cli.main import build_parser

from .conftest import REPO

CLOSING = "every link holds. Check the files yourself:"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with toolrelay installed from a copy of the source (not editable); its
    dependencies come from this venv's site-packages. Returns the venv's bin folder."""
    root = tmp_path_factory.mktemp("install")
    source = root / "source"
    shutil.copytree(REPO / "src" / "toolrelay", source / "src" / "toolrelay",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                    str(source)], check=True, capture_output=True, timeout=300)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


def closing_hints(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    assert CLOSING in lines, stdout
    return [line.strip() for line in lines[lines.index(CLOSING) + 1 :] if line.startswith("  ")]


def demo_and_hints(bin_dir: Path, cwd: Path, env: dict[str, str]) -> list[str]:
    proc = subprocess.run([str(bin_dir / "toolrelay"), "demo", "--out", "demo run"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hints = closing_hints(proc.stdout)
    assert len(hints) == 5, hints
    for hint in hints:
        ran = subprocess.run(hint, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL)
        assert ran.returncode == 0, f"$ {hint}\n{ran.stdout}{ran.stderr}"
    return hints


def user_env(*first: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_OPENAI_"))}
    env["PATH"] = os.pathsep.join([*(str(p) for p in first), env.get("PATH", os.defpath)])
    return env


@pytest.fixture(scope="module")
def hints(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The demo and its hints, each run as printed from a folder of its own: with the venv
    only installed ("installed") and activated ("activated", its bin first on PATH). The
    two run side by side (neither touches the other's folder)."""
    envs = {"installed": user_env(), "activated": user_env(installed)}
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = {name: pool.submit(demo_and_hints, installed, tmp_path_factory.mktemp(name), env)
                for name, env in envs.items()}
        return {name: run.result() for name, run in runs.items()}


def test_each_hint_runs_as_printed_from_another_folder(hints: dict[str, list[str]]) -> None:
    checks = [hint for hint in hints["installed"] if "verify_" in hint]
    assert len(checks) == 2
    # the standalone checks are the installed package's own files, not a clone's examples/
    assert all(f"{os.sep}site-packages{os.sep}toolrelay{os.sep}examples{os.sep}" in h for h in checks)


def test_in_an_activated_venv_the_hints_use_the_short_names(hints: dict[str, list[str]]) -> None:
    assert hints["activated"][:3] == ["toolrelay verify 'demo run'", "toolrelay explain 'demo run'",
                                      "toolrelay explain 'demo run/streamed'"]
    assert all(hint.startswith("python3 ") for hint in hints["activated"][3:])


def test_demo_help_names_no_path_that_only_a_clone_has() -> None:
    parser = build_parser("demo")
    (verbs,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    text = " ".join(verbs.choices["demo"].format_help().split())
    assert "examples/verify" not in text
    assert "toolrelay demo prints the commands at its end" in text
