"""A JSON value recorded as the places where it differs from an earlier one.

Most of a run's MCP messages repeat an earlier message of their kind almost whole: every
2026-07-28 ``tools/call`` carries the same ``_meta`` (protocol version, client
capabilities and info, log level), every answer its server's info, every retry the same
``inputResponses``. ``changes`` lists where a value differs from its base, each as
``[path, value]``: the path is the object keys and array indexes from the root, the value
replaces what is there. Only what is already there can be replaced, so an object with
other keys (or the same keys in another order) and an array of another length are
replaced whole, at their own path. Values are compared strictly (JSON type included:
``1`` is not ``1.0``), so the rebuilt value serialises exactly as the original.

``apply_changes`` rebuilds the value: the containers on a changed path are copied, every
other part is shared with the base (never mutated).
"""

from __future__ import annotations

from typing import Any

__all__ = ["apply_changes", "changes", "holds"]

Path = list[str | int]


def changes(base: Any, value: Any) -> list[list[Any]]:
    """Where ``value`` differs from ``base``, as ``[path, new value]`` pairs ([] for none)."""
    found: list[list[Any]] = []
    _diff(base, value, [], found)
    return found


def _diff(base: Any, value: Any, path: Path, found: list[list[Any]]) -> None:
    kind = type(value)
    if type(base) is not kind:
        found.append([path, value])
    elif kind is dict:
        if len(base) != len(value) or list(base) != list(value):
            found.append([path, value])
            return
        for key, item in value.items():
            _diff(base[key], item, [*path, key], found)
    elif kind is list:
        if len(base) != len(value):
            found.append([path, value])
            return
        for index, (old, item) in enumerate(zip(base, value, strict=True)):
            _diff(old, item, [*path, index], found)
    elif kind is float:
        if base.hex() != value.hex():  # 0.0 and -0.0 are equal but written apart
            found.append([path, value])
    elif base != value:
        found.append([path, value])


def apply_changes(base: Any, recorded: Any) -> Any:
    """``base`` with the ``recorded`` changes made; ValueError when they are no changes of it."""
    if not isinstance(recorded, list):
        raise ValueError("its changes are not an array")
    if not recorded:
        return base
    root = _copy(base)
    copied = {id(root)}  # containers made for this value: changed in place, never the base's
    for change in recorded:
        if not (isinstance(change, list) and len(change) == 2 and isinstance(change[0], list)
                and change[0]):
            raise ValueError("a change is not a [path, value] pair with a non-empty path")
        path, value = change
        parent = root
        for step in path[:-1]:
            child = _child(parent, step, path)
            if id(child) not in copied:
                child = _copy(child)
                parent[step] = child
                copied.add(id(child))
            parent = child
        _child(parent, path[-1], path)  # only what is there is replaced
        parent[path[-1]] = value
    return root


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    raise ValueError("it changes inside a value that is neither an object nor an array")


def holds(parent: Any, step: Any) -> bool:
    """Whether ``parent[step]`` is there: a key of an object, an index inside an array."""
    if isinstance(parent, dict):
        return isinstance(step, str) and step in parent
    return (isinstance(parent, list) and isinstance(step, int) and not isinstance(step, bool)
            and 0 <= step < len(parent))


def _child(parent: Any, step: Any, path: Path) -> Any:
    if holds(parent, step):
        return parent[step]
    raise ValueError(f"it changes {_shown(path)}, which the value it is based on does not hold")


def _shown(path: Path) -> str:
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path)[:80] or "(root)"
