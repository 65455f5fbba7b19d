"""The HTML writer: one self-contained file, the trace data inlined as inert JSON.

The page is ``trace.html`` with ``trace.css`` and ``trace.js`` inlined, and the trace as a
``<script type="application/json">`` block that the script reads and draws with DOM text
nodes only. Recorded content (tool output can hold ``<script>``) therefore never becomes
markup: in the JSON block ``<``, ``>`` and ``&`` are written as ``\\u`` escapes, so no
string can close the block. A Content-Security-Policy allows exactly the inlined script
and style (by hash) and nothing from the network, so the file opens offline and cannot
fetch or run anything else.
"""

from __future__ import annotations

import base64
import hashlib
import html
import itertools
import json
import re
from collections.abc import Iterable, Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any, Final

import orjson

from ..errors import UsageError, os_reason
from ..gc_pause import paused_gc
from .model import Badge, Trace, page_value

__all__ = ["embed_json", "embed_trace", "render_html", "write_html"]

_PLACEHOLDER: Final = re.compile(r"\{\{(\w+)\}\}")
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
"""Only a lone surrogate is left in a str as one (a pair is one character): JSON text a
tampered transcript can hold, written in the page as the escape it was read from."""
# Characters that could end the JSON block or start markup, and the two line separators
# that old parsers treat as newlines; all are legal as \u escapes inside JSON strings.
_JSON_ESCAPES: Final = {
    "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029",
}
_JSON_BYTE_ESCAPES: Final = tuple((character.encode("utf-8"), escape.encode("ascii"))
                                  for character, escape in _JSON_ESCAPES.items())
"""``_JSON_ESCAPES`` for a page kept as UTF-8 bytes (``_embedded_trace``)."""
_ESCAPED_AT_ONCE: Final = 1 << 20
"""Bytes of the trace's data escaped at a time (``_escaped_pieces``)."""


def embed_json(value: Any) -> str:
    """``value`` as JSON safe to place inside a ``<script type="application/json">`` element."""
    return _inert(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


def embed_trace(trace: Trace) -> str:
    """The trace's page data (``Trace.page_parts``) as ``embed_json`` writes it."""
    return b"".join(_embedded_trace(trace)).decode("utf-8")


def _embedded_trace(trace: Trace) -> Iterator[bytes]:
    """``embed_trace``'s text as UTF-8, encoded by orjson (10,000 calls: 0.7 s, where
    json.dumps of the plain tree took 5 s) and kept as bytes: the page is written as such,
    and a 74 MB text holding one non-ASCII character is 148 MB or more as a str. It is
    escaped a piece at a time while it is written (``_escaped_pieces``). What orjson
    cannot write (an integer beyond 64 bits, a lone surrogate a tampered transcript can
    hold) goes the slow way; a NaN it writes as null, which the page can read."""
    try:
        with paused_gc():  # a page record, and a dict passed to orjson, for each event
            data = orjson.dumps(trace.page_parts(), default=_encoded_value,
                                option=orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_NON_STR_KEYS)
    except TypeError:  # orjson.JSONEncodeError is one
        return iter([embed_json(trace.to_dict()).encode("utf-8")])
    return _escaped_pieces(data)


def _encoded_value(value: Any) -> Any:
    """``page_value`` for orjson, a row's badges written by orjson at once."""
    return page_value(value, badges=_written_badges)


def _written_badges(badges: list[Badge]) -> orjson.Fragment:
    """A row's badges as JSON, written by orjson as a dataclass of its own: every field, in
    order, as ``page_value`` would (a badge leaves none out), in one call (t10k: -0.1 s)."""
    return orjson.Fragment(orjson.dumps(badges))


def _escaped_pieces(data: bytes) -> Iterator[bytes]:
    """``data`` as ``_inert`` escapes it, a piece of about ``_ESCAPED_AT_ONCE`` bytes at a
    time: escaping the whole 74 MB of a 10,000-call run made a copy of it for each
    character replaced, and joining the page another. A piece ends before a character's
    first byte, so no character (and no escape's) is cut. orjson wrote no lone surrogate:
    it refuses them."""
    start = 0
    while start < len(data):
        end = min(start + _ESCAPED_AT_ONCE, len(data))
        while end < len(data) and data[end] & 0xC0 == 0x80:  # a continuation byte: inside a character
            end += 1
        piece = data[start:end]
        for character, escape in _JSON_BYTE_ESCAPES:
            piece = piece.replace(character, escape)
        yield piece
        start = end


def _inert(text: str) -> str:
    for character, escape in _JSON_ESCAPES.items():  # one C-level pass each: fast on 100 MB
        text = text.replace(character, escape)
    if _LONE_SURROGATE.search(text):  # no UTF-8 can hold one: the page could not be written
        text = _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
    return text


def _asset(name: str) -> str:
    return files("toolrelay.view").joinpath(name).read_text(encoding="utf-8")


def _csp_hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def render_html(trace: Trace) -> str:
    """The whole page for ``trace``."""
    return b"".join(_page(trace)).decode("utf-8")


def _page(trace: Trace) -> Iterator[bytes]:
    """``render_html``'s page as UTF-8, in pieces (what ``write_html`` writes); the trace's
    data is encoded at once, and escaped while the pieces are taken."""
    css, script = _asset("trace.css"), _asset("trace.js")
    policy = (
        f"default-src 'none'; script-src {_csp_hash(script)}; style-src {_csp_hash(css)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    values: dict[str, Iterable[bytes]] = {
        "title": [html.escape(trace.title).encode("utf-8")],
        "csp": [html.escape(policy, quote=False).encode("utf-8")],  # the policy holds no double quote
        "css": [css.encode("utf-8")],
        "script": [script.encode("utf-8")],
        "data": _embedded_trace(trace),
    }
    # One pass: text put in by one placeholder is never searched for another. The template
    # split at its placeholders alternates text and a placeholder's name (each there once:
    # the data's pieces can be taken once).
    pieces = _PLACEHOLDER.split(_asset("trace.html"))
    page: list[Iterable[bytes]] = [[piece.encode("utf-8")] for piece in pieces]
    page[1::2] = [values[name] for name in pieces[1::2]]
    return itertools.chain.from_iterable(page)


def write_html(trace: Trace, path: Path) -> None:
    """Write the page; an unwritable path is a UsageError naming it."""
    page = _page(trace)  # made before the file is opened: nothing is truncated if it fails
    try:
        with path.open("wb") as out:
            out.writelines(page)
    except BrokenPipeError:
        raise  # `-o /dev/stdout | head`: the reader went away, the path is writable
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {os_reason(exc)}") from None
