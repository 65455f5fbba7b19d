"""Stage 1, declare (the way back): remove the nulls strict mode made the model send.

A strict declaration makes every optional property required *and nullable*
(``strict.to_strict``). Before the call those nulls are removed again, guided by the
tool's *original* schema, so the server receives what its own schema allows: a null is
dropped only where the original made the property optional.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .strict import accepts_null, resolve_local_ref

__all__ = ["strip_optional_nulls"]

_MAX_REF_HOPS: Final = 32
"""$ref / allOf / branch hops followed from one node (a hostile schema cannot make us spin)."""
_MAX_STRIP_DEPTH: Final = 128
"""Nesting of the value walked; deeper parts are passed on unchanged."""


def strip_optional_nulls(value: Any, original_schema: Mapping[str, Any]) -> Any:
    """``value`` without the nulls the strict declaration added (a new value; the input is
    not modified). A null is removed where the *original* schema made the property optional
    (nested objects, array items and ``$ref``'d objects included); a null for a required
    property stays, so the original schema rejects it, as it should."""
    return _NullStripper(original_schema).strip(value, original_schema, 0)


@dataclass(slots=True, kw_only=True, frozen=True)
class _Shape:
    properties: dict[str, Any]
    required: frozenset[str]


class _NullStripper:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root

    def strip(self, value: Any, schema: Any, depth: int) -> Any:
        if depth > _MAX_STRIP_DEPTH or not isinstance(schema, Mapping):
            return value
        if isinstance(value, dict):
            return self._strip_object(value, schema, depth)
        if isinstance(value, list):
            items = self._items(schema)
            return [self.strip(item, items, depth + 1) for item in value]
        return value

    def _strip_object(self, value: dict[str, Any], schema: Mapping[str, Any], depth: int) -> Any:
        shape = self._shape(schema, value)
        result: dict[str, Any] = {}
        for key, item in value.items():
            if item is None and key in shape.properties and key not in shape.required:
                continue
            result[key] = self.strip(item, shape.properties.get(key), depth + 1)
        return result

    def _conjuncts(self, schema: Any) -> list[Mapping[str, Any]]:
        """The schema with everything that applies together: its $ref target and allOf."""
        found: list[Mapping[str, Any]] = []
        pending: list[Any] = [schema]
        while pending and len(found) < _MAX_REF_HOPS:
            node = pending.pop(0)
            if not isinstance(node, Mapping) or any(node is seen for seen in found):
                continue
            found.append(node)
            if isinstance(node.get("$ref"), str):
                pending.append(resolve_local_ref(self.root, node["$ref"]))
            if isinstance(node.get("allOf"), list):
                pending.extend(node["allOf"])
        return found

    def _shape(self, schema: Mapping[str, Any], value: Mapping[str, Any], hops: int = 0) -> _Shape:
        properties: dict[str, Any] = {}
        required: set[str] = set()
        branches: list[Any] = []
        for part in self._conjuncts(schema):
            if isinstance(part.get("properties"), Mapping):
                properties = {**part["properties"], **properties}
            if isinstance(part.get("required"), list):
                required.update(name for name in part["required"] if isinstance(name, str))
            for keyword in ("anyOf", "oneOf"):
                if isinstance(part.get(keyword), list):
                    branches.extend(part[keyword])
        if not properties and branches and hops < _MAX_REF_HOPS:
            return self._pick_branch(branches, value, hops + 1) or _Shape(properties={}, required=frozenset())
        return _Shape(properties=properties, required=frozenset(required))

    def _pick_branch(self, branches: list[Any], value: Mapping[str, Any], hops: int) -> _Shape | None:
        """The branch the value was made for: same property names and its nulls allowed
        there, else the first branch declaring every name the value uses."""
        shapes = [self._shape(b, value, hops) for b in branches if isinstance(b, Mapping)]
        names = set(value)
        for shape in shapes:
            if set(shape.properties) == names and all(
                value[key] is not None or key not in shape.required or accepts_null(shape.properties[key])
                for key in names
            ):
                return shape
        return next((s for s in shapes if s.properties and names <= set(s.properties)), None)

    def _items(self, schema: Mapping[str, Any]) -> Any:
        """The item schema of an array schema; with several array branches (anyOf / oneOf),
        all their item schemas as one anyOf, so each element finds the branch it was made for."""
        found: list[Any] = []
        pending: list[Any] = [schema]
        visited = 0
        while pending and visited < _MAX_REF_HOPS:
            for part in self._conjuncts(pending.pop(0)):
                visited += 1
                if isinstance(part.get("items"), Mapping):
                    found.append(part["items"])
                for keyword in ("anyOf", "oneOf"):
                    if isinstance(part.get(keyword), list):
                        pending.extend(part[keyword])
        if len(found) > 1:
            return {"anyOf": found}
        return found[0] if found else None
