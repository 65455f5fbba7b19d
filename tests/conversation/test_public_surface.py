"""The library's surface: ``dir(toolrelay)`` is the public API and nothing else, each name
documented; ``run``'s keywords, ``Conversation``'s and ``SyncConversation``'s are typed
(``Unpack[RunKeywords]``), so mypy rejects a misspelt or mistyped option in a caller's code;
a result documents its usage and every call's outcome."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import subprocess
import sys
import textwrap
import typing
from pathlib import Path

import pytest

import toolrelay
from conftest import REPO

PUBLIC = [name for name in dir(toolrelay) if name != "__version__"]


def test_dir_lists_the_public_api_only() -> None:
    assert dir(toolrelay) == sorted(toolrelay.__all__)
    assert [name for name in PUBLIC if name.startswith("_")] == []
    namespace: dict[str, object] = {}
    exec("from toolrelay import *", namespace)  # what a star import gives
    assert sorted(name for name in namespace if name != "__builtins__") == sorted(toolrelay.__all__)
    for helper in ("importlib", "Any", "TYPE_CHECKING", "annotations"):
        assert helper not in toolrelay.__all__


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_is_documented(name: str) -> None:
    value = getattr(toolrelay, name)
    doc = inspect.getdoc(value) or ""
    assert doc.strip(), f"toolrelay.{name} has no docstring"
    assert not doc.startswith(f"{name}("), f"toolrelay.{name} has only the docstring dataclass makes"
    assert getattr(value, "__module__", "").startswith("toolrelay"), name


def test_the_conversation_keywords_are_the_run_options_fields() -> None:
    for function in (toolrelay.Conversation.__init__, toolrelay.SyncConversation.__init__,
                     toolrelay.Conversation.load):
        [keywords] = typing.get_args(typing.get_type_hints(function)["keywords"])
        assert keywords is toolrelay.RunKeywords
    assert list(typing.get_type_hints(toolrelay.RunKeywords)) == [
        f.name for f in dataclasses.fields(toolrelay.RunOptions)]


def test_a_result_documents_its_usage_and_its_calls() -> None:
    tree = ast.parse(textwrap.dedent(inspect.getsource(toolrelay.RunResult)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    documented = {
        node.target.id for node, after in itertools.pairwise(body)
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
        and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
    }
    assert documented >= {"status", "reason", "final_text", "turns", "calls", "response_ids", "usage"}


def test_verify_stays_the_function_whatever_was_imported_first() -> None:
    import toolrelay.verify.checks  # binds the subpackage on its parent, as any import of it does

    assert callable(toolrelay.verify) and toolrelay.verify.__module__ == "toolrelay.verify.checks"
    assert toolrelay.load_run.__module__ == "toolrelay.verify.load"


TYPED_USE = '''
import toolrelay

result: toolrelay.RunResult = toolrelay.run("x", model="offline", limits=toolrelay.RunLimits(max_turns=2))
tokens: int = result.usage.get("total_tokens", 0)
statuses: list[str] = [call.status for call in result.calls]
conversation = toolrelay.Conversation(model="offline", chain=True)
sync = toolrelay.SyncConversation(model="offline", stream=False)
'''
MISUSE = '''
import toolrelay

toolrelay.run("x", modle="offline")
toolrelay.run("x", max_turns=2)
toolrelay.Conversation(model=3)
toolrelay.SyncConversation.load("chat.json", chain="yes")
'''


def _mypy(code: str, folder: Path) -> subprocess.CompletedProcess[str]:
    (folder / "caller.py").write_text(code)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
         "--cache-dir", str(REPO / ".mypy_cache"), str(folder / "caller.py")],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )


def test_mypy_checks_the_keywords_callers_pass(tmp_path: Path) -> None:
    good = _mypy(TYPED_USE, tmp_path)
    assert good.returncode == 0, good.stdout
    bad = _mypy(MISUSE, tmp_path)
    said = bad.stdout
    assert bad.returncode == 1
    assert ':4: error: Unexpected keyword argument "modle" for "run"' in said
    assert ':5: error: Unexpected keyword argument "max_turns" for "run"' in said
    assert ':6: error: Argument "model" to "Conversation" has incompatible type "int"; expected "str"' in said
    assert ':7: error: Argument "chain" to "load" of "SyncConversation" has incompatible type "str"' in said
