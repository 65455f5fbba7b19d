"""Property tests of the strict conversion over generated schemas (hypothesis).

(1) Every converted schema keeps the strict rules, checked by relay_helpers.strict_violations,
which restates the rules independently. (2) Every value valid under the strict schema is,
after null-stripping, valid under the original: the strict declaration never makes the
model produce arguments the server's own schema refuses.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from relay_helpers import Exhausted, original_schemas, strict_value, strict_violations

from toolrelay.relay.stages.alias import ALIAS_PATTERN, assign_aliases
from toolrelay.relay.stages.declare import normalize_parameters
from toolrelay.relay.stages.optional_nulls import strip_optional_nulls
from toolrelay.relay.stages.strict import to_strict

SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


def _convert(original: dict[str, Any]) -> dict[str, Any]:
    parameters, _ = normalize_parameters(original)
    conversion = to_strict(parameters)
    assert conversion.fallback is None, str(conversion.fallback)
    assert conversion.parameters is not None
    return conversion.parameters


def _strict_value_or_skip(data: st.DataObject, strict: dict[str, Any]) -> Any:
    try:
        return strict_value(data.draw, strict, strict)
    except Exhausted:
        assume(False)
        raise


@SETTINGS
@given(original_schemas(), st.data())
def test_strict_conversion_keeps_the_rules_and_its_values_fit_the_original(
    original: dict[str, Any], data: st.DataObject
) -> None:
    # One generated schema serves both properties: generating schemas is the slow part.
    Draft202012Validator.check_schema(original)
    before = copy.deepcopy(original)
    strict = _convert(original)
    assert original == before, "the original schema (the rule) is never modified"
    # (1) the strict rules, checked independently
    assert strict_violations(strict) == []
    # (2) strict values, null-stripped, satisfy the original
    value = _strict_value_or_skip(data, strict)
    assert list(Draft202012Validator(strict).iter_errors(value)) == []  # the generator is right
    sent = copy.deepcopy(value)
    stripped = strip_optional_nulls(sent, original)
    assert sent == value, "strip_optional_nulls must not modify its input"
    errors = [
        f"{list(e.absolute_path)}: {e.message}" for e in Draft202012Validator(original).iter_errors(stripped)
    ]
    assert errors == []


_NAME_PARTS = st.text(alphabet="ab._/ é-_", max_size=6)


@SETTINGS
@given(st.lists(st.tuples(_NAME_PARTS, _NAME_PARTS), max_size=12), st.randoms(use_true_random=False))
def test_aliases_are_valid_unique_and_independent_of_order(pairs: list[tuple[str, str]], rng: Any) -> None:
    aliases = assign_aliases(pairs)
    assert set(aliases) == set(pairs)
    assert all(ALIAS_PATTERN.fullmatch(alias) for alias in aliases.values())
    assert len(set(aliases.values())) == len(aliases)
    shuffled = list(pairs)
    rng.shuffle(shuffled)
    assert assign_aliases(shuffled) == aliases


@SETTINGS
@given(st.lists(st.tuples(st.text(max_size=90), st.text(max_size=90)), max_size=6))
def test_aliases_of_any_unicode_and_length_are_valid_and_unique(pairs: list[tuple[str, str]]) -> None:
    aliases = assign_aliases(pairs)
    assert all(ALIAS_PATTERN.fullmatch(alias) for alias in aliases.values())
    assert len(set(aliases.values())) == len(aliases)
