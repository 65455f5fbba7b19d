"""Routing, the definition behind each call: what the model was offered is what was called.

Each ``declarations`` event records, per alias, the digest of the tool's definition as
offered (``protocol/tool_digest.py``); each ``call_routed`` event names the digest of the
route it went through. Verify recomputes every recorded digest from the server's recorded
``tools/list`` answer in force, so a changed digest or a definition swapped in the record
is found; and for each call, the digest the model was offered in its turn's request, the
digest it was routed with and the definition its server listed when the ``tools/call``
went out must be one: a definition changed between declaration and call is a broken link.
Transcripts from before digests were recorded hold none and are not judged here.
"""

from __future__ import annotations

from typing import Any

from .evidence import call_finding, seqs_of
from .facts import RunFacts
from .record import CallTrace, RunRecord
from .resource_reads import is_reader
from .verdict import Finding

__all__ = ["check_definitions", "defined_said", "definition_of_call"]


def check_definitions(run: RunRecord, facts: RunFacts) -> list[Finding]:
    """routing: recorded digests match the listed definitions; each call used the one offered."""
    findings = [f for f in (_catalog_digests(catalog, facts) for catalog in run.catalogs) if f is not None]
    return findings + facts.judged(definition_of_call)


def _catalog_digests(catalog: dict[str, Any], facts: RunFacts) -> Finding | None:
    digests, routes = catalog.get("digests"), catalog.get("routes")
    if not isinstance(digests, dict) or not isinstance(routes, dict):
        return None
    said = f"the declarations ({catalog.get('reason')})"
    for alias, route in routes.items():
        server, tool = route if isinstance(route, list) and len(route) == 2 else (None, None)
        listing = facts.listing_at(server, catalog["seq"])
        if listing is None or is_reader(tool, listing.tools) or tool not in listing.tools:
            continue  # a reader has no definition; a route without its rule is judged under next_input
        listed = listing.digest(tool)
        recorded = digests.get(alias)
        if recorded != listed:
            what = f"record {alias}'s definition as {recorded}" if recorded else f"name no digest for {alias}"
            return _finding(False, f"{said} {what}, but {server}'s tools/list answer (seq {listing.seq}) "
                            f"gives {listed}: a digest changed or a definition swapped", catalog)
    return _finding(True, f"{said}: {len(digests)} definition digest(s), each that of the tool as listed",
                    catalog)


def definition_of_call(call: CallTrace, facts: RunFacts) -> Finding | None:
    """check_definitions' finding about one call."""
    routed = call.routed[0] if call.routed else None
    current = facts.run.round(call.turn)
    if routed is None or current is None or current.request is None:
        return None
    offered_in = facts.catalog_at(current.request["seq"])
    digests = offered_in.get("digests") if offered_in is not None else None
    alias, used = call.alias, routed.get("digest")
    if not isinstance(digests, dict) or (alias not in digests and used is None):
        return None  # no digests recorded (an older transcript), or a reader
    offered = digests.get(alias)
    if used != offered:
        message = (f"{call.call_id}: the model was offered {alias} as {offered} (request {call.turn}), "
                   f"but the call was routed with definition {used}: a definition changed between "
                   "declaration and call")
        return call_finding(call, "routing", False, message, "definition", offered_in, routed)
    request = call.mcp_requests[0] if call.mcp_requests else None
    listing = facts.listing_at(routed.get("server"), request["seq"]) if request is not None else None
    tool = routed.get("tool")
    if listing is not None and isinstance(tool, str) and tool in listing.tools:
        listed = listing.digest(tool)
        if listed != used:
            message = (f"{call.call_id}: {call.alias} was offered and routed as {used}, but when its "
                       f"tools/call went out {routed.get('server')} listed {tool} as {listed} "
                       f"(seq {listing.seq})")
            return call_finding(call, "routing", False, message, "definition", routed, request)
    return call_finding(call, "routing", True, lambda: defined_said(call, used), "definition", routed,
                        request)


def defined_said(call: CallTrace, used: Any) -> str:
    """The words of the finding that the call ran the definition (digest ``used``) the model
    was offered."""
    return f"{call.call_id}: {call.alias} called with the definition the model was offered ({used})"


def _finding(ok: bool, message: str, catalog: dict[str, Any]) -> Finding:
    return Finding(link="routing", ok=ok, message=message, check="definition", seqs=seqs_of(catalog))
