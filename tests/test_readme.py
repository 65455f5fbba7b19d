"""README.md's set-up and examples are checked, and so are those of the docs pages the
reference moved to: the two commands, .ci/run, every ``console`` block (commands and their
output) and every ``python`` block with the ``output`` block that follows it, on every page,
run for real in a workspace like the one README describes (a notes.txt of 30 lines, ``line
1`` … ``line 30``, and the quickstart's ``mcp.json``).

In expected output, a line ``...`` stands for any number of lines, ``...`` inside a line
for any text, and a last line ``(exit N)`` for the command's exit code (0 otherwise).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import CACHE, REPO, require_or_skip
from testkit.processes import run
from testkit.ray_setup import ensure_ray

README = (REPO / "README.md").read_text(encoding="utf-8")
PAGES = {"README.md": README} | {
    f"docs/{page.name}": page.read_text(encoding="utf-8") for page in sorted((REPO / "docs").glob("*.md"))
}
"""Every page whose examples run: README and each docs page (a page without examples adds none)."""
TWO_READS = (
    '{"turns": [{"calls": [{"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "tail": 2}}, '
    '{"name": "fs__read_text_file", "arguments": {"path": "missing.txt"}}]}]}'
)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks(text: str = README) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def console_examples() -> list[list[tuple[str, list[str]]]]:
    """Per console block of every page, its (command, expected output lines), in order."""
    examples = []
    for text in PAGES.values():
        for kind, body in blocks(text):
            if kind != "console":
                continue
            steps = []
            for chunk in re.split(r"^\$ ", body, flags=re.MULTILINE)[1:]:
                command, _, rest = chunk.partition("\n")
                steps.append((command, rest.splitlines()))
            examples.append(steps)
    return examples


def python_examples() -> list[tuple[str, str]]:
    examples = []
    for text in PAGES.values():
        found = blocks(text)
        examples += [
            (code, found[i + 1][1])
            for i, (kind, code) in enumerate(found[:-1])
            if kind == "python" and found[i + 1][0] == "output"
        ]
    return examples


def quickstart_config() -> str:
    """The config file README's quickstart shows, which its example runs with (as mcp.json)."""
    quickstart = README.partition("\n## Quickstart\n")[2].partition("\n## ")[0]
    (config,) = [body for kind, body in blocks(quickstart) if kind == "json"]
    return config


def make_workspace(root: Path) -> Path:
    (root / "notes.txt").write_text("".join(f"line {i}\n" for i in range(1, 31)))
    (root / "two-reads.json").write_text(TWO_READS)
    (root / "mcp.json").write_text(quickstart_config())
    (root / "examples").symlink_to(REPO / "examples")
    return root


def run_shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["XDG_STATE_HOME"] = str(cwd / "state")  # sign-ins and logs of the examples stay in the workspace
    return run(
        command + " 2>&1",
        shell=True,
        cwd=cwd,
        text=True,
        timeout=300,
        env=env,
    )


def expected_pattern(lines: list[str]) -> re.Pattern[str]:
    parts = []
    for line in lines:
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in line.split("...")) + r"\n")
    return re.compile("".join(parts), re.DOTALL)


def test_readme_opens_with_the_two_commands_and_ci_runs_the_second() -> None:
    first_block = blocks()[0]
    assert first_block[0] == "sh"
    main_command, test_command = first_block[1].strip().splitlines()
    assert main_command.endswith(".venv/bin/toolrelay demo")
    assert test_command.endswith(".venv/bin/python -m pytest -n 2")  # one worker per core
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert test_command in ci, ".ci/run must run README's test command exactly"
    assert ci[-1] == test_command, "the test command is the last step of .ci/run (its status is CI's)"
    assert main_command in ci


def test_the_two_reads_script_shown_in_the_readme_is_the_one_tested() -> None:
    assert TWO_READS in " ".join(README.split())  # README wraps it over lines


def test_the_quickstart_runs_its_own_config_near_the_top() -> None:
    """A newcomer's first screen: the two commands, then the quickstart, whose example runs
    the mcp.json it shows (with a real model's command beside it)."""
    quickstart = README.partition("\n## Quickstart\n")[2].partition("\n## ")[0]
    assert README.index("\n## Quickstart\n") < 1200, "the quickstart follows the two commands"
    assert "mcpServers" in quickstart_config()
    assert "OPENAI_API_KEY=" in quickstart and "--base-url http://127.0.0.1" in quickstart
    (console,) = [body for kind, body in blocks(quickstart) if kind == "console"]
    commands = re.findall(r"^\$ (.*)$", console, re.MULTILINE)
    assert "--config mcp.json" in commands[0] and "--transcript run.jsonl" in commands[0]
    assert commands[1:] == ["toolrelay verify run.jsonl", "toolrelay view run.jsonl"]


Runs = dict[int | str, list[subprocess.CompletedProcess[str]]]
"""Per console example (by index) its commands' results; per python example (by its code)
its one run."""


def _needs_ray(steps: list[tuple[str, list[str]]]) -> bool:
    return any("--engine ray" in command for command, _ in steps)


def _run_steps(steps: list[tuple[str, list[str]]], workspace: Path) -> list[subprocess.CompletedProcess[str]]:
    return [run_shell(command, workspace) for command, _ in steps]


def _run_python(code: str, workspace: Path) -> list[subprocess.CompletedProcess[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return [run([sys.executable, "-c", code], cwd=workspace, text=True, timeout=300, env=env)]


@pytest.fixture(scope="module")
def side_by_side(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Every example, run three at a time (each in its own workspace, a console example's
    commands in order), the Ray one first: it mostly waits for its cluster while the
    others fill the cores. Each test judges its own example's results."""
    examples = list(enumerate(console_examples()))
    ray_missing = any(_needs_ray(steps) for _, steps in examples) and ensure_ray(CACHE) is not None
    runnable = [(i, steps) for i, steps in examples if not (ray_missing and _needs_ray(steps))]
    runnable.sort(key=lambda example: not _needs_ray(example[1]))
    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = {i: pool.submit(_run_steps, steps, make_workspace(tmp_path_factory.mktemp("workspace")))
                for i, steps in runnable}
        runs |= {code: pool.submit(_run_python, code, make_workspace(tmp_path_factory.mktemp("workspace")))
                 for code, _ in python_examples()}
        return {key: done.result() for key, done in runs.items()}


@pytest.mark.parametrize("index", range(len(console_examples())),
                         ids=[steps[0][0][:50] for steps in console_examples()])
def test_console_example(index: int, side_by_side: Runs) -> None:
    steps = console_examples()[index]
    if _needs_ray(steps) and (why := ensure_ray(CACHE)) is not None:
        require_or_skip(why)
    for (command, expected), proc in zip(steps, side_by_side[index], strict=True):
        code = 0
        if expected and (m := re.fullmatch(r"\(exit (\d+)\)", expected[-1])):
            code, expected = int(m.group(1)), expected[:-1]
        assert proc.returncode == code, f"$ {command}\n{proc.stdout}"
        output = proc.stdout if proc.stdout.endswith("\n") or not proc.stdout else proc.stdout + "\n"
        shown = "\n".join(expected)
        assert expected_pattern(expected).fullmatch(output), (
            f"$ {command}\nREADME shows:\n{shown}\n\ngot:\n{output}"
        )


@pytest.mark.parametrize(("code", "expected"), python_examples(), ids=lambda v: str(v)[:40])
def test_python_example(code: str, expected: str, side_by_side: Runs) -> None:
    (proc,) = side_by_side[code]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected
