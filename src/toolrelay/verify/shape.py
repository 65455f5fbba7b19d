"""The envelope every transcript event must have before verify reads it.

The writer gives each field of an event the JSON type its event class declares
(``events.py``); a call outcome's record likewise (``CallOutcome.to_record``). A line
whose envelope fields are missing or of another type was not written by toolrelay as it
stands (hand-edited or corrupted), so it is refused as unreadable input (exit 2), naming
the line's ``seq``, its kind and the field, rather than half-checked. What the envelopes
carry (request and response bodies, JSON-RPC messages, tool results) is the evidence
itself: the link checks judge it, whatever its shape.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any, Final

from .. import events as event_classes
from ..errors import UsageError

__all__ = ["EnvelopeTest", "check_envelopes", "envelope_problem", "envelope_step", "envelope_test"]

Rule = dict[str, tuple[type, ...] | None]
"""field → the JSON types it may hold (None: any value, but present)."""

_RUN_ONLY: Final[Rule] = {"run": (str, type(None))}
"""Every event: the run id the writer adds (absent in events written by hand)."""
_OUTCOME_KIND: Final = event_classes.CallOutcomeEvent.kind
"""The kind whose ``outcome`` (a ``CallOutcome.to_record()``) has an envelope of its own."""
_OUTCOME_FIELDS: Final[Rule] = {
    "status": (str,),
    "alias": (str,),
    "call_id": (str, type(None)),
    "server": (str, type(None)),
    "tool": (str, type(None)),
    "mcp_id": (int, str, type(None)),
    "connection": (int, type(None)),
}
_JSON_NAMES: Final = {
    dict: "an object", list: "an array", str: "a string", int: "an integer", float: "a number",
    bool: "true or false", type(None): "null",
}


def check_envelopes(events: Iterable[dict[str, Any]], source: Path) -> None:
    """Raise UsageError for the first event whose envelope is not what toolrelay writes."""
    for event in events:
        kind = event["kind"]  # the reader already made sure of seq (int) and kind (str)
        try:
            if envelope_test(kind)(event):
                continue  # the fast path: a large transcript has many events
        except (LookupError, TypeError):  # a field missing (or no run id): the slow path says which
            pass
        problem = envelope_problem(event)
        if problem is not None:
            raise UsageError(
                f"{source}: event seq {event['seq']} ({kind}) {problem}; toolrelay never writes "
                "that, so this transcript cannot be checked"
            )


def envelope_problem(event: dict[str, Any]) -> str | None:
    """What is wrong with the event's envelope, field by field (None: nothing), the fields
    a later version added and an older transcript lacks given their defaults first."""
    kind = event["kind"]
    _fill_defaults(event, _defaults().get(kind, {}))
    problem = _problem(event, _rules().get(kind, _RUN_ONLY))
    return problem or (_outcome_problem(event) if kind == _OUTCOME_KIND else None)


EnvelopeTest = Callable[[dict[str, Any]], bool]
"""Whether an event's envelope is as toolrelay writes it (raises LookupError or TypeError
where a field it reads is missing or inside something that is no object)."""


@cache
def envelope_test(kind: str) -> EnvelopeTest:
    """The envelope of ``kind`` as one quick test (``check_envelopes``' fast path, and the
    indexer's, which checks each event as it reads it): it holds only for events in which
    ``envelope_problem`` finds nothing and fills in nothing (a call outcome's ``outcome``
    with them), so an event it does not hold for is handed to ``envelope_problem`` (which
    says why, or fills in the defaults of an older transcript).

    Made as one expression, ``type(event["server"]) is str and ...``, compiled: CPython runs
    ``type(x)`` written out in a few instructions, where ``map(type, ...)`` makes it a call
    with an argument tuple for each field, and a large transcript has a million fields. The
    source holds only the field names of toolrelay's own event classes (as literals) and
    names of types."""
    expression, namespace = _envelope_expression(kind)
    test: EnvelopeTest = eval(f"lambda event: {expression}", namespace)
    return test


Step = Callable[[dict[str, Any]], None]


def envelope_step(kind: str, keep: Step, handle: Step | None) -> EnvelopeTest:
    """``envelope_test(kind)`` and, when it holds, ``keep`` and ``handle`` given the event,
    in one call (the indexer's step for each event of ``kind``): whether it held. Where a
    field it reads is missing, or inside something that is no object, it did not hold
    (nothing is given the event); what ``keep`` and ``handle`` raise is theirs."""
    code, types_named = _step_code(kind, handle is not None)
    step: EnvelopeTest = types.FunctionType(code, {**types_named, "keep": keep, "handle": handle})
    return step


@cache
def _step_code(kind: str, handled: bool) -> tuple[types.CodeType, dict[str, Any]]:
    """``envelope_step``'s function for ``kind``, compiled once (each indexing pass gives it
    its own ``keep`` and ``handle``), and the types its expression names."""
    expression, namespace = _envelope_expression(kind)
    source = (f"def step(event):\n    try:\n        if not ({expression}):\n            return False\n"
              "    except (LookupError, TypeError):\n        return False\n    keep(event)\n"
              + ("    handle(event)\n" if handled else "") + "    return True\n")
    made: dict[str, Any] = dict(namespace)
    exec(compile(source, f"<envelope step of {kind}>", "exec"), made)
    code: types.CodeType = made["step"].__code__
    return code, {"__builtins__": made["__builtins__"], **namespace}


def _envelope_expression(kind: str) -> tuple[str, dict[str, Any]]:
    """The envelope of ``kind`` as one expression of ``event`` (``envelope_test``), and the
    names of types it uses."""
    fields = _rules().get(kind, _RUN_ONLY)
    namespace: dict[str, Any] = {}
    outcome = kind == _OUTCOME_KIND
    terms = [_type_term("event", name, allowed, namespace, bound=outcome and name == "outcome")
             for name, allowed in fields.items()]
    if outcome:  # after the term that makes sure its ``outcome`` is an object (and names it)
        terms += [_type_term("outcome", name, allowed, namespace)
                  for name, allowed in _OUTCOME_FIELDS.items()]
    return " and ".join(terms), namespace


def _type_term(
    record: str, name: str, allowed: tuple[type, ...] | None, namespace: dict[str, Any], *,
    bound: bool = False,
) -> str:
    """The test of ``record``'s field ``name`` in ``envelope_test``'s expression: its exact
    type one of ``allowed`` (None: the field present), the types put in ``namespace``;
    ``bound``: the value named ``name`` for the terms after it (read once, not for each)."""
    if allowed is None:
        return f"{name!r} in {record}"
    exact = _exact_types(allowed)
    slot = f"_allowed_{len(namespace)}"
    namespace[slot] = next(iter(exact)) if len(exact) == 1 else exact
    value = f"({name} := {record}[{name!r}])" if bound else f"{record}[{name!r}]"
    return f"type({value}) {'is' if len(exact) == 1 else 'in'} {slot}"


def _problem(record: dict[str, Any], fields: Rule, where: str = "") -> str | None:
    for name, allowed in fields.items():
        if name not in record:
            if name == "run":  # added by the writer, not part of the event
                continue
            return f"has no '{where}{name}' field"
        value = record[name]
        if allowed is not None and type(value) not in _exact_types(allowed):
            expected = " or ".join(dict.fromkeys(_JSON_NAMES[t] for t in allowed))
            found = _JSON_NAMES.get(type(value), type(value).__name__)
            return f"has {found} as '{where}{name}', not {expected}"
    return None


def _outcome_problem(event: dict[str, Any]) -> str | None:
    return _problem(event["outcome"], _OUTCOME_FIELDS, where="outcome.")


def _exact_types(allowed: tuple[type, ...]) -> frozenset[type]:
    """The exact Python types a JSON value of these types decodes to: a whole number is an
    int even where a number is declared; true stays a bool, never an int (so ``type()``)."""
    return frozenset(allowed) | ({int} if float in allowed else frozenset())


@cache
def _rules() -> dict[str, Rule]:
    """kind → field → the JSON types allowed, read from the event classes themselves."""
    found: dict[str, Rule] = {}
    for cls in _event_classes():
        hints = typing.get_type_hints(cls)
        fields: Rule = dict(_RUN_ONLY)
        # not required ("belongs_to": routing only, never written; see McpMessage.to_record)
        skipped = {"kind", "seq", "time", "role", "belongs_to", "optional_fields", *cls.optional_fields}
        for name, hint in hints.items():
            if name not in skipped:
                fields[name] = _json_types(hint)
        kinds = event_classes.MCP_ROLES if cls is event_classes.McpMessage else {cls.kind}
        for kind in kinds:
            found[kind] = fields
    return found


@cache
def _defaults() -> dict[str, dict[str, Callable[[], Any]]]:
    """kind → the fields that have a default, each with a maker of it: a field added to an
    event in a later version is missing from older transcripts, which still load (as if
    it had its default) rather than being refused."""
    found: dict[str, dict[str, Callable[[], Any]]] = {}
    for cls in _event_classes():
        makers: dict[str, Callable[[], Any]] = {}
        for f in dataclasses.fields(cls):
            if f.name in ("seq", "time") or f.name in cls.optional_fields:
                continue
            if f.default_factory is not dataclasses.MISSING:
                makers[f.name] = f.default_factory
            elif f.default is not dataclasses.MISSING:
                makers[f.name] = functools.partial(copy.copy, f.default)
        for kind in event_classes.MCP_ROLES if cls is event_classes.McpMessage else {cls.kind}:
            found[kind] = makers
    return found


def _fill_defaults(event: dict[str, Any], makers: dict[str, Callable[[], Any]]) -> None:
    for name, make in makers.items():
        if name not in event:
            event[name] = make()


def _event_classes() -> list[type[event_classes.Event]]:
    pending, found = [event_classes.Event], []
    while pending:
        for sub in pending.pop().__subclasses__():
            found.append(sub)
            pending.append(sub)
    return found


def _json_types(hint: Any) -> tuple[type, ...] | None:
    """The JSON types a field's annotation allows (None: anything)."""
    if hint is Any or hint is object:
        return None
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        parts = [_json_types(arg) for arg in typing.get_args(hint)]
        if any(part is None for part in parts):
            return None
        return tuple(t for part in parts if part is not None for t in part)
    base = origin or hint
    if base is typing.Literal:
        return tuple(dict.fromkeys(type(arg) for arg in typing.get_args(hint)))
    for python_type, json_type in ((dict, dict), (list, list), (tuple, list), (bool, bool), (int, int),
                                   (float, float), (str, str), (type(None), type(None))):
        if isinstance(base, type) and issubclass(base, python_type):
            return (json_type,)
    return None
