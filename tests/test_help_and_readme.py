"""What a newcomer reads, README, the docs pages it links and ``--help``, is complete and
self-explaining: README names every command and links every docs page; every option of
every command is documented beside that command in docs/cli.md, the command reference; every
link between the pages resolves; and neither README, docs/cli.md nor ``--help`` uses a name
for something it never explains ("the seed", "attachments")."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

import pytest

from conftest import REPO
from toolrelay.cli.help_layout import GROUPS
from toolrelay.cli.main import COMMANDS, build_parser

README = (REPO / "README.md").read_text(encoding="utf-8")
CLI_DOC = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
"""Where every command's options are documented (README links it)."""
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")
UNEXPLAINED = re.compile(r"(?<!-)(?<!sampling )\b(seeds?|attachments?)\b", re.IGNORECASE)
"""The seed document's words, which a user never saw; a sampling seed (``--seed``) is a user's."""


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
    """docs/cli.md's row of ``verb`` in the commands table, plus its own options table if any."""
    rows = [line for line in CLI_DOC.splitlines() if line.startswith(f"| `toolrelay {verb} ")]
    assert len(rows) == 1, f"docs/cli.md's commands table needs exactly one row for {verb}"
    heading = rf"^### `toolrelay {verb}` options\n(.*?)(?=^#|\Z)"
    section = re.search(heading, CLI_DOC, re.MULTILINE | re.DOTALL)
    return rows[0] + "\n" + (section.group(1) if section else "")


@pytest.mark.parametrize("verb", COMMANDS)
def test_every_option_is_documented_beside_its_command(verb: str) -> None:
    text = documented_beside(verb)
    options = long_options(command_parser(verb))
    assert options, f"{verb} has no options? the parser lookup is broken"
    missing = [o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)]
    assert missing == [], f"docs/cli.md does not document {missing} beside `toolrelay {verb}`"


@pytest.mark.parametrize("verb", COMMANDS)
def test_readme_names_every_command_and_links_its_options(verb: str) -> None:
    table = README.partition("\n## Commands\n")[2].partition("\n## ")[0]
    row = re.search(rf"^\| `toolrelay {verb}[ `]", table, re.MULTILINE)
    assert row, f"README's commands table lacks {verb}"
    assert "](docs/cli.md)" in table


def test_readme_links_every_docs_page() -> None:
    linked = {target.partition("#")[0] for target in LINK.findall(README)}
    missing = [f"docs/{page.name}" for page in PAGES[1:] if f"docs/{page.name}" not in linked]
    assert missing == [], f"README does not link {missing}"


def heading_anchors(text: str) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces → -."""
    headings = re.findall(r"^#+ (.*)$", FENCE.sub("", text), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def test_every_link_between_the_pages_resolves() -> None:
    anchors = {page.resolve(): heading_anchors(page.read_text(encoding="utf-8")) for page in PAGES}
    broken = []
    for page in PAGES:
        for target in LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page.resolve()
            if not resolved.exists() or (anchor and anchor not in anchors.get(resolved, {anchor})):
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert broken == []


def test_an_option_matches_only_as_a_whole_word() -> None:
    assert re.search(r"(?<![\w-])--max-turns(?![\w-])", documented_beside("run"))
    assert not re.search(r"(?<![\w-])--max(?![\w-])", documented_beside("run"))


@pytest.mark.parametrize("verb", [None, *COMMANDS])
def test_help_names_nothing_it_does_not_explain(verb: str | None) -> None:
    text = build_parser(None).format_help() if verb is None else command_parser(verb).format_help()
    assert UNEXPLAINED.findall(text) == []


@pytest.mark.parametrize("text", [README, CLI_DOC], ids=["README.md", "docs/cli.md"])
def test_readme_names_nothing_it_does_not_explain(text: str) -> None:
    found = [line for line in text.splitlines() if UNEXPLAINED.search(line)]
    assert found == []


@pytest.mark.parametrize("verb", GROUPS)
def test_a_long_help_is_grouped_and_names_its_reference(verb: str) -> None:
    """``run --help`` and ``batch --help`` show their options in titled groups (each grouped
    option one the verb has), a one-line usage, and where every option is in full."""
    parser = command_parser(verb)
    options = long_options(parser)
    grouped = [name for _, names in GROUPS[verb] for name in names]
    assert [name for name in grouped if name not in options] == []
    assert sorted(set(options) - set(grouped) - {"--help"}) == []  # a new option gets a group
    text = parser.format_help()
    assert text.splitlines()[0].startswith(f"usage: toolrelay {verb} [-h] [options]")
    assert all(f"\n{title}:\n" in text for title, _ in GROUPS[verb])
    reference = f"docs/cli.md#toolrelay-{verb}-options"
    assert reference in text
    assert reference.partition("#")[2] in heading_anchors(CLI_DOC)


def test_run_and_batch_declare_their_common_options_once() -> None:
    """What ``run`` and ``batch`` both take comes from one declaration (``cli/run_options.py``),
    so a new option of both is added there once; ``--elicit`` alone differs by design (a
    batch never prompts)."""
    from toolrelay.cli.run_options import add_run_options

    common = set(long_options(command_parser("run"))) & set(long_options(command_parser("batch")))
    declared = set(long_options(_parser_with(add_run_options)))
    assert sorted(common - declared - {"--elicit"}) == []
    assert sorted(declared - common) == []


def _parser_with(add: Callable[[argparse.ArgumentParser, str], None]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False)
    add(parser, "run")
    return parser
