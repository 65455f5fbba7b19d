"""The terminal consent prompt (cli/consent.py): what the user is shown and what the
answers mean."""

from __future__ import annotations

import asyncio
import io

from toolrelay.cli.consent import terminal_approver
from toolrelay.relay.stages.route import Route

WRITE = Route(alias="box__write", server="box", tool="write.file", rule={"type": "object"})


def ask(answers: str, *arguments: dict[str, object]) -> tuple[list[str | None], str]:
    shown = io.StringIO()
    approve = terminal_approver(io.StringIO(answers), shown)

    async def main() -> list[str | None]:
        return list(await asyncio.gather(*(approve(WRITE, a) for a in arguments)))

    return asyncio.run(main()), shown.getvalue()


def test_yes_approves_and_anything_else_declines() -> None:
    verdicts, shown = ask("y\nYES\nn\n\n", {"n": 1}, {"n": 2}, {"n": 3}, {"n": 4})
    declined = "the user declined to run write.file on server box"
    assert verdicts == [None, None, declined, declined]
    assert shown.count("Allow? [y/N] ") == 4


def test_the_question_names_server_tool_and_arguments() -> None:
    _, shown = ask("y\n", {"path": "a.txt"})
    assert shown == (
        "\nThe model wants to run write.file on server box (not marked read-only)\n"
        '  arguments: {"path": "a.txt"}\nAllow? [y/N] '
    )
