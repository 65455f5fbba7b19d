"""An elicitation form: the spec's restricted ``requestedSchema`` as fields, their defaults
(SEP-1034), and a typed answer read from text (what the terminal prompt, or any other
front end, collects).

The schema is an object of primitive properties only: strings (``minLength``,
``maxLength``, ``format`` email / uri / date / date-time), numbers and integers
(``minimum``, ``maximum``), booleans, single-select enums (``enum``, ``enum`` +
``enumNames``, ``oneOf`` of ``{const, title}``) and multi-select enums (an array whose
``items`` are an ``enum`` or an ``anyOf`` of ``{const, title}``, with ``minItems`` /
``maxItems``). Anything else is refused (``ValueError`` naming the property), which the
connection answers with -32602.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

__all__ = ["FormField", "form_fields", "schema_defaults"]

_EMAIL: Final = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_FORMATS: Final = frozenset({"email", "uri", "date", "date-time"})
_YES: Final = frozenset({"y", "yes", "true", "1"})
_NO: Final = frozenset({"n", "no", "false", "0"})
_NO_DEFAULT: Final = object()


@dataclass(frozen=True, slots=True, kw_only=True)
class FormField:
    """One property of the form."""

    name: str
    kind: str
    """``string``, ``number``, ``integer``, ``boolean``, ``choice`` (one of ``options``) or
    ``choices`` (several)."""
    title: str
    description: str = ""
    required: bool = False
    default: Any = _NO_DEFAULT
    options: tuple[tuple[str, str], ...] = ()
    """(value, label) of a choice."""
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    min_items: int | None = None
    max_items: int | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    def parse(self, text: str) -> Any:
        """The value typed as ``text`` (a choice by its number, value or label; several
        separated by commas); ``ValueError`` saying what is expected."""
        text = text.strip()
        value = _PARSERS[self.kind](self, text)
        problem = self.check(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    def check(self, value: Any) -> str | None:
        """Why ``value`` does not fit the field, or None."""
        return _CHECKS[self.kind](self, value)

    def _choice(self, text: str) -> str:
        if text.isdigit() and 1 <= int(text) <= len(self.options):
            return self.options[int(text) - 1][0]
        for value, label in self.options:
            if text in (value, label):
                return value
        raise ValueError(f"choose one of 1-{len(self.options)}")


def _parse_string(field: FormField, text: str) -> str:
    return text


def _parse_number(field: FormField, text: str) -> float | int:
    try:
        value = int(text) if field.kind == "integer" else float(text)
    except ValueError:
        raise ValueError("a whole number" if field.kind == "integer" else "a number") from None
    if isinstance(value, float) and value.is_integer() and "." not in text and "e" not in text.lower():
        return int(value)  # "42" stays the integer the user typed
    return value


def _parse_boolean(field: FormField, text: str) -> bool:
    if text.lower() in _YES:
        return True
    if text.lower() in _NO:
        return False
    raise ValueError("yes or no")


def _parse_choice(field: FormField, text: str) -> str:
    return field._choice(text)


def _parse_choices(field: FormField, text: str) -> list[str]:
    picked: list[str] = []
    for part in (p for p in text.split(",") if p.strip()):
        value = field._choice(part.strip())
        if value not in picked:
            picked.append(value)
    return picked


_PARSERS: Final = {
    "string": _parse_string, "number": _parse_number, "integer": _parse_number,
    "boolean": _parse_boolean, "choice": _parse_choice, "choices": _parse_choices,
}


def _check_string(field: FormField, value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be text"
    if field.min_length is not None and len(value) < field.min_length:
        return f"at least {field.min_length} characters"
    if field.max_length is not None and len(value) > field.max_length:
        return f"at most {field.max_length} characters"
    return _format_problem(field.format, value) if field.format else None


def _check_number(field: FormField, value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "must be a number"
    if field.kind == "integer" and not (isinstance(value, int) or value.is_integer()):
        return "must be a whole number"
    if field.minimum is not None and value < field.minimum:
        return f"at least {field.minimum:g}"
    if field.maximum is not None and value > field.maximum:
        return f"at most {field.maximum:g}"
    return None


def _check_boolean(field: FormField, value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be yes or no"


def _check_choice(field: FormField, value: Any) -> str | None:
    return None if value in [v for v, _ in field.options] else "not one of the choices"


def _check_choices(field: FormField, value: Any) -> str | None:
    allowed = [v for v, _ in field.options]
    if not isinstance(value, list) or any(item not in allowed for item in value):
        return "not among the choices"
    if field.min_items is not None and len(value) < field.min_items:
        return f"choose at least {field.min_items}"
    if field.max_items is not None and len(value) > field.max_items:
        return f"choose at most {field.max_items}"
    return None


_CHECKS: Final = {
    "string": _check_string, "number": _check_number, "integer": _check_number,
    "boolean": _check_boolean, "choice": _check_choice, "choices": _check_choices,
}


def _format_problem(form: str, value: str) -> str | None:
    if form == "email" and not _EMAIL.fullmatch(value):
        return "an email address (name@example.com)"
    if form == "uri":
        parts = urlsplit(value)
        if not parts.scheme or not (parts.netloc or parts.path):
            return "a URI (https://example.com/...)"
    try:
        if form == "date":
            datetime.date.fromisoformat(value)
        elif form == "date-time":
            datetime.datetime.fromisoformat(value)
    except ValueError:
        return "a date, YYYY-MM-DD" if form == "date" else "a date and time, YYYY-MM-DDTHH:MM:SSZ"
    return None


# -- reading the schema -----------------------------------------------------------------


def form_fields(schema: Any) -> list[FormField]:
    """The fields of a restricted ``requestedSchema``; ``ValueError`` for anything else."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise ValueError('requestedSchema must be {"type": "object", "properties": {...}}')
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, Mapping) or not isinstance(required, list):
        raise ValueError("requestedSchema: properties must be an object and required an array")
    return [_field(str(name), prop, name in required) for name, prop in properties.items()]


def schema_defaults(fields: list[FormField]) -> dict[str, Any]:
    """SEP-1034: every field's default that fits the field, as given (types kept)."""
    return {f.name: f.default for f in fields if f.has_default and f.check(f.default) is None}


def _field(name: str, prop: Any, required: bool) -> FormField:
    if not isinstance(prop, Mapping):
        raise ValueError(f"requestedSchema property {name!r} must be an object")
    kind, extra = _kind(name, prop)
    common: dict[str, Any] = {
        "name": name, "kind": kind, "required": required,
        "title": str(prop.get("title") or name), "description": str(prop.get("description") or ""),
    }
    if "default" in prop:
        common["default"] = prop["default"]
    return FormField(**common, **extra)


def _kind(name: str, prop: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    kind = prop.get("type")
    if kind == "array":
        options = _options(name, prop.get("items"))
        return "choices", {"options": options, **_bounds(prop, "minItems", "maxItems")}
    if kind == "string" and ("enum" in prop or "oneOf" in prop):
        return "choice", {"options": _options(name, prop)}
    if kind == "string":
        form = prop.get("format")
        if form is not None and form not in _FORMATS:
            known = ", ".join(sorted(_FORMATS))
            raise ValueError(f"requestedSchema property {name!r}: format {form!r} is not one of {known}")
        return "string", {"format": form, **_bounds(prop, "minLength", "maxLength")}
    if kind in ("number", "integer"):
        return str(kind), _bounds(prop, "minimum", "maximum")
    if kind == "boolean":
        return "boolean", {}
    raise ValueError(f"requestedSchema property {name!r} has type {kind!r}: only string, number, "
                     "integer, boolean and enums are allowed")


def _options(name: str, schema: Any) -> tuple[tuple[str, str], ...]:
    """(value, label) pairs of an ``enum`` (with ``enumNames``), ``oneOf`` or ``anyOf``."""
    if isinstance(schema, Mapping) and isinstance(schema.get("enum"), list):
        values = [str(v) for v in schema["enum"]]
        names = schema.get("enumNames")
        labels = [str(n) for n in names] if isinstance(names, list) and len(names) == len(values) else values
        return tuple(zip(values, labels, strict=True))
    listed = schema.get("oneOf", schema.get("anyOf")) if isinstance(schema, Mapping) else None
    if isinstance(listed, list) and listed and all(isinstance(o, Mapping) and "const" in o for o in listed):
        return tuple((str(o["const"]), str(o.get("title") or o["const"])) for o in listed)
    raise ValueError(f"requestedSchema property {name!r}: an enum needs enum, oneOf or items.anyOf")


_KEYS: Final = {"minItems": "min_items", "maxItems": "max_items", "minLength": "min_length",
                "maxLength": "max_length", "minimum": "minimum", "maximum": "maximum"}


def _bounds(prop: Mapping[str, Any], low: str, high: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key in (low, high):
        value = prop.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            found[_KEYS[key]] = value
    return found
