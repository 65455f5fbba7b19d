"""Stage 3, parse (arguments): the model's ``arguments`` text → a checked value.

The text is parsed strictly: JSON only (no NaN / Infinity, no number that overflows to
infinity), no duplicate keys (which copy would the server see?), an object at the top, no
unpaired surrogates (they cannot be sent as UTF-8). The value is then validated against
the tool's *original* inputSchema, with the draft the schema declares (2020-12 when it
declares none). Remote ``$ref`` s are never fetched: a schema from a server must not make
toolrelay open URLs.

Every failure is an :class:`ArgumentError` value the model can act on: which field, what
was expected, what was given. A schema the validator cannot use is reported as the
tool's own problem (kind ``tool_schema``), never raised.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Literal

from ...protocol.json_depth import opening_brackets
from .optional_nulls import strip_optional_nulls
from .quick_check import Check, quick_check
from .strict import json_type_name

if TYPE_CHECKING:  # jsonschema is imported for the first value the quick check cannot vouch for
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

__all__ = [
    "MAX_ARGUMENT_DEPTH",
    "MAX_PROBLEMS",
    "ArgumentChecker",
    "ArgumentError",
    "ArgumentErrorKind",
    "clip",
    "parse_arguments",
    "validator_class",
]

MAX_PROBLEMS: Final = 5
"""Validation problems listed in one message; the rest are counted."""
MAX_ARGUMENT_DEPTH: Final = 64
"""Arrays/objects nested deeper than this are refused before validation."""
_MAX_ERRORS_READ: Final = 100
_SHOWN_CHARS: Final = 60
_EXCERPT_CHARS: Final = 24
_LISTED_NAMES: Final = 20
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


@cache
def _drafts() -> tuple[type[Validator], ...]:
    from jsonschema import validators

    return (
        validators.Draft202012Validator,
        validators.Draft201909Validator,
        validators.Draft7Validator,
        validators.Draft6Validator,
        validators.Draft4Validator,
        validators.Draft3Validator,
    )

ArgumentErrorKind = Literal["empty", "json", "not_object", "invalid", "tool_schema"]


@dataclass(slots=True, kw_only=True, frozen=True)
class ArgumentError:
    """Why the arguments cannot be sent; ``message`` is written for the model to act on."""

    kind: ArgumentErrorKind
    """``empty``/``json``/``not_object``: the text; ``invalid``: the value breaks the
    schema; ``tool_schema``: the tool's own schema is unusable (the server's fault)."""
    message: str
    problems: tuple[str, ...] = ()
    """For ``invalid``: one line per problem (all of them, not only the listed ones)."""


# -- parsing -----------------------------------------------------------------------------------


class _Refused(ValueError):
    """Raised from the JSON decoder hooks: valid-looking text that is not strict JSON."""


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON value (JSON has no NaN or Infinity; send a number or null)")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _Refused(f"the number {clip(text)} is too large (it would become infinite)")
    return number


def _bounded_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise _Refused(f"an integer with {len(text)} digits is too long") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Refused(f"the key {_show(key)} appears twice in one object")
        result[key] = value
    return result


_DECODER: Final = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float,
                                   parse_int=_bounded_int, object_pairs_hook=_unique_keys)
"""``json.loads`` with these hooks, made once (``loads`` makes a decoder and its scanner
for every text it is given)."""


def parse_arguments(text: str) -> dict[str, Any] | ArgumentError:
    """The model's arguments text as an object, or why it is not one."""
    if not text.strip():
        return ArgumentError(kind="empty", message="arguments are empty: send a JSON object, for example {}")
    try:
        if text.startswith("\ufeff"):  # as json.loads refuses it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = _DECODER.decode(text)
    except json.JSONDecodeError as error:
        return ArgumentError(kind="json", message=_decode_message(text, error))
    except _Refused as error:
        return ArgumentError(kind="json", message=f"arguments are not valid JSON: {error}")
    except RecursionError:
        return ArgumentError(kind="json", message="arguments are not usable: JSON nested too deeply")
    if not isinstance(value, dict):
        message = f"arguments must be a JSON object, got {json_type_name(value)}: {_show(value)}"
        return ArgumentError(kind="not_object", message=message)
    problem = None if _surely_sendable(text) else _unsendable(value)
    if problem is not None:
        return ArgumentError(kind="json", message=f"arguments are not usable: {problem}")
    return value


def _decode_message(text: str, error: json.JSONDecodeError) -> str:
    before = text[max(0, error.pos - _EXCERPT_CHARS) : error.pos]
    after = text[error.pos : error.pos + _EXCERPT_CHARS]
    excerpt = ("…" if error.pos > _EXCERPT_CHARS else "") + before + "<here>" + after
    excerpt += "…" if error.pos + _EXCERPT_CHARS < len(text) else ""
    excerpt = excerpt.replace("\n", "\\n").replace("\r", "\\r")
    return (
        f"arguments are not valid JSON: {error.msg}: line {error.lineno} column {error.colno} "
        f"(character {error.pos}), near {_escape_surrogates(excerpt)}"
    )


def _surely_sendable(text: str) -> bool:
    """Whether the value ``text`` parses to surely passes ``_unsendable``, read off the text
    in C: fewer brackets than the depth limit cannot nest past it, and a string holds a
    surrogate only if the text has one or a ``\\u`` escape (which could spell one)."""
    return (opening_brackets(text) < MAX_ARGUMENT_DEPTH and "\\u" not in text
            and _SURROGATE.search(text) is None)


def _unsendable(value: dict[str, Any]) -> str | None:
    """Depth beyond the limit, or a string that cannot be encoded as UTF-8."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_ARGUMENT_DEPTH:
            return f"arrays/objects nested deeper than {MAX_ARGUMENT_DEPTH} levels"
        if isinstance(node, str) and _SURROGATE.search(node):
            return f"the string {_show(node)} contains an unpaired surrogate (not valid Unicode)"
        if isinstance(node, dict):
            stack.extend((key, depth) for key in node)
            stack.extend((item, depth + 1) for item in node.values())
        elif isinstance(node, list):
            stack.extend((item, depth + 1) for item in node)
    return None


# -- validation --------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class _Cached:
    fingerprint: str
    validator: Validator | None
    problem: ArgumentError | None
    rule: Any = None
    """The rule object it was built for: the same object needs no re-hashing."""
    quick: Check | None = None
    """Says True only for values the validator accepts too (``quick_check``): those skip it."""
    deferred: bool = False
    """No validator built yet (``_deferred``): the first value ``quick`` cannot vouch for builds it."""


class ArgumentChecker:
    """Validates arguments against each tool's original inputSchema, one cached validator
    per alias (rebuilt when the schema changes, e.g. after ``tools/list_changed``)."""

    def __init__(self, *, max_problems: int = MAX_PROBLEMS) -> None:
        self._max_problems = max_problems
        self._cache: dict[str, _Cached] = {}

    def prepare(
        self, alias: str, rule: Mapping[str, Any], text: str, *, strict: bool
    ) -> dict[str, Any] | ArgumentError:
        """Parse ``text``, strip the nulls a strict declaration added, validate: the value
        to send as MCP ``params.arguments``, or why there is none."""
        value = parse_arguments(text)
        if isinstance(value, ArgumentError):
            return value
        if strict:
            value = strip_optional_nulls(value, rule)
        problem = self.validate(alias, rule, value)
        return value if problem is None else problem

    def validate(self, alias: str, rule: Mapping[str, Any], value: Any) -> ArgumentError | None:
        """None when ``value`` satisfies ``rule``; otherwise what is wrong with it."""
        cached = self._validator(alias, rule)
        if cached.deferred:
            if cached.quick is not None and cached.quick(value):
                return None
            cached = self._cache[alias] = _build_validator(rule, cached.fingerprint)
        if cached.validator is None:
            return cached.problem
        if cached.quick is not None and cached.quick(value):  # plainly valid: jsonschema would agree
            return None
        try:
            errors = _first(cached.validator.iter_errors(value), _MAX_ERRORS_READ)
        except Exception as error:  # the schema is untrusted: any failure inside it is the tool's
            return _tool_schema_problem(_describe_crash(error))
        if not errors:
            return None
        problems = _unique(line for error in errors for line in _describe(error))
        return ArgumentError(kind="invalid", message=self._summary(problems), problems=problems)

    def _validator(self, alias: str, rule: Mapping[str, Any]) -> _Cached:
        cached = self._cache.get(alias)
        if cached is not None and cached.rule is rule:  # the catalog's rules are never mutated
            return cached
        fingerprint = _fingerprint(rule)
        if cached is None or cached.fingerprint != fingerprint:
            cached = _deferred(rule, fingerprint) or _build_validator(rule, fingerprint)
        else:
            cached = replace(cached, rule=rule)
        self._cache[alias] = cached
        return cached

    def _summary(self, problems: tuple[str, ...]) -> str:
        head = "arguments do not match the tool's input schema"
        if len(problems) == 1:
            return f"{head}: {problems[0]}"
        listed = [f"- {line}" for line in problems[: self._max_problems]]
        if len(problems) > self._max_problems:
            listed.append(f"- … and {len(problems) - self._max_problems} more")
        return f"{head} ({len(problems)} problems):\n" + "\n".join(listed)


def _fingerprint(rule: Mapping[str, Any]) -> str:
    text = json.dumps(rule, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _deferred(rule: Any, fingerprint: str) -> _Cached | None:
    """A schema of ``quick_check``'s subset that names no draft is valid as it stands (the
    default draft 2020-12's meta-schema allows each keyword in the form the subset reads it),
    so jsonschema (~0.1 s to import) and its validator wait for a value the quick check
    cannot vouch for: most runs never need them. None: build the validator now."""
    if not isinstance(rule, dict) or "$schema" in rule:
        return None
    quick = quick_check(rule)
    return None if quick is None else _Cached(fingerprint, None, None, rule, quick, deferred=True)


def _build_validator(rule: Any, fingerprint: str) -> _Cached:
    """The validator for ``rule`` (Any: a server may send a non-object schema)."""
    import jsonschema
    import referencing

    if not isinstance(rule, dict):
        problem = _tool_schema_problem(f"the schema is not an object (got {json_type_name(rule)})")
        return _Cached(fingerprint, None, problem, rule)
    cls = validator_class(rule)
    try:
        cls.check_schema(rule)
    except jsonschema.SchemaError as error:
        where = _path_text(error.absolute_path, root="(schema)")
        return _Cached(fingerprint, None, _tool_schema_problem(f"{where}: {error.message}"), rule)
    except Exception as error:  # e.g. RecursionError on a pathological schema
        return _Cached(fingerprint, None, _tool_schema_problem(_describe_crash(error)), rule)
    # An empty registry: $refs resolve inside the schema only; nothing is fetched.
    quick = quick_check(rule) if cls is not _drafts()[-1] else None  # draft 3's keywords differ
    return _Cached(fingerprint, cls(rule, registry=referencing.Registry()), None, rule, quick)


def validator_class(rule: Mapping[str, Any]) -> type[Validator]:
    """The validator for the draft ``rule`` declares in ``$schema`` (2020-12 by default)."""
    declared = rule.get("$schema")
    if isinstance(declared, str):
        wanted = _draft_key(declared)
        for cls in _drafts():
            if _draft_key(str(cls.META_SCHEMA.get("$id") or cls.META_SCHEMA.get("id"))) == wanted:
                return cls
    return _drafts()[0]


def _draft_key(uri: str) -> str:
    return uri.split("://", 1)[-1].rstrip("#").rstrip("/")


def _tool_schema_problem(detail: str) -> ArgumentError:
    message = (
        "the tool's input schema is invalid, so these arguments cannot be checked "
        f"(a problem of the tool's server, not of the arguments): {detail}"
    )
    return ArgumentError(kind="tool_schema", message=message)


def _describe_crash(error: Exception) -> str:
    if isinstance(error, RecursionError):
        return "its $ref chain loops or nests too deeply"
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return clip(text, 200)


def _first(errors: Iterator[ValidationError], limit: int) -> list[ValidationError]:
    found: list[ValidationError] = []
    for error in errors:
        found.append(error)
        if len(found) >= limit:
            break
    return found


def _unique(lines: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(lines))


# -- messages ----------------------------------------------------------------------------------


def _describe(error: ValidationError) -> list[str]:
    """One line per problem: ``<field>: expected <what>, got <value>``."""
    path = list(error.absolute_path)
    keyword = str(error.validator)
    expected: Any = error.validator_value
    given: Any = error.instance
    if keyword == "required":
        missing = [name for name in expected if name not in given]
        return [f"{_path_text([*path, name])}: required property is missing" for name in missing]
    if keyword == "additionalProperties" and isinstance(given, dict):
        return _unexpected(error, path)
    return [f"{_path_text(path)}: {_expectation(error)}"]


def _unexpected(error: ValidationError, path: list[str | int]) -> list[str]:
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    declared = list(schema.get("properties", {}))
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    given: Any = error.instance
    extras = [
        key for key in given
        if key not in declared and not any(p.search(key) for p in patterns)
    ]
    allowed = ", ".join(declared[:_LISTED_NAMES]) + (", …" if len(declared) > _LISTED_NAMES else "")
    where = f"allowed: {allowed}" if declared else "this object takes no properties"
    return [f"{_path_text([*path, key])}: unexpected property ({where})" for key in extras]


_COMPARISONS: Final = {
    "minimum": "a number >= {}",
    "maximum": "a number <= {}",
    "exclusiveMinimum": "a number > {}",
    "exclusiveMaximum": "a number < {}",
    "multipleOf": "a multiple of {}",
}
_COUNTS: Final = {
    "minLength": ("at least", "character", "characters"),
    "maxLength": ("at most", "character", "characters"),
    "minItems": ("at least", "item", "items"),
    "maxItems": ("at most", "item", "items"),
    "minProperties": ("at least", "property", "properties"),
    "maxProperties": ("at most", "property", "properties"),
}


def _expectation(error: ValidationError) -> str:
    keyword = str(error.validator)
    expected: Any = error.validator_value
    given: Any = error.instance
    got = f"got {_show(given)} ({json_type_name(given)})"
    if keyword == "type":
        kinds = expected if isinstance(expected, list) else [expected]
        return f"expected {' or '.join(str(kind) for kind in kinds)}, {got}"
    if keyword == "enum":
        values = ", ".join(_show(v) for v in expected[:10]) + (", …" if len(expected) > 10 else "")
        return f"expected one of {values}, {got}"
    if keyword == "const":
        return f"expected {_show(expected)}, {got}"
    if keyword in _COMPARISONS:
        keyword = _draft4_exclusive(error, keyword)
        return f"expected {_COMPARISONS[keyword].format(_show(expected))}, {got}"
    if keyword in _COUNTS:
        bound, one, many = _COUNTS[keyword]
        return f"expected {bound} {_show(expected)} {one if expected == 1 else many}, {got}"
    if keyword == "pattern":
        return f"expected text matching the pattern {_show(expected)}, {got}"
    if keyword in ("anyOf", "oneOf"):
        return _alternatives(error, got)
    return f"does not satisfy {keyword!s} {clip(json.dumps(expected, default=repr))}, {got}"


def _draft4_exclusive(error: ValidationError, keyword: str) -> str:
    """Draft-04 writes ``exclusiveMinimum: true`` beside ``minimum``; the bound is then strict."""
    exclusive = {"minimum": "exclusiveMinimum", "maximum": "exclusiveMaximum"}.get(keyword)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    return exclusive if exclusive is not None and schema.get(exclusive) is True else keyword


def _alternatives(error: ValidationError, got: str) -> str:
    if not error.context:
        return f"matches more than one of the alternatives (exactly one is allowed), {got}"
    # The alternative whose type fitted and that got furthest into the value is the one
    # the model most likely meant.
    closest = max(error.context, key=lambda sub: (sub.validator != "type", len(sub.absolute_path)))
    detail = _describe(closest)[0]
    if list(closest.absolute_path) == list(error.absolute_path):
        detail = detail.split(": ", 1)[1]
    return f"matches none of the allowed alternatives (closest: {detail})"


def _path_text(path: Any, root: str = "(arguments)") -> str:
    """``head``, ``options/depth``, ``files/0/path``; ``root`` for the whole object."""
    parts = [str(part).replace("~", "~0").replace("/", "~1") for part in path]
    return "/".join(parts) if parts else root


def _show(value: Any) -> str:
    return clip(_escape_surrogates(json.dumps(value, ensure_ascii=False, default=repr)), _SHOWN_CHARS)


def _escape_surrogates(text: str) -> str:
    """Messages must stay valid UTF-8 even when they quote an unpaired surrogate."""
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def clip(text: str, limit: int = _SHOWN_CHARS) -> str:
    """``text``, cut to ``limit`` characters (the last one an ellipsis) when longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
