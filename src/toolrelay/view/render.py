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
import json
import re
from importlib.resources import files
from pathlib import Path
from typing import Any, Final

from ..errors import UsageError, os_reason
from .model import Trace

__all__ = ["embed_json", "render_html", "write_html"]

_PLACEHOLDER: Final = re.compile(r"\{\{(\w+)\}\}")
# Characters that could end the JSON block or start markup, and the two line separators
# that old parsers treat as newlines; all are legal as \u escapes inside JSON strings.
_JSON_ESCAPES: Final = {
    "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029",
}


def embed_json(value: Any) -> str:
    """``value`` as JSON safe to place inside a ``<script type="application/json">`` element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    for character, escape in _JSON_ESCAPES.items():  # one C-level pass each: fast on 100 MB
        text = text.replace(character, escape)
    return text


def _asset(name: str) -> str:
    return files("toolrelay.view").joinpath(name).read_text(encoding="utf-8")


def _csp_hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def render_html(trace: Trace) -> str:
    """The whole page for ``trace``."""
    css, script = _asset("trace.css"), _asset("trace.js")
    policy = (
        f"default-src 'none'; script-src {_csp_hash(script)}; style-src {_csp_hash(css)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    values = {
        "title": html.escape(trace.title),
        "csp": html.escape(policy, quote=False),  # the policy holds no double quote
        "css": css,
        "script": script,
        "data": embed_json(trace.to_dict()),
    }
    # One pass: text put in by one placeholder is never searched for another.
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], _asset("trace.html"))


def write_html(trace: Trace, path: Path) -> None:
    """Write the page; an unwritable path is a UsageError naming it."""
    try:
        path.write_text(render_html(trace), encoding="utf-8")
    except BrokenPipeError:
        raise  # `-o /dev/stdout | head`: the reader went away, the path is writable
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {os_reason(exc)}") from None
