"""JSON text with one encoder made once: a transcript encodes every line, and
``json.JSONEncoder.encode`` builds its C encoder (and the dict of its cycle check) again
on every call, which costs as much as encoding a short line.

``text_encoder(encoder)`` gives the same text as ``encoder.encode``, from the C encoder
made once with the encoder's options (the stdlib's own, ``json.encoder.c_make_encoder``;
where there is none, ``encoder.encode`` itself). It skips the cycle check: a cyclic value
(never one decoded from JSON, which every recorded value is or is made of) raises
``RecursionError`` instead of ``ValueError``, as a value nested too deep does.
"""

from __future__ import annotations

import json.encoder
from collections.abc import Callable
from typing import Any

__all__ = ["text_encoder"]


def text_encoder(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """``encoder.encode``, made once (``encoder`` has no indent)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    indent: object = encoder.indent  # None when not given (typeshed says int | str)
    if make is None or indent is not None:
        return encoder.encode
    strings = json.encoder.encode_basestring_ascii if encoder.ensure_ascii else json.encoder.encode_basestring
    made = make(None, encoder.default, strings, None, encoder.key_separator, encoder.item_separator,
                encoder.sort_keys, encoder.skipkeys, encoder.allow_nan)

    def encode(value: Any) -> str:
        return "".join(made(value, 0))

    return encode
