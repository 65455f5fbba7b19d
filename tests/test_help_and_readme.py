"""What a newcomer reads, README and ``--help``, is complete and self-explaining: every
option of every command is documented beside that command in README, and neither uses a
name for something it never explains ("the seed", "attachments")."""

from __future__ import annotations

import argparse
import re

import pytest

from conftest import REPO
from toolrelay.cli.main import COMMANDS, build_parser

README = (REPO / "README.md").read_text(encoding="utf-8")
UNEXPLAINED = re.compile(r"\b(seeds?|attachments?)\b", re.IGNORECASE)


def command_parser(verb: str) -> argparse.ArgumentParser:
    parser = build_parser(verb)
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    chosen: argparse.ArgumentParser = commands.choices[verb]
    return chosen


def long_options(parser: argparse.ArgumentParser) -> list[str]:
    return [
        option
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction)
        for option in action.option_strings
        if option.startswith("--")
    ]


def documented_beside(verb: str) -> str:
    """README's row of ``verb`` in the commands table, plus its own options table if any."""
    rows = [line for line in README.splitlines() if line.startswith(f"| `toolrelay {verb} ")]
    assert len(rows) == 1, f"README's commands table needs exactly one row for {verb}"
    section = re.search(rf"^### `toolrelay {verb}` options\n(.*?)(?=^#)", README, re.MULTILINE | re.DOTALL)
    return rows[0] + "\n" + (section.group(1) if section else "")


@pytest.mark.parametrize("verb", COMMANDS)
def test_every_option_is_documented_beside_its_command(verb: str) -> None:
    text = documented_beside(verb)
    options = long_options(command_parser(verb))
    assert options, f"{verb} has no options? the parser lookup is broken"
    missing = [o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)]
    assert missing == [], f"README does not document {missing} beside `toolrelay {verb}`"


def test_an_option_matches_only_as_a_whole_word() -> None:
    assert re.search(r"(?<![\w-])--max-turns(?![\w-])", documented_beside("run"))
    assert not re.search(r"(?<![\w-])--max(?![\w-])", documented_beside("run"))


@pytest.mark.parametrize("verb", [None, *COMMANDS])
def test_help_names_nothing_it_does_not_explain(verb: str | None) -> None:
    text = build_parser(None).format_help() if verb is None else command_parser(verb).format_help()
    assert UNEXPLAINED.findall(text) == []


def test_readme_names_nothing_it_does_not_explain() -> None:
    found = [line for line in README.splitlines() if UNEXPLAINED.search(line)]
    assert found == []
