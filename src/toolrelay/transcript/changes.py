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

__all__ = ["apply_changes", "apply_in_place", "changed_copy", "changes", "holds"]

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
    if type(recorded) is not list:
        raise ValueError("its changes are not an array")
    if not recorded:
        return base
    root = _copy(base)
    apply_in_place(root, recorded, {id(root)})
    return root


def changed_copy(base: dict[str, Any], recorded: list[Any]) -> tuple[dict[str, Any], set[int] | None]:
    """A copy of the object ``base`` with the ``recorded`` changes made, and the ids of the
    containers copied for it (None when only the top one was: every change is of a field);
    ValueError when they are no changes of it. Every other part is shared with ``base``."""
    root = dict(base)
    # a field replaced needs no record of copies; the first deeper change and those after it do
    for index, change in enumerate(recorded):
        if type(change) is not list or len(change) != 2:
            raise _not_a_change()
        path, value = change
        if type(path) is not list or len(path) != 1:
            copied = {id(root)}
            apply_in_place(root, recorded[index:], copied)
            return root, copied
        step = path[0]
        if type(step) is not str or step not in root:
            raise _not_held(path)
        root[step] = value
    return root, None


def apply_in_place(root: Any, recorded: list[Any], copied: set[int] | None) -> None:
    """Make the ``recorded`` changes in ``root`` itself; ValueError when they are no changes of it.

    ``copied`` holds the ids of the containers that are this value's own (changed in place):
    any other container on a changed path is shared with a base and copied first, and its
    copy added. None: every container in ``root`` is its own (a line as read)."""
    for change in recorded:
        if type(change) is not list or len(change) != 2:
            raise _not_a_change()
        path, value = change
        if type(path) is not list or not path:
            raise _not_a_change()
        parent = root
        if len(path) > 1:
            for step in path[:-1]:  # a transcript has many changes: the steps are checked inline
                kind = type(parent)
                if not (type(step) is str and step in parent if kind is dict
                        else kind is list and type(step) is int and 0 <= step < len(parent)):
                    raise _not_held(path)
                child = parent[step]
                if copied is not None and id(child) not in copied:
                    kind = type(child)
                    if kind is not dict and kind is not list:
                        raise ValueError("it changes inside a value that is neither an object nor an array")
                    child = parent[step] = kind(child)  # a copy: dict(child) or list(child)
                    copied.add(id(child))
                parent = child
        step = path[-1]
        kind = type(parent)
        if not (type(step) is str and step in parent if kind is dict  # only what is there is replaced
                else kind is list and type(step) is int and 0 <= step < len(parent)):
            raise _not_held(path)
        parent[step] = value


def _not_a_change() -> ValueError:
    return ValueError("a change is not a [path, value] pair with a non-empty path")


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return dict(value)
    if kind is list:
        return list(value)
    raise ValueError("it changes inside a value that is neither an object nor an array")


def holds(parent: Any, step: Any) -> bool:
    """Whether ``parent[step]`` is there: a key of an object, an index inside an array."""
    kind = type(parent)
    if kind is dict:
        return type(step) is str and step in parent
    return kind is list and type(step) is int and 0 <= step < len(parent)


def _not_held(path: Path) -> ValueError:
    return ValueError(f"it changes {_shown(path)}, which the value it is based on does not hold")


def _shown(path: Path) -> str:
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path)[:80] or "(root)"
