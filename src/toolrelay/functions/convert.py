"""JSON values to the Python values a function's hints name, and Python values to JSON.

Arguments have passed the tool's ``inputSchema`` before they get here, so each value
already has its JSON shape: this only builds the hinted objects (an ``Enum`` member, a
dataclass, a tuple, a pydantic model) from it.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Union, get_args, get_origin

from .schema import is_pydantic_model, is_typeddict

__all__ = ["from_json", "to_json"]


def from_json(tp: Any, value: Any) -> Any:
    """``value`` (valid JSON for ``tp``'s schema) as a ``tp``."""
    origin = get_origin(tp)
    if origin is typing.Annotated:
        return from_json(get_args(tp)[0], value)
    if origin is Union or origin is types.UnionType:
        return _union(get_args(tp), value)
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(value)
    if tp in (datetime.datetime, datetime.date, datetime.time) and isinstance(value, str):
        return tp.fromisoformat(value)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and isinstance(value, dict):
        hints = typing.get_type_hints(tp, include_extras=True)
        return tp(**{k: from_json(hints.get(k, Any), v) for k, v in value.items()})
    if is_typeddict(tp) and isinstance(value, dict):
        hints = typing.get_type_hints(tp, include_extras=True)
        return {k: from_json(hints.get(k, Any), v) for k, v in value.items()}
    if is_pydantic_model(tp):
        return tp.model_validate(value)
    if isinstance(value, list):
        return _sequence(tp, origin, value)
    if isinstance(value, dict) and origin is not None:
        args = get_args(tp)
        return {k: from_json(args[1], v) for k, v in value.items()} if len(args) == 2 else value
    return value


def _sequence(tp: Any, origin: Any, value: list[Any]) -> Any:
    args = get_args(tp)
    if origin is tuple or tp is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_json(args[0], v) for v in value)
        if args and args != ((),):
            return tuple(from_json(a, v) for a, v in zip(args, value, strict=False))
        return tuple(value)
    items = [from_json(args[0], v) for v in value] if args else list(value)
    if origin in (set, frozenset) or tp in (set, frozenset):
        return (origin or tp)(items)
    return items


def _union(arms: tuple[Any, ...], value: Any) -> Any:
    for arm in arms:
        if _fits(arm, value):
            return from_json(arm, value)
    return value


def _fits(tp: Any, value: Any) -> bool:
    """Whether ``value``'s JSON shape is ``tp``'s (to pick a union's arm)."""
    origin = get_origin(tp)
    if origin is typing.Annotated:
        return _fits(get_args(tp)[0], value)
    if tp is None or tp is type(None):
        return value is None
    if tp is Any:
        return True
    if origin is Literal:
        return value in get_args(tp)
    if origin is Union or origin is types.UnionType:
        return any(_fits(arm, value) for arm in get_args(tp))
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if tp is str:
        return isinstance(value, str)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return value in {m.value for m in tp}
    if isinstance(value, list):
        kind = origin or tp
        return kind in (list, tuple, set, frozenset) or getattr(kind, "__module__", "") == "collections.abc"
    if isinstance(value, dict):
        return not isinstance(tp, type) or not issubclass(tp, str | int | float | list)
    return isinstance(value, str) and tp in (datetime.datetime, datetime.date, datetime.time)


def to_json(value: Any) -> Any:
    """``value`` as plain JSON data: dataclasses, pydantic models, enums, tuples, sets and
    dates made lists, objects and strings; anything else JSON cannot say is a TypeError."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, enum.Enum):
        return to_json(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if is_pydantic_model(type(value)):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {_key(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_json(v) for v in value]
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    raise TypeError(f"{type(value).__qualname__} is not JSON data")


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, enum.Enum) and isinstance(key.value, str):
        return key.value
    if isinstance(key, int | float | bool):
        return str(key)
    raise TypeError(f"a {type(key).__qualname__} key is not a JSON object key")
