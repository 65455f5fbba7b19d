"""``text_encoder``: the encoder made once writes exactly what ``JSONEncoder.encode`` writes,
and refuses what it refuses (NaN where it is not allowed, a value nested too deep)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrelay.protocol.json_text import text_encoder

LINES = json.JSONEncoder(ensure_ascii=False, default=str)
"""The transcript writer's options (a line)."""
WIRE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""The model clients' options (the bytes posted)."""

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=24,
)


@given(values)
def test_the_text_is_the_encoders_own(value: Any) -> None:
    assert text_encoder(LINES)(value) == LINES.encode(value)
    if not _has_nan_or_infinity(value):
        assert text_encoder(WIRE)(value) == WIRE.encode(value)


def test_what_the_encoder_refuses_is_refused() -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        text_encoder(WIRE)({"temperature": math.nan})
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        text_encoder(LINES)(deep)


def test_a_value_json_cannot_hold_is_written_by_the_encoders_default() -> None:
    record = {"path": Path("/tmp/notes.txt"), "text": "naïve ✓", "when": 1796217698.9184332}
    assert text_encoder(LINES)(record) == LINES.encode(record) == (
        '{"path": "/tmp/notes.txt", "text": "naïve ✓", "when": 1796217698.9184332}')


def _has_nan_or_infinity(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, list):
        return any(_has_nan_or_infinity(item) for item in value)
    if isinstance(value, dict):
        return any(_has_nan_or_infinity(item) for item in value.values())
    return False
