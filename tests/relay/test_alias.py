"""Aliases: the names the model sees for (server, tool) pairs, and the unknown-tool message."""

from __future__ import annotations

import itertools
import re

from toolrelay.relay.stages.alias import (
    ALIAS_PATTERN,
    alias_choices,
    assign_aliases,
    server_prefix,
    unknown_tool_message,
)

HASHED = re.compile(r"^(?P<stem>[A-Za-z0-9_-]+)_(?P<hash>[0-9a-f]{8})$")


def test_a_simple_name_is_server_two_underscores_tool() -> None:
    assert assign_aliases([("fs", "read_text_file")]) == {("fs", "read_text_file"): "fs__read_text_file"}
    assert alias_choices([("fs", "read_text_file")])[("fs", "read_text_file")].how == "exact"


def test_two_servers_offering_the_same_tool_get_distinct_plain_aliases() -> None:
    aliases = assign_aliases([("fs", "read_text_file"), ("backup", "read_text_file")])
    assert aliases == {
        ("fs", "read_text_file"): "fs__read_text_file",
        ("backup", "read_text_file"): "backup__read_text_file",
    }


def test_dots_slashes_spaces_and_unicode_become_underscores() -> None:
    choices = alias_choices(
        [("git hub", "repo/list.all v2"), ("fs", "lire_le_fichier_é"), ("srv", "读取"), ("a-b", "c-d")]
    )
    assert {pair: choice.alias for pair, choice in choices.items()} == {
        ("git hub", "repo/list.all v2"): "git_hub__repo_list_all_v2",
        ("fs", "lire_le_fichier_é"): "fs__lire_le_fichier__",
        ("srv", "读取"): "srv____",
        ("a-b", "c-d"): "a-b__c-d",
    }
    assert choices[("git hub", "repo/list.all v2")].how == "mapped"
    assert choices[("a-b", "c-d")].how == "exact"


def test_a_mapping_collision_leaves_the_exact_name_to_its_owner_and_hashes_the_other() -> None:
    choices = alias_choices([("fs", "a.b"), ("fs", "a_b")])
    assert choices[("fs", "a_b")].alias == "fs__a_b"
    hashed = HASHED.match(choices[("fs", "a.b")].alias)
    assert hashed is not None and hashed["stem"] == "fs__a_b"
    assert choices[("fs", "a.b")].how == "disambiguated"
    # Pinned: aliases appear in transcripts, so the same pair must keep its alias across releases.
    assert choices[("fs", "a.b")].alias == "fs__a_b_76a65fd8"


def test_separator_ambiguity_between_server_and_tool_is_resolved_for_both() -> None:
    aliases = assign_aliases([("x__y", "z"), ("x", "y__z")])
    assert aliases[("x__y", "z")] != aliases[("x", "y__z")]
    for alias in aliases.values():
        hashed = HASHED.match(alias)
        assert hashed is not None and hashed["stem"] == "x__y__z"


def test_two_mapped_names_colliding_both_get_hashes() -> None:
    aliases = assign_aliases([("fs", "a.b"), ("fs", "a/b")])
    assert len(set(aliases.values())) == 2
    assert all(HASHED.match(alias) and alias.startswith("fs__a_b_") for alias in aliases.values())


def test_a_hashed_alias_that_equals_a_literal_tool_name_is_moved_again() -> None:
    taken_by_hash = assign_aliases([("fs", "a.b"), ("fs", "a_b")])[("fs", "a.b")]
    literal = taken_by_hash.removeprefix("fs__")
    aliases = assign_aliases([("fs", "a.b"), ("fs", "a_b"), ("fs", literal)])
    assert aliases[("fs", literal)] == taken_by_hash
    assert aliases[("fs", "a.b")] not in (taken_by_hash, "fs__a_b")
    assert len(set(aliases.values())) == 3


def test_long_names_are_cut_to_64_characters_with_a_hash() -> None:
    long_tool = "r" * 100
    near_twin = "r" * 99 + "x"
    aliases = assign_aliases([("fs", long_tool), ("fs", near_twin), ("s" * 100, "t" * 100)])
    for alias in aliases.values():
        assert len(alias) == 64
        assert ALIAS_PATTERN.fullmatch(alias)
        assert HASHED.match(alias)
    assert aliases[("fs", long_tool)] != aliases[("fs", near_twin)]
    assert aliases[("fs", long_tool)].startswith("fs__" + "r" * 51 + "_")
    # Both halves keep a share: 20 characters of the server, the rest for the tool.
    assert aliases[("s" * 100, "t" * 100)].startswith("s" * 20 + "__" + "t" * 33 + "_")
    assert alias_choices([("fs", long_tool)])[("fs", long_tool)].how == "shortened"


def test_a_64_character_name_is_kept_and_65_is_cut() -> None:
    fits = "t" * (64 - len("fs__"))
    assert assign_aliases([("fs", fits)]) == {("fs", fits): "fs__" + fits}
    too_long = fits + "t"
    alias = assign_aliases([("fs", too_long)])[("fs", too_long)]
    assert len(alias) == 64 and HASHED.match(alias)


def test_aliases_do_not_depend_on_the_order_servers_connected() -> None:
    pairs = [("fs", "a.b"), ("fs", "a_b"), ("x__y", "z"), ("x", "y__z"), ("fs", "a/b"), ("b", "read")]
    expected = assign_aliases(pairs)
    for order in itertools.permutations(pairs):
        assert assign_aliases(order) == expected


def test_duplicate_pairs_get_one_alias() -> None:
    assert assign_aliases([("fs", "t"), ("fs", "t")]) == {("fs", "t"): "fs__t"}


def test_empty_names_still_give_a_valid_alias() -> None:
    aliases = assign_aliases([("", ""), ("fs", "")])
    assert aliases == {("", ""): "__", ("fs", ""): "fs__"}


def test_unknown_tool_message_lists_the_tools_and_suggests_close_matches() -> None:
    available = ["fs__read_text_file", "fs__list_directory", "backup__read_text_file"]
    assert unknown_tool_message("read_text_file", available) == (
        "unknown tool 'read_text_file'; available tools: backup__read_text_file, fs__list_directory, "
        "fs__read_text_file; did you mean 'fs__read_text_file' or 'backup__read_text_file'?"
    )
    assert unknown_tool_message("delete_everything", available) == (
        "unknown tool 'delete_everything'; available tools: backup__read_text_file, fs__list_directory, "
        "fs__read_text_file"
    )


def test_unknown_tool_message_without_tools_and_with_many_tools() -> None:
    assert unknown_tool_message("x", []) == "unknown tool 'x'; no tools are available"
    many = [f"srv__tool_{n:02d}" for n in range(35)]
    message = unknown_tool_message("zzz", many)
    assert message.endswith("srv__tool_29, … (5 more)")
    assert "srv__tool_30" not in message


def test_unknown_tool_message_clips_a_huge_name() -> None:
    message = unknown_tool_message("n" * 10_000, ["fs__a"])
    assert message == f"unknown tool '{'n' * 80}…'; available tools: fs__a"


def test_the_server_prefix_is_how_its_aliases_begin() -> None:
    pairs = [("my.box", "echo"), ("fs", "read_text_file"), ("a b", "c")]
    for (server, tool), alias in assign_aliases(pairs).items():
        assert alias.startswith(server_prefix(server)), (server, tool, alias)
    assert server_prefix("my.box") == "my_box__"
