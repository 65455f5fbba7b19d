"""Stage 1, declare (names): one public alias per (server, tool) pair.

The model sees only aliases: ``<server>__<tool>`` made safe for the Responses API
(``^[A-Za-z0-9_-]{1,64}$``). MCP allows names the API rejects (dots, slashes, spaces,
non-ASCII, 128 characters), and two servers may offer the same tool, so:

- every character outside ``A-Z a-z 0-9 _ -`` becomes ``_``;
- a name longer than 64 characters is cut and ends in ``_`` plus 8 hex digits of a hash of
  the original pair;
- when two pairs end up with the same name (``a.b`` vs ``a_b``, or server ``x__y`` + tool
  ``z`` vs server ``x`` + tool ``y__z``), a pair whose alias is exactly
  ``server__tool`` keeps it when it is the only such pair; every other one gets the hash
  suffix.

The result depends only on the set of pairs (they are sorted first), never on the order in
which servers connected, and two different pairs never share an alias. The original tool
name is what goes to the server; the alias is only the model's handle for it.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, Literal, TypeVar

__all__ = [
    "ALIAS_PATTERN",
    "MAX_ALIAS_LENGTH",
    "NAMESPACE_SEPARATOR",
    "SEPARATOR",
    "AliasChoice",
    "AliasHow",
    "alias_choices",
    "assign_aliases",
    "name_choices",
    "namespaced_alias",
    "server_prefix",
    "unknown_tool_message",
]

MAX_ALIAS_LENGTH: Final = 64
"""Chat Completions documents 64; Responses is unconfirmed, so the safe bound is used."""
ALIAS_PATTERN: Final = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
SEPARATOR: Final = "__"
NAMESPACE_SEPARATOR: Final = "."
"""Between a namespace and a tool's name in it, in a namespaced tool's alias
(``fs.read_text_file``): neither part can hold it, so the pair is read back exactly."""
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_-]")
_HASH_LENGTH: Final = 8
_MIN_SERVER_KEPT: Final = 20
"""When a long name is cut, the server part keeps at least this many characters."""
_LISTED_TOOLS: Final = 30
"""How many available aliases an unknown-tool message lists before summarising."""

AliasHow = Literal["exact", "mapped", "shortened", "disambiguated"]
Pair = tuple[str, str]
_Key = TypeVar("_Key", Pair, str)


@dataclass(slots=True, kw_only=True, frozen=True)
class AliasChoice:
    """The alias of one (server, tool) pair and how it was formed."""

    alias: str
    how: AliasHow
    """``exact``: ``server__tool`` unchanged; ``mapped``: unsafe characters replaced;
    ``shortened``: cut to 64 characters with a hash; ``disambiguated``: hash added because
    another pair maps to the same name."""


def assign_aliases(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Alias for every distinct (server, tool) pair; unique, valid and order-independent."""
    return {pair: choice.alias for pair, choice in alias_choices(pairs).items()}


def alias_choices(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], AliasChoice]:
    """Like :func:`assign_aliases`, with how each alias was formed (for reports)."""
    return _choose(sorted(set(pairs)), _plain, _hashed)


def name_choices(names: Iterable[str]) -> dict[str, AliasChoice]:
    """One API-safe name per distinct MCP name, by the alias rules without a server part:
    the namespaces of ``--declare namespaces`` (one per server) and the tool names inside
    one namespace. ``exact`` means the name is kept as it is."""
    return _choose(sorted(set(names)), _plain_name, _hashed_name)


def namespaced_alias(namespace: str, name: str) -> str:
    """The alias of a tool declared as ``name`` inside ``namespace`` (what a call with that
    ``namespace`` and ``name`` routes by)."""
    return namespace + NAMESPACE_SEPARATOR + name


def _choose(
    unique: list[_Key], plain: Callable[[_Key], AliasChoice], hashed: Callable[[_Key, int], str]
) -> dict[_Key, AliasChoice]:
    """A unique choice per key (sorted): the plain one unless several keys share it."""
    plain_of = {key: plain(key) for key in unique}
    groups: dict[str, list[_Key]] = {}
    for key in unique:
        groups.setdefault(plain_of[key].alias, []).append(key)
    chosen: dict[_Key, AliasChoice] = {}
    for members in groups.values():
        winner = _keeps_plain(members, plain_of)
        if winner is not None:
            chosen[winner] = plain_of[winner]
    taken = {choice.alias for choice in chosen.values()}
    for key in unique:
        if key not in chosen:
            alias = _free_hashed(key, taken, hashed)
            taken.add(alias)
            chosen[key] = AliasChoice(alias=alias, how="disambiguated")
    return {key: chosen[key] for key in unique}


def _plain_name(name: str) -> AliasChoice:
    safe = _safe(name)
    if len(safe) > MAX_ALIAS_LENGTH:
        return AliasChoice(alias=_hashed_name(name, 0), how="shortened")
    return AliasChoice(alias=safe, how="exact" if safe == name else "mapped")


def _hashed_name(name: str, salt: int) -> str:
    """``<name cut>_<8 hex>``, at most 64 characters; the hash covers the original name."""
    key = json.dumps([name, salt], ensure_ascii=False).encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(key).hexdigest()[:_HASH_LENGTH]
    return f"{_safe(name)[:MAX_ALIAS_LENGTH - _HASH_LENGTH - 1]}_{digest}"


def _plain(pair: Pair) -> AliasChoice:
    """The alias a pair gets when nothing else competes for it."""
    server, tool = pair
    safe = _safe(server) + SEPARATOR + _safe(tool)
    if len(safe) > MAX_ALIAS_LENGTH:
        return AliasChoice(alias=_hashed(pair, salt=0), how="shortened")
    how: AliasHow = "exact" if safe == server + SEPARATOR + tool else "mapped"
    return AliasChoice(alias=safe, how=how)


def _keeps_plain(members: list[_Key], plain: dict[_Key, AliasChoice]) -> _Key | None:
    """Which key of a group sharing one plain alias may keep it (None: all get hashes)."""
    if len(members) == 1:
        return members[0]
    exact = [pair for pair in members if plain[pair].how == "exact"]
    return exact[0] if len(exact) == 1 else None


def _free_hashed(key: _Key, taken: set[str], hashed: Callable[[_Key, int], str]) -> str:
    salt = 0
    alias = hashed(key, salt)
    while alias in taken:  # a clash of 32-bit hashes or with a literal name: try the next salt
        salt += 1
        alias = hashed(key, salt)
    return alias


def _hashed(pair: Pair, salt: int) -> str:
    """``<stem>_<8 hex>``, at most 64 characters; the hash covers the original pair."""
    server, tool = pair
    key = json.dumps([server, tool, salt], ensure_ascii=False).encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(key).hexdigest()[:_HASH_LENGTH]
    stem = _stem(_safe(server), _safe(tool), MAX_ALIAS_LENGTH - _HASH_LENGTH - 1)
    return f"{stem}_{digest}"


def _stem(server: str, tool: str, room: int) -> str:
    """``server__tool`` cut to ``room`` characters, keeping a share of both parts."""
    parts_room = room - len(SEPARATOR)
    if len(server) + len(tool) <= parts_room:
        return server + SEPARATOR + tool
    server_kept = min(len(server), max(parts_room - len(tool), _MIN_SERVER_KEPT))
    return server[:server_kept] + SEPARATOR + tool[: parts_room - server_kept]


def _safe(part: str) -> str:
    return _UNSAFE.sub("_", part)


def server_prefix(server: str) -> str:
    """How the aliases of ``server``'s tools begin (``my.box`` → ``my_box__``), unless
    the alias had to be shortened."""
    return _safe(server) + SEPARATOR


def unknown_tool_message(name: str, available: Iterable[str]) -> str:
    """What the model reads when it calls a name that is not an alias."""
    names = sorted(set(available))
    shown = name if len(name) <= 80 else name[:80] + "…"
    if not names:
        return f"unknown tool '{shown}'; no tools are available"
    listed = ", ".join(names[:_LISTED_TOOLS])
    if len(names) > _LISTED_TOOLS:
        listed += f", … ({len(names) - _LISTED_TOOLS} more)"
    message = f"unknown tool '{shown}'; available tools: {listed}"
    close = difflib.get_close_matches(name[:200], names, n=3, cutoff=0.6)
    if close:
        message += "; did you mean " + " or ".join(f"'{match}'" for match in close) + "?"
    return message
