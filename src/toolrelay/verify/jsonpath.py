"""Small JSON helpers for findings: where two values first differ, and short excerpts."""

from __future__ import annotations

import json
import marshal
from typing import Any, Final

from ..protocol.responses import MESSAGE

__all__ = ["excerpt", "first_difference", "item_label", "json_equal"]

_EXCERPT: Final = 60


def first_difference(expected: Any, actual: Any, path: str = "") -> str | None:
    """The JSON path (``input[1].arguments``) where ``actual`` first departs from
    ``expected``, or None when they are equal (descending only where they differ)."""
    while True:
        if json_equal(expected, actual):
            return None
        if isinstance(expected, dict) and isinstance(actual, dict):
            key = _first_key_difference(expected, actual)
            if key is None or key not in expected or key not in actual:
                return _join(path, key) if key is not None else path or "(root)"
            path, expected, actual = _join(path, key), expected[key], actual[key]
        elif isinstance(expected, list) and isinstance(actual, list):
            pairs = enumerate(zip(expected, actual, strict=False))
            index = next((i for i, (a, b) in pairs if not json_equal(a, b)), None)
            if index is None:
                return f"{path}[{min(len(expected), len(actual))}]"
            path, expected, actual = f"{path}[{index}]", expected[index], actual[index]
        else:
            return path or "(root)"


def _first_key_difference(expected: dict[str, Any], actual: dict[str, Any]) -> str | None:
    for key in expected:
        if key not in actual or not json_equal(expected[key], actual[key]):
            return key
    return next((key for key in actual if key not in expected), None)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


_ENCODE: Final = json.JSONEncoder(ensure_ascii=False).encode
_ENCODE_STRING: Final = json.encoder.encode_basestring  # the C encoder when available


def excerpt(value: Any, limit: int = _EXCERPT) -> str:
    """``value`` as short JSON text for a message (long ones cut with an ellipsis)."""
    # a long string: encode only what can be shown
    text = _ENCODE_STRING(value[: 4 * limit]) if isinstance(value, str) else _ENCODE(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _dump(value: Any) -> bytes:
    # marshal keeps bool, int and float apart and is several times faster than repr;
    # format 2 writes no back-references, so equal values give equal bytes (else: the slow path)
    return marshal.dumps(value, 2)


def json_equal(left: Any, right: Any) -> bool:
    """Equality of JSON values that, unlike ``==``, keeps true apart from 1 (and false from 0)."""
    if left is right:
        return True
    if isinstance(left, dict | list) and left == right and _dump(left) == _dump(right):
        return True  # equal and encoded alike: no true hiding behind a 1 (checked in C)
    if type(left) is not type(right):
        if isinstance(left, bool) or isinstance(right, bool):
            return False
        return isinstance(left, int | float) and isinstance(right, int | float) and left == right
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(json_equal(v, right[k]) for k, v in left.items())
    if isinstance(left, list):
        return len(left) == len(right) and all(map(json_equal, left, right))
    return bool(left == right)


def item_label(item: Any) -> str:
    """A Responses input/output item named by its type and id: ``function_call call_x``."""
    if not isinstance(item, dict):
        return f"a {type(item).__name__}"
    kind = item.get("type") or (MESSAGE if "role" in item else "item")  # a message may omit its type
    ident = item.get("call_id") or item.get("id") or item.get("role")
    return f"{kind} {ident}" if ident else str(kind)
