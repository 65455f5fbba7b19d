"""Every message of a host's leg, exactly as it crossed the wire: ``proxy_wire`` events.

The forwarder records each host ``tools/call`` and the proxy's answer to it, paired with
the upstream request (``records.py``); this tracer, set on the stdio session's peer (and
on each HTTP host's session, numbered by the order they opened), records every message
of the host leg besides (the handshake, ``tools/list``, the proxy's notifications and
requests, each answer as sent, its era's envelope included), so ``verify`` can hold each
recorded answer to the one the host really got. A 2026-07-28 HTTP host's exchanges have
no session: they are recorded as host 0 (``MODERN_HOST``), each message with the number
of its exchange (one POST and its answer, numbered by the HTTP endpoint: the tracer's
tag), so two hosts' requests of one id stay apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Final

from ..events import Event, EventStream
from ..protocol.jsonrpc import JSONObject, Message
from .records import IN, OUT

__all__ = ["MODERN_HOST", "HostWire", "ProxyWire"]

MODERN_HOST: Final = 0
"""The ``host`` of an HTTP run's 2026-07-28 exchanges (their ``exchange`` numbers tell them apart)."""


@dataclass(slots=True, kw_only=True)
class ProxyWire(Event):
    kind: ClassVar[str] = "proxy_wire"
    optional_fields: ClassVar[frozenset[str]] = frozenset({"host", "exchange"})
    direction: str
    """``in`` (host → proxy) or ``out`` (proxy → host)."""
    message: dict[str, Any]
    host: int | None = None
    """The host's HTTP session number (several hosts may share the proxy); None on stdio."""
    exchange: int | None = None
    """A 2026-07-28 HTTP exchange's number (with ``host`` 0: one POST and its answer); None otherwise."""


class HostWire:
    """A ``protocol.peer.Tracer`` writing the host leg to the event stream."""

    def __init__(self, events: EventStream, *, host: int | None = None, exchanges: bool = False) -> None:
        """``exchanges``: the 2026-07-28 HTTP exchanges' tracer, whose tag is the number of
        the exchange a message crossed in (``server/http.py``); a session's tag is its own."""
        self.events = events
        self.host = host
        self.exchanges = exchanges

    def sent(self, message: JSONObject, tag: Any, delivered: bool = True) -> None:
        if self.events.active:
            self.events.emit(ProxyWire(direction=OUT, message=message, host=self.host,
                                       exchange=self._of(tag)))

    def received(self, message: Message, tag: Any, elapsed: float | None) -> None:
        if self.events.active:
            self.events.emit(ProxyWire(direction=IN, message=message.raw, host=self.host,
                                       exchange=self._of(tag)))

    def _of(self, tag: Any) -> int | None:
        return tag if self.exchanges and isinstance(tag, int) else None
