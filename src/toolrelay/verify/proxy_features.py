"""Verify a proxy's resource, prompt and completion requests (``proxy/features.py``).

For each such host request (paired with its upstream leg by the proxy's key, never by an
id alone), on top of ``host_answered_once``:

- ``routed`` (routing): the name or URI the host gave is the route's, and it reads back,
  by the names recorded in the offer before it (``proxy_offer.names``: each server's URI
  prefix, each prompt's alias), to the server and upstream name the request was sent to;
- ``upstream_paired`` (correlation): one request of the host's method on that server's
  connection with the route's MCP id and the proxy's key, naming the upstream's own URI or
  prompt, its other params the host's, answered exactly once;
- ``passed_on`` (feedback): the host's answer is that upstream answer, its era's envelope
  aside and, for ``resources/read``, each content's URI given the server's prefix; a list
  request's answer is every upstream page it asked for (the key's requests of that
  method), each item's URI or prompt name as the offer names it, nothing added or lost;
- a ``listened`` subscription (a 2026-07-28 upstream, which has no ``resources/subscribe``)
  sent none, a ``subscriptions/listen`` request to that server naming the upstream's URI
  went before the host's ``{}`` answer;
- an ``unknown`` name was sent nowhere and answered with a JSON-RPC error
  (``proxy_legs.py``'s ``decision_kept``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final, Protocol

from ..protocol.listen import NO_UPDATES, named_uris
from ..protocol.mcp import feature_target as host_name
from ..protocol.passthrough import passed_on
from .verdict import Finding

__all__ = ["FEATURE_METHODS", "host_name", "judge_feature", "without_envelope"]

FEATURE_METHODS: Final = frozenset({
    "resources/list", "resources/templates/list", "prompts/list", "resources/read", "resources/subscribe",
    "resources/unsubscribe", "prompts/get", "completion/complete",
})
_LIST_KEYS: Final = {"resources/list": ("resources", "uri"), "resources/templates/list":
                     ("resourceTemplates", "uriTemplate"), "prompts/list": ("prompts", "name")}
_CACHE_KEYS: Final = frozenset({"ttlMs", "cacheScope"})
"""2026-07-28 cache directives: each leg's own (the host's era puts its own on)."""

Event = dict[str, Any]
Triple = tuple[Any, Any, Any]
Say = Callable[..., Finding]


class Legs(Protocol):
    requests: dict[Triple, list[Event]]
    responses: dict[Triple, list[Event]]
    sent_for: dict[str, list[Event]]
    offers: list[Event]
    ready: dict[str, list[Event]]


def judge_feature(said: Say, received: Event, route: Event, answer: Event, legs: Legs, key: str
                  ) -> list[Finding]:
    """The findings on one host feature request whose route was recorded (not ``unknown``)."""
    names = _names(legs, answer)
    decision = route.get("decision")
    if decision == "listed":
        return [_listed(said, received, answer, legs, key, names)]
    found = [_routed(said, received, route, names)]
    if decision == "forwarded":
        found += _forwarded(said, received, route, answer, legs, key, names)
    elif decision == "shared":  # the upstream subscription is other hosts' too (proxy/followed.py)
        sent = [e for e in legs.sent_for.get(key, []) if e.get("message", {}).get("method") in
                ("resources/subscribe", "resources/unsubscribe")]
        ok = not sent and answer.get("message", {}).get("result") == {}
        found.append(said("feedback", "passed_on", ok,
                          f"shared with other hosts' subscriptions ({route.get('reason')}), nothing sent "
                          "upstream, answered {}" if ok
                          else "a shared subscription, yet sent upstream or not answered {}", route, answer))
    elif decision == "listened":  # a 2026-07-28 upstream follows it on its listen request instead
        found.append(_listened(said, route, answer, legs, key))
    else:  # failed: the host was told with a JSON-RPC error
        ok = "error" in answer.get("message", {})
        told = "got a JSON-RPC error" if ok else "was not told"
        found.append(said("feedback", "passed_on", ok,
                          f"the upstream request failed ({route.get('reason')}) and the host {told}",
                          route, answer))
    return found


def _listened(said: Say, route: Event, answer: Event, legs: Legs, key: str) -> Finding:
    """A subscription a 2026-07-28 upstream follows on its listen request: no
    ``resources/subscribe`` sent, a listen request to that server naming the URI sent before
    the host was answered ``{}``."""
    sent = [e for e in legs.sent_for.get(key, [])
            if e.get("message", {}).get("method") == "resources/subscribe"]
    server, uri = route.get("server"), route.get("tool")
    naming = next((e for e in _listens_naming(legs, server, uri) if e["seq"] < answer["seq"]), None)
    answered = answer.get("message", {}).get("result") == {}
    if sent or not answered:
        return said("feedback", "passed_on", False,
                    "a listened subscription, yet sent as resources/subscribe or not answered {}",
                    route, answer)
    if naming is None and route.get("reason") == NO_UPDATES and not _declares_subscribe(legs, server, route):
        return said("feedback", "passed_on", True, f"server {server} declares no resources.subscribe: "
                    f"nothing listened for {uri}, answered {{}} (as the server would)", route, answer)
    if naming is None:
        return said("feedback", "passed_on", False,
                    f"a listened subscription, yet no listen request to server {server} named {uri} before "
                    "the host was answered", route, answer)
    return said("feedback", "passed_on", True,
                f"followed on the upstream's listen request (server {server} connection "
                f"{naming.get('connection')} id {naming.get('mcp_id')!r} names {uri}), answered {{}}",
                route, naming, answer)


def _declares_subscribe(legs: Legs, server: Any, before: Event) -> bool:
    """Whether ``server``'s latest handshake before ``before`` declared ``resources.subscribe``."""
    ready = [e for e in legs.ready.get(str(server), []) if e["seq"] < before["seq"]]
    declared = ((ready[-1].get("capabilities") or {}) if ready else {}).get("resources")
    return not ready or (isinstance(declared, dict) and declared.get("subscribe") is True)


def _listens_naming(legs: Legs, server: Any, uri: Any) -> list[Event]:
    """The ``subscriptions/listen`` requests sent to ``server`` whose filter names ``uri``."""
    found = []
    for (to, _, _), requests in legs.requests.items():
        for event in requests if to == server else []:
            message = event.get("message") or {}
            named = named_uris((message.get("params") or {}).get("notifications"))
            if message.get("method") == "subscriptions/listen" and uri in named:
                found.append(event)
    return found


def _names(legs: Legs, before: Event) -> dict[str, Any]:
    offer = next((o for o in reversed(legs.offers) if o["seq"] < before["seq"] and o.get("names")), None)
    return (offer or {}).get("names") or {"uri_prefixes": {}, "prompts": {}}


def _is_prompt(received: Event) -> bool:
    message = received.get("message", {})
    ref = (message.get("params") or {}).get("ref")
    by_ref = isinstance(ref, dict) and ref.get("type") == "ref/prompt"
    return message.get("method") == "prompts/get" or by_ref


def _routed(said: Say, received: Event, route: Event, names: dict[str, Any]) -> Finding:
    named = host_name(received.get("message", {}).get("params") or {})
    if route.get("alias") != named:
        return said("routing", "routed", False,
                    f"routed as {route.get('alias')!r}, but the host named {named!r}", route)
    server, upstream = route.get("server"), route.get("tool")
    if _is_prompt(received):
        ok = names["prompts"].get(named) == [server, upstream]
    else:
        prefix = names["uri_prefixes"].get(server)
        ok = isinstance(prefix, str) and f"{prefix}{upstream}" == named
    return said("routing", "routed", ok, f"{named} → {server}/{upstream}" if ok else
                f"{named} does not read back to {server}/{upstream} by the recorded offer", route)


def _forwarded(said: Say, received: Event, route: Event, answer: Event, legs: Legs, key: str,
               names: dict[str, Any]) -> list[Finding]:
    triple = (route.get("server"), route.get("connection"), route.get("mcp_id"))
    requests, responses = legs.requests.get(triple, []), legs.responses.get(triple, [])
    where = f"upstream {triple[0]} connection {triple[1]} id {triple[2]!r}"
    if len(requests) != 1 or len(responses) != 1:
        return [said("correlation", "upstream_paired", False, f"{where}: {len(requests)} requests and "
                     f"{len(responses)} responses recorded, not one each", route, *requests, *responses)]
    request, response = requests[0], responses[0]
    host_message, sent = received.get("message", {}), request.get("message", {})
    host_params, params = host_message.get("params") or {}, sent.get("params") or {}
    problems = [
        "it carries another key" if request.get("call_id") != key or response.get("call_id") != key else "",
        f"it is {sent.get('method')}, not {host_message.get('method')}"
        if sent.get("method") != host_message.get("method") else "",
        f"it names {host_name(params)!r}, not {route.get('tool')!r}"
        if host_name(params) != route.get("tool") else "",
        "its other params are not the host's" if _rest(params) != _rest(host_params) else "",
    ]
    problem = next((p for p in problems if p), None)
    paired = said("correlation", "upstream_paired", problem is None, f"{where}: {problem}" if problem
                  else f"paired with {where}, answered once", request, response)
    return [paired, _passed(said, host_message.get("method"), response, answer,
                            names["uri_prefixes"].get(route.get("server"), ""))]


def _rest(params: dict[str, Any]) -> dict[str, Any]:
    """Params but the name or URI and ``_meta`` (each leg's own)."""
    rest = {k: v for k, v in params.items() if k not in ("uri", "name", "_meta", "ref")}
    ref = params.get("ref")
    if isinstance(ref, dict):
        rest["ref"] = {k: v for k, v in ref.items() if k not in ("uri", "name")}
    return rest


def without_envelope(result: dict[str, Any]) -> dict[str, Any]:
    """``passed_on`` and without the cache directives the host's era adds to lists and reads."""
    return {k: v for k, v in passed_on(result).items() if k not in _CACHE_KEYS}


def _passed(said: Say, method: Any, response: Event, answer: Event, prefix: str) -> Finding:
    upstream, host = response.get("message", {}), answer.get("message", {})
    if "error" in upstream:
        same = host.get("error", {}).get("code") == upstream["error"].get("code") and \
            host.get("error", {}).get("message") == upstream["error"].get("message")
        return said("feedback", "passed_on", same,
                    f"{method}: the upstream JSON-RPC error passed on unchanged" if same
                    else f"{method}: the host's error is not the upstream's", response, answer)
    result, got = upstream.get("result"), host.get("result")
    if not isinstance(result, dict) or not isinstance(got, dict):
        return said("feedback", "passed_on", False, f"{method}: the host's answer is not the upstream result",
                    response, answer)
    expected = without_envelope(result)
    if method == "resources/read" and isinstance(expected.get("contents"), list):
        expected["contents"] = [{**c, "uri": prefix + c["uri"]} if isinstance(c, dict) and "uri" in c else c
                                for c in expected["contents"]]
    same = expected == without_envelope(got)
    return said("feedback", "passed_on", same, f"{method} answered as the upstream answered" if same
                else f"{method}: the host's result differs from the upstream result it answers",
                response, answer)


def _listed(said: Say, received: Event, answer: Event, legs: Legs, key: str,
            names: dict[str, Any]) -> Finding:
    method = received.get("message", {}).get("method")
    list_key, field = _LIST_KEYS.get(str(method), ("", ""))
    aliases = {tuple(pair): alias for alias, pair in names["prompts"].items()}
    expected: list[Any] = []
    asked = [e for e in legs.sent_for.get(key, []) if e.get("message", {}).get("method") == method]
    for request in asked:
        server = request.get("server")
        triple = (server, request.get("connection"), request.get("mcp_id"))
        responses = legs.responses.get(triple, [])
        result = responses[0].get("message", {}).get("result") if len(responses) == 1 else None
        items = result.get(list_key) if isinstance(result, dict) else None
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            value = item.get(field)
            named = aliases.get((server, value)) if field == "name" else \
                f"{names['uri_prefixes'].get(server, '')}{value}"
            expected.append({**item, field: named})
    result = answer.get("message", {}).get("result")
    got = result.get(list_key) if isinstance(result, dict) else None
    same = isinstance(got, list) and _sorted(got) == _sorted(expected)
    return said("feedback", "passed_on", same,
                f"{method}: the {len(expected)} items of {len(asked)} upstream "
                f"page{'' if len(asked) == 1 else 's'}, as the offer names them"
                if same else f"{method}: the host's list is not the upstream pages' items", answer, *asked)


def _sorted(items: list[Any]) -> list[str]:
    return sorted(json.dumps(item, sort_keys=True) for item in items)
