"""A quick "surely valid" for the common output schemas, jsonschema for everything else.

``server_check`` and ``feedback`` classify each recorded answer again, which validates its
``structuredContent`` against the tool's ``outputSchema`` with jsonschema (about 30 µs a
call: most of a 10,000-call transcript's ``check_server``). Most outputSchemas are a few
typed properties. ``surely_keeps`` decides those in a few µs, and answers only *yes, the
value keeps the schema*: for any schema or value it is not sure of (a keyword beyond the
few below, a float where an integer is asked for, a value it would reject) it answers no,
and the caller asks jsonschema as before. So every verdict, and every message, is still
jsonschema's; this only skips asking it when the answer is known to be "valid".

The check itself is the live argument check's (``relay.stages.quick_check``), read as
draft 2020-12 (what ``relay.stages.arguments.validator_class`` picks for a schema naming no
``$schema``; a schema naming one is left to jsonschema here). It takes each keyword only in
the form the meta-schema allows, so a schema jsonschema would refuse as invalid is never
said to be kept.
"""

from __future__ import annotations

from typing import Any

from ..relay.stages.quick_check import Check, quick_check

__all__ = ["SimpleSchemas"]


class SimpleSchemas:
    """``surely_keeps`` with each schema read once (by identity: a run's listed schemas are
    never changed while it is verified)."""

    def __init__(self) -> None:
        self._checks: dict[int, tuple[Any, Check | None]] = {}

    def surely_keeps(self, schema: Any, value: Any) -> bool:
        """True only when ``value`` keeps ``schema`` (an object, the whole outputSchema)."""
        found = self._checks.get(id(schema))
        if found is None or found[0] is not schema:
            found = self._checks[id(schema)] = (schema, quick_check(schema, named_draft=False))
            # the schema is kept with its check: its id stays its own
        check = found[1]
        if check is None:
            return False
        try:
            return check(value)
        except RecursionError:
            return False
