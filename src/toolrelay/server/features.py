"""What a service offers besides tools: one method table, read by both eras' dispatch.

A ``ToolService`` may also answer resources, resource templates, prompts and completion
(the proxy does, for its upstream servers; the conformance fixtures do). It says so with
two optional members, and the server stack does the rest:

- ``feature_methods()``: the MCP methods it answers (``resources/list``, ``prompts/get``,
  ``completion/complete``, ...), each mapped to a handler that gets the request's params and
  the call's context and returns the result (or an awaitable of it), raising ``RpcError``
  for a JSON-RPC error;
- ``feature_capabilities()``: what it declares for them (``{"resources": {...},
  "prompts": {...}, "completions": {}}``), merged into ``initialize`` and ``server/discover``.

A service without them (the file server) answers tools only and declares nothing more.
``resources/subscribe`` and ``resources/unsubscribe`` exist in the handshake era only: the
2026-07-28 side leaves them out (that revision follows resources on ``subscriptions/listen``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from ..protocol import mcp as m
from ..protocol.jsonrpc import JSONObject

__all__ = ["HANDSHAKE_ONLY", "FeatureHandler", "feature_capabilities", "feature_methods"]

FeatureHandler = Callable[[JSONObject | None, Any], JSONObject | Awaitable[JSONObject]]
"""One method's handler: the request's params and the call's ``app.CallContext`` in, the
result out (the context is ``Any`` here: ``app`` imports this module, not the reverse)."""

HANDSHAKE_ONLY: Final = frozenset({m.SUBSCRIBE_RESOURCE, m.UNSUBSCRIBE_RESOURCE,
                                   m.TASKS_GET, m.TASKS_RESULT, m.TASKS_LIST, m.TASKS_CANCEL})
"""Methods of the 2025 revisions that 2026-07-28 has not (its tasks are an extension,
SEP-2663, with other methods: a service's 2025-11-25 tasks are not served there)."""
_CORE: Final = frozenset({m.INITIALIZE, m.PING, m.LIST_TOOLS, m.CALL_TOOL})
"""What the session answers itself: a service's table cannot take them over."""


def feature_methods(service: object, *, modern: bool = False) -> Mapping[str, FeatureHandler]:
    """The methods ``service`` answers besides tools (none when it declares no table)."""
    table = getattr(service, "feature_methods", None)
    found: Mapping[str, FeatureHandler] = table() if callable(table) else {}
    kept = {method: handler for method, handler in found.items()
            if method not in _CORE and not (modern and method in HANDSHAKE_ONLY)}
    extension = getattr(service, "extension_methods", None)  # 2026-07-28 extensions' own (SEP-2663 tasks)
    if modern and callable(extension):
        kept.update({method: handler for method, handler in extension().items() if method not in _CORE})
    return kept


def feature_capabilities(service: object, *, modern: bool = False,
                         told: Callable[[str], bool] | None = None, follows: bool = False) -> JSONObject:
    """What ``service`` declares for those methods (a copy). In 2026-07-28 with
    ``resources.subscribe`` only when its listen requests follow resources (``follows``)
    and with ``listChanged`` only for what ``told`` says they hear (``listen_hub.py``)."""
    declared = getattr(service, "feature_capabilities", None)
    found: JSONObject = dict(declared()) if callable(declared) else {}
    if not modern:
        return found
    found.pop("tasks", None)  # 2025-11-25 tasks (HANDSHAKE_ONLY)
    extensions = getattr(service, "extension_capabilities", None)
    if callable(extensions) and (declared_extensions := extensions()):
        found["extensions"] = {**(found.get("extensions") or {}), **declared_extensions}
    for feature in ("resources", "prompts"):
        offered = found.get(feature)
        if isinstance(offered, dict):
            listens = told is not None and told(feature)
            kept = {k: v for k, v in offered.items() if k != "subscribe" or (follows and v is True)}
            found[feature] = {**kept, "listChanged": listens}
    return found
