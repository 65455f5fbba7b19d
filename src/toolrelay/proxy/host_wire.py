"""Every message of a host's leg, exactly as it crossed the wire: ``proxy_wire`` events.

The forwarder records each host ``tools/call`` and the proxy's answer to it, paired with
the upstream request (``records.py``); this tracer, set on the stdio session's peer (and
on each HTTP host's session, numbered by the order they opened), records every message
of the host leg besides (the handshake, ``tools/list``, the proxy's notifications and
requests, each answer as sent, its era's envelope included), so ``verify`` can hold each
recorded answer to the one the host really got. A 2026-07-28 HTTP host's exchanges have
no session: they are recorded as host 0 (``MODERN_HOST``), whichever host sent them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Final

from ..events import Event, EventStream
from ..protocol.jsonrpc import JSONObject, Message
from .records import IN, OUT

__all__ = ["MODERN_HOST", "HostWire", "ProxyWire"]

MODERN_HOST: Final = 0
"""The ``host`` of an HTTP run's 2026-07-28 exchanges: they have no session to number."""


@dataclass(slots=True, kw_only=True)
class ProxyWire(Event):
    kind: ClassVar[str] = "proxy_wire"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"host"})
    direction: str
    """``in`` (host → proxy) or ``out`` (proxy → host)."""
    message: dict[str, Any]
    host: int | None = None
    """The host's HTTP session number (several hosts may share the proxy); None on stdio."""


class HostWire:
    """A ``protocol.peer.Tracer`` writing the host leg to the event stream."""

    def __init__(self, events: EventStream, *, host: int | None = None) -> None:
        self.events = events
        self.host = host

    def sent(self, message: JSONObject, tag: Any, delivered: bool = True) -> None:
        if self.events.active:
            self.events.emit(ProxyWire(direction=OUT, message=message, host=self.host))

    def received(self, message: Message, tag: Any, elapsed: float | None) -> None:
        if self.events.active:
            self.events.emit(ProxyWire(direction=IN, message=message.raw, host=self.host))
