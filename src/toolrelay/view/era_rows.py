"""Era negotiation drawn as what it is: the ``initialize`` sent beside a slow probe.

Probing (``--protocol-version auto``), toolrelay sends ``initialize`` beside a
``server/discover`` that has not been answered yet (``client/era_probe.py``); a server that then
answers the probe as a 2026-07-28 one refuses that late handshake (-32022; over HTTP it
may answer it, unused). On a
connection that went on in a modern era, both rows are an expected fallback, not a
failure: dimmed, and labelled so, so a healthy run's setup is not drawn red. A refused
``initialize`` on a connection that never became modern stays a failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..client.wire_events import FALLBACK_SENT, fallback_answered, fallback_refused
from ..events import MCP_REQUEST, MCP_RESPONSE, ServerReady
from ..protocol.versions import MODERN_VERSIONS
from .model import Row

__all__ = ["mark_fallbacks"]


def _fallback_note(method: Any, outgoing: bool, message: dict[str, Any], version: str) -> str | None:
    """The label of an ``initialize`` request or answer on a connection that speaks the
    modern ``version`` (the words of ``--wire``); None for any other message."""
    if method != "initialize":
        return None
    if outgoing:
        return FALLBACK_SENT
    return fallback_refused(version) if "error" in message else fallback_answered(version)


def mark_fallbacks(rows: Sequence[Row], events: Sequence[dict[str, Any]]) -> None:
    """Dim and relabel the fallback ``initialize`` rows of every modern connection
    (``rows[i]`` draws ``events[i]``)."""
    modern = {
        (event.get("server"), event.get("connection")): str(event.get("protocol_version"))
        for event in events
        if event.get("kind") == ServerReady.kind and event.get("protocol_version") in MODERN_VERSIONS
    }
    if not modern:
        return
    for row, event in zip(rows, events, strict=True):
        if event.get("method") != "initialize":  # _fallback_note's first test, before the lookup
            continue
        version = modern.get((event.get("server"), event.get("connection")))
        if version is None or event.get("kind") not in (MCP_REQUEST, MCP_RESPONSE):
            continue
        recorded = event.get("message")
        message: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
        note = _fallback_note(event.get("method"), event.get("direction") == "out", message, version)
        if note is not None:
            error = message.get("error")
            row.label, row.state = note, "expected"
            if isinstance(error, dict):
                row.detail = f"error {error.get('code', '?')}: {error.get('message', '')}"
