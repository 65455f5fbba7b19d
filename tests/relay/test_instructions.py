"""The run's instructions with each server's appended (relay.instructions)."""

from __future__ import annotations

from toolrelay.relay.stages.instructions import MAX_SERVER_INSTRUCTIONS, with_server_instructions


def test_each_server_gets_a_labelled_block_after_the_users_own() -> None:
    got = with_server_instructions("Be brief.", {"fs": "Paths are relative.", "web": "Cite sources.\n"})
    assert got == (
        "Be brief.\n\n"
        'Instructions from the MCP server "fs" (about its tools):\nPaths are relative.\n\n'
        'Instructions from the MCP server "web" (about its tools):\nCite sources.'
    )


def test_nothing_to_say_is_no_instructions_at_all() -> None:
    assert with_server_instructions(None, {}) is None
    assert with_server_instructions(None, {"fs": "  "}) is None
    assert with_server_instructions("Own.", {}) == "Own."


def test_a_server_cannot_fill_the_context() -> None:
    got = with_server_instructions(None, {"big": "x" * (MAX_SERVER_INSTRUCTIONS + 500)})
    assert got is not None and got.endswith("x\n[… 500 more characters cut by toolrelay]")
    assert got.count("x") == MAX_SERVER_INSTRUCTIONS
