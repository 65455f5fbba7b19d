"""JSON from outside, with a nesting limit: too deep is malformed, never a RecursionError.

CPython's json decoder recurses once per nesting level, and so does whatever walks the
value afterwards (the encoders, verify, view): JSON nested about 1,000 deep raises
``RecursionError`` wherever it is first walked. So every JSON toolrelay reads from
outside -- MCP messages on both sides, HTTP bodies, model answers, transcripts and their
attachments, config files, stand-in scripts -- goes through ``loads`` (JSON-RPC's own
decoder calls ``nested_too_deep``). Past ``MAX_DEPTH`` it raises ``JsonTooDeep``, a
``json.JSONDecodeError`` and so a ``ValueError``, which callers answer like any
malformed JSON. 512 levels is far above real documents (schemas and tool results nest
a few dozen) and far enough below the recursion limit (1,000 frames) for later walks of
an accepted value.

The cost: nothing for a text shorter than ``2 * MAX_DEPTH`` characters or holding fewer
than ``MAX_DEPTH`` opening brackets (it cannot nest deeper; the brackets are counted in C);
above, one walk of the decoded value, level by level in C (a few percent of the decoding).
The position in the error is found only when the limit is exceeded.

The writing side: ``clip_depth`` copies a value with what lies deeper than a limit
replaced by a note, for a record that must be written whatever it holds.
"""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path
from typing import Any, Final

from ..errors import UsageError
from . import json_fast

__all__ = ["MAX_DEPTH", "RECORD_DEPTH", "JsonTooDeep", "clip_depth", "load_file", "loads", "nested_too_deep",
           "opening_brackets"]

MAX_DEPTH: Final = 512
"""Nesting allowed in JSON read from outside (arrays and objects count, the top one is 1)."""
RECORD_DEPTH: Final = MAX_DEPTH + 32
"""Nesting allowed in files toolrelay writes around such JSON (transcript lines, attachments):
a record wraps a message, a model answer or a request body in a few levels."""

_CONTAINERS: Final = (dict, list)
# A JSON string (escapes included), or a bracket outside strings.
_TOKENS: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|(?P<open>[\[{])|[\]}]')


class JsonTooDeep(json.JSONDecodeError):
    """JSON nested deeper than the limit; ``pos`` is the first bracket too many."""


def loads(data: str | bytes | bytearray, *, max_depth: int = MAX_DEPTH, **options: Any) -> Any:
    """``json.loads(data, **options)``; ``JsonTooDeep`` when nested deeper than ``max_depth``,
    a ``json.JSONDecodeError`` for an integer longer than Python converts (``int_max_str_digits``).

    Without options, orjson parses it where its value is sure to be ``json.loads``'s
    (``json_fast``); anything else, every error included, is ``json.loads``'s own."""
    try:
        value = json.loads(data, **options) if options else json_fast.loads(data)
    except RecursionError:
        raise _too_deep(data, max_depth) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # an integer past Python's digit limit: malformed for every caller
        raise json.JSONDecodeError(f"a number too long to read ({str(exc).split(':')[0]})", "", 0) from None
    if nested_too_deep(value, data, max_depth):
        raise _too_deep(data, max_depth)
    return value


def load_file(path: str | Path, what: str) -> Any:
    """The JSON value of the file a user named as ``what`` (``script``, ``prices``): a
    ``UsageError`` (exit 2) names the file and says why it cannot be read or parsed."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} {path} is not UTF-8 text: {exc.reason}") from exc
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{what} {path} is not valid JSON: line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc


def nested_too_deep(value: Any, text: str | bytes | bytearray, max_depth: int = MAX_DEPTH) -> bool:
    """Whether ``value``, decoded from ``text``, nests deeper than ``max_depth``."""
    # each level takes an opening and a closing bracket: a short text cannot be too deep,
    # nor one with fewer opening brackets than levels (counted in C, strings and all)
    return len(text) > 2 * max_depth and opening_brackets(text) > max_depth and _deeper_than(value, max_depth)


def opening_brackets(text: str | bytes | bytearray) -> int:
    """How many arrays and objects a JSON text opens at most (counted in C, strings and all):
    it nests no deeper than that."""
    if isinstance(text, str):
        return text.count("[") + text.count("{")
    return text.count(b"[") + text.count(b"{")


def _deeper_than(value: Any, max_depth: int) -> bool:
    """One level at a time, at C speed: ``gc.get_referents`` of dicts and lists is their
    values and items (what their ``tp_traverse`` visits); of strings, numbers, booleans
    and null it is nothing, so a level of leaves ends the walk."""
    level = [value]
    for _ in range(max_depth):
        level = gc.get_referents(*level)
        if not level:
            return False
    return any(isinstance(node, _CONTAINERS) for node in level)


def _too_deep(data: str | bytes | bytearray, max_depth: int = MAX_DEPTH) -> JsonTooDeep:
    """The error for ``data`` nested deeper than ``max_depth``, with the position."""
    text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
    return JsonTooDeep(f"nested deeper than {max_depth} levels", text, _first_too_deep(text, max_depth))


def _first_too_deep(text: str, max_depth: int) -> int:
    depth = 0
    for token in _TOKENS.finditer(text):
        if token.lastgroup == "open":
            depth += 1
            if depth > max_depth:
                return token.start()
        elif token.group()[0] != '"':
            depth -= 1
    return 0  # not found by brackets (the decoder's own recursion limit was lower)


def clip_depth(value: Any, max_depth: int = MAX_DEPTH) -> Any:
    """A copy of ``value`` whose arrays and objects deeper than ``max_depth`` are replaced by a
    note saying so; no recursion, so any depth works. Tuples become lists, as in JSON."""
    note = f"[nested deeper than {max_depth} levels: not kept]"
    root: list[Any] = [None]
    pending: list[tuple[Any, Any, Any, int]] = [(root, 0, value, 1)]  # (parent, key, node, depth)
    while pending:
        parent, key, node, depth = pending.pop()
        if not isinstance(node, (dict, list, tuple)):
            parent[key] = node
            continue
        if depth > max_depth:
            parent[key] = note
            continue
        copy: Any = dict(node) if isinstance(node, dict) else list(node)
        parent[key] = copy
        children = node.items() if isinstance(node, dict) else enumerate(node)
        pending.extend((copy, child_key, child, depth + 1) for child_key, child in children
                       if isinstance(child, (dict, list, tuple)))
    return root[0]
