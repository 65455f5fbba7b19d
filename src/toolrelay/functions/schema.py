"""JSON Schema from Python type hints: a function's ``inputSchema`` and ``outputSchema``.

A small builder of its own rather than pydantic's ``TypeAdapter``: pydantic is not one of
toolrelay's dependencies, and importing it costs more than every function tool together
(start-up is a benchmark goal). A pydantic model hinted anywhere is described by its own
``model_json_schema()`` (pydantic is then installed, and already imported by the caller).

Described: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Any``, ``Literal``, ``Enum``,
``list`` / ``Sequence`` / ``set`` / ``tuple``, ``dict`` / ``Mapping`` (string keys),
``Optional`` and unions, ``TypedDict``, dataclasses, pydantic models, ``datetime`` / ``date``
/ ``time`` (strings with a format), and ``Annotated[T, "description"]``. Anything else is a
``TypeError`` naming the type, raised when the tool is declared, not when it is called.
"""

from __future__ import annotations

import collections.abc as abc
import dataclasses
import datetime
import enum
import inspect
import types
import typing
from typing import Any, Final, Literal, Union, get_args, get_origin

from ..relay.stages.strict import json_type_name

__all__ = ["NO_VALUE", "SchemaBuilder", "is_pydantic_model", "is_typeddict", "object_like"]

JSONSchema = dict[str, Any]
NO_VALUE: Final = inspect.Parameter.empty

_PRIMITIVES: Final[dict[Any, JSONSchema]] = {
    str: {"type": "string"}, int: {"type": "integer"}, float: {"type": "number"},
    bool: {"type": "boolean"}, type(None): {"type": "null"}, None: {"type": "null"},
    datetime.datetime: {"type": "string", "format": "date-time"},
    datetime.date: {"type": "string", "format": "date"},
    datetime.time: {"type": "string", "format": "time"},
}
_ARRAYS: Final = (list, set, frozenset, abc.Sequence, abc.MutableSequence, abc.Set, abc.MutableSet,
                  abc.Iterable, abc.Collection)
_MAPS: Final = (dict, abc.Mapping, abc.MutableMapping)


def is_typeddict(tp: Any) -> bool:
    return typing.is_typeddict(tp)


def is_pydantic_model(tp: Any) -> bool:
    """A pydantic ``BaseModel`` class (pydantic is never imported here for it)."""
    return isinstance(tp, type) and hasattr(tp, "model_json_schema") and hasattr(tp, "model_validate")


def object_like(schema: JSONSchema) -> bool:
    """Whether ``schema`` describes a JSON object (an ``outputSchema`` must)."""
    return schema.get("type") == "object"


class SchemaBuilder:
    """Describes types; pydantic models' ``$defs`` are gathered in ``defs`` (put at the top
    of the schema that uses them, where their ``#/$defs/...`` references point)."""

    def __init__(self) -> None:
        self.defs: JSONSchema = {}
        self._open: list[Any] = []  # the classes being described: a recursive one is refused

    def schema(self, tp: Any) -> JSONSchema:
        if tp is Any or tp is object or tp is NO_VALUE:
            return {}
        if isinstance(tp, typing.TypeVar):
            return {}
        primitive = _PRIMITIVES.get(tp)
        if primitive is not None:
            return dict(primitive)
        origin = get_origin(tp)
        if origin is typing.Annotated:
            return self._annotated(tp)
        if origin is Literal:
            return _literal(get_args(tp))
        if origin is Union or origin is types.UnionType:
            return self._union(get_args(tp))
        if origin is tuple or tp is tuple:
            return self._tuple(get_args(tp))
        if origin in _ARRAYS or tp in _ARRAYS:
            args = get_args(tp)
            return {"type": "array", "items": self.schema(args[0]) if args else {}}
        if origin in _MAPS or tp in _MAPS:
            return self._mapping(tp, get_args(tp))
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return _literal(tuple(member.value for member in tp))
        if _is_class_like(tp):
            return self._class(tp)
        raise TypeError(f"cannot describe {_type_name(tp)} as JSON Schema (use str, int, float, bool, None, "
                        "Literal, Enum, list, dict, tuple, unions, TypedDict, dataclasses, pydantic models)")

    def _annotated(self, tp: Any) -> JSONSchema:
        inner, *extras = get_args(tp)
        schema = self.schema(inner)
        words = [extra for extra in extras if isinstance(extra, str)]
        if words:
            schema["description"] = words[0]
        return schema

    def _union(self, args: tuple[Any, ...]) -> JSONSchema:
        arms = [self.schema(arg) for arg in args]
        if any(arm == {} for arm in arms):
            return {}
        return {"anyOf": arms}

    def _tuple(self, args: tuple[Any, ...]) -> JSONSchema:
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            return {"type": "array", "items": self.schema(args[0]) if args else {}}
        if args == ((),):  # tuple[()]
            return {"type": "array", "maxItems": 0}
        items = [self.schema(arg) for arg in args]
        return {"type": "array", "prefixItems": items, "items": False,
                "minItems": len(items), "maxItems": len(items)}

    def _mapping(self, tp: Any, args: tuple[Any, ...]) -> JSONSchema:
        if args and args[0] not in (str, Any):
            raise TypeError(f"cannot describe {_type_name(tp)} as JSON Schema: JSON object keys are strings")
        return {"type": "object", "additionalProperties": self.schema(args[1]) if args else {}}

    def _class(self, cls: type) -> JSONSchema:
        if cls in self._open:
            raise TypeError(f"cannot describe {cls.__qualname__} as JSON Schema: it contains itself")
        self._open.append(cls)
        try:
            if is_pydantic_model(cls):
                return self._pydantic(cls)
            return self._fields(cls)
        finally:
            self._open.pop()

    def _fields(self, cls: type) -> JSONSchema:
        hints = typing.get_type_hints(cls, include_extras=True)
        if dataclasses.is_dataclass(cls):
            fields = [f for f in dataclasses.fields(cls) if f.init]
            names = [f.name for f in fields]
            required = [f.name for f in fields
                        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        else:  # a TypedDict
            names = list(hints)
            required = [name for name in names if name in getattr(cls, "__required_keys__", names)]
        properties = {name: self.schema(hints.get(name, Any)) for name in names}
        schema: JSONSchema = {"type": "object", "title": cls.__name__, "properties": properties}
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        if cls.__doc__ and not cls.__doc__.startswith(f"{cls.__name__}("):  # not the dataclass's own
            schema["description"] = inspect.cleandoc(cls.__doc__)
        return schema

    def _pydantic(self, cls: type) -> JSONSchema:
        schema: JSONSchema = dict(cls.model_json_schema())  # type: ignore[attr-defined]
        self.defs.update(schema.pop("$defs", {}))
        return schema


def _is_class_like(tp: Any) -> bool:
    return isinstance(tp, type) and (dataclasses.is_dataclass(tp) or is_typeddict(tp)
                                     or is_pydantic_model(tp))


def _literal(values: tuple[Any, ...]) -> JSONSchema:
    schema: JSONSchema = {"enum": list(values)}
    kinds = {_json_type(value) for value in values}
    if len(kinds) == 1 and None not in kinds:
        schema["type"] = kinds.pop()
    return schema


_SCALARS: Final = frozenset({"boolean", "integer", "number", "string"})


def _json_type(value: Any) -> str | None:
    """A literal value's JSON scalar type, or None (``null`` and anything else: no ``type``)."""
    kind = json_type_name(value)
    return kind if kind in _SCALARS else None


def _type_name(tp: Any) -> str:
    return getattr(tp, "__qualname__", None) or repr(tp)
