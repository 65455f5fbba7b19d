"""The client capabilities toolrelay declares in ``initialize``, by protocol revision.

Every connection declares what toolrelay can answer, also when no model or terminal is
there to answer it (a sampling request is then refused, an elicitation declined): servers
such as server-everything list their sampling and elicitation tools only to clients that
declare them. Each revision gets exactly its own shapes:

- 2024-11-05, 2025-03-26: ``roots {listChanged}``, ``sampling {}``;
- 2025-06-18: and ``elicitation {}`` (forms);
- 2025-11-25: ``sampling {tools}``, ``elicitation {form, url}``, and ``tasks`` (sampling and
  elicitation requests as tasks, ``list``, ``cancel``);
- 2026-07-28 (per request, in ``_meta``): ``roots {}`` (its list_changed notification is
  gone), ``sampling {tools}``, ``elicitation {form, url}``, and ``extensions`` with the tasks
  extension ``io.modelcontextprotocol/tasks`` (SEP-2663: tasks left the core).

``"roots": false`` in a server's config leaves roots out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ...protocol.jsonrpc import JSONObject
from ...protocol.tasks_ext import EXTENSION as TASKS_EXTENSION
from ...protocol.versions import MODERN_VERSIONS

__all__ = ["Offers", "client_capabilities", "offers_of"]

_ELICITATION_SINCE: Final = "2025-06-18"
_TASKS_SINCE: Final = "2025-11-25"
"""Also when sampling takes tools and elicitation has modes (form, url)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Offers:
    """What a connection answers under its negotiated revision."""

    roots: bool
    elicitation: bool
    modes: bool
    """2025-11-25: elicitation has a URL mode, sampling takes tools, requests may be tasks."""


def offers_of(version: str, *, roots: bool) -> Offers:
    """What toolrelay offers a server at ``version`` (dates compare as text)."""
    return Offers(roots=roots, elicitation=version >= _ELICITATION_SINCE, modes=version >= _TASKS_SINCE)


def client_capabilities(version: str, *, roots: bool = True) -> JSONObject:
    """The ``capabilities`` object of our ``initialize`` at ``version``."""
    offers = offers_of(version, roots=roots)
    if version in MODERN_VERSIONS:
        modern: JSONObject = {"roots": {}} if roots else {}
        # the tasks extension (SEP-2663): toolrelay follows any task a server makes of a call
        # (client/ext_tasks.py), so every request may be answered with one
        return {**modern, "sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}},
                "extensions": {TASKS_EXTENSION: {}}}
    capabilities: JSONObject = {}
    if offers.roots:
        capabilities["roots"] = {"listChanged": True}
    capabilities["sampling"] = {"tools": {}} if offers.modes else {}
    if offers.modes:
        capabilities["elicitation"] = {"form": {}, "url": {}}
        capabilities["tasks"] = {
            "list": {}, "cancel": {},
            "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}},
        }
    elif offers.elicitation:
        capabilities["elicitation"] = {}
    return capabilities
