"""Run the proxy: open every upstream server, serve hosts over stdio or HTTP, record both legs.

``run_proxy`` opens the catalog (every server of the config at once; a tool-name
collision refuses the start, naming both tools), records the offer, then serves the
``ProxyService`` with the server stack until the host closes stdin (stdio) or the proxy
is stopped (HTTP), and closes every upstream server. With a transcript, every event of
the run is written as it happens: the upstream leg as toolrelay's client records it,
the host leg and the pairing as ``records.py`` says.
"""

from __future__ import annotations

import logging
import uuid
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ToolrelayError, UsageError
from ..events import EventStream
from ..protocol import mcp as m
from ..protocol.framing import DEFAULT_MAX_MESSAGE_BYTES
from ..protocol.jsonrpc import JSONObject
from ..relay.catalog import Catalog
from ..relay.stages.context import CallHook
from ..server.app import MODERN, ServerSession
from ..server.listen_hub import ListenHub
from ..server.stdio import serve_stdio
from ..transcript.writer import TranscriptWriter
from .asks import HostAsks
from .changes import ChangeRelay, offer_record
from .features import FeatureRelay
from .followed import Following
from .forward import Forwarder
from .host_calls import HostCalls
from .host_wire import MODERN_HOST, HostWire
from .names import HostNames
from .offered import collisions
from .records import ProxyEnd, ProxyStart
from .rounds import DEFAULT_WAIT, Rounds
from .service import ProxyService
from .tasks import TaskRelay

__all__ = ["ProxySettings", "run_proxy"]

log = logging.getLogger("toolrelay.proxy")


@dataclass(slots=True, kw_only=True)
class ProxySettings:
    """How the proxy serves hosts (the ``toolrelay proxy`` options)."""

    name: str = "toolrelay-proxy"
    http: tuple[str, int] | None = None
    """Serve Streamable HTTP on (host, port) instead of stdio."""
    allowed_origins: Sequence[str] = ()
    token: str | None = None
    """With HTTP, the bearer token hosts must send (the proxy's own, never an upstream's)."""
    transcript: Path | None = None
    hooks: Sequence[CallHook] = ()
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    on_ready: Callable[[str], None] | None = None
    abandon_after: float = 3.0
    """With HTTP, seconds a host's call whose connection dropped waits for the host to
    resume its stream before it is cancelled upstream (``StreamOptions.abandon_after``)."""
    input_wait: float = DEFAULT_WAIT
    """Seconds a 2026-07-28 host's call that was answered ``input_required`` waits for the
    host's retry before it is cancelled upstream (``rounds.py``)."""
    asks: HostAsks | None = None
    """What answers the upstream servers' asks: the sampler and elicitor of the catalog's
    ``Host`` (``asks.py``); None: the catalog's own (sampling refused, elicitation declined)."""
    sse_hold: float | None = None
    """With HTTP, how long a request's SSE stream stays open without its answer (``StreamOptions.hold``)."""
    keep_names: bool = False
    """Offer the one server's tools, prompts and URIs by their own names (``names.py``)."""
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])


async def run_proxy(catalog: Catalog, settings: ProxySettings) -> None:
    """Serve ``catalog``'s servers as one MCP server until the host leaves or we are stopped."""
    _refuse_itself(catalog)
    if settings.keep_names and len(catalog.connections) != 1:
        raise UsageError(f"--keep-names fronts one server, and the config has {len(catalog.connections)} "
                         f"({', '.join(catalog.connections) or 'none'}): names are made unique by the "
                         "server__ prefix only when there are several")
    events = catalog.events
    writer = None
    if settings.transcript is not None:
        writer = TranscriptWriter(settings.transcript, settings.run_id, catalog.secrets)
        events.subscribe(writer)
    transport = "stdio" if settings.http is None else "http"
    events.emit(ProxyStart(name=settings.name, transport=transport, servers=list(catalog.connections)))
    reason = "the host closed the connection" if settings.http is None else "stopped"
    try:
        await catalog.open()
        _refuse_collisions(catalog)
        calls = settings.asks.calls if settings.asks is not None else HostCalls(events)
        for connection in catalog.connections.values():  # progress and log messages reach their host
            connection.on_notification = calls.notified
        forwarder = Forwarder(catalog, events, settings.hooks, calls, keep_names=settings.keep_names)
        names = HostNames(list(catalog.connections), keep_names=settings.keep_names)
        features = FeatureRelay(catalog, forwarder, names)
        _refuse_prompt_collisions(await features.open())
        events.emit(offer_record(catalog, "initial", names))
        service = ProxyService(catalog, forwarder, name=settings.name, features=features)
        service.tasks = TaskRelay(catalog, forwarder)
        service.tasks.bridge.input_wait = settings.input_wait  # a bridged task's input waits as long
        service.rounds = Rounds(forwarder, events, wait=settings.input_wait)
        if settings.asks is not None:
            settings.asks.ask_modern = service.rounds.ask
        offered = features.capabilities()  # what 2026-07-28 hosts' listen requests may hear
        follower = Following(catalog, names, events)  # who follows which resource, followed upstream once
        features.following = follower
        service.listen_hub = ListenHub({"toolsListChanged": True, "promptsListChanged": "prompts" in offered,
                                        "resourcesListChanged": "resources" in offered},
                                       follows=follower.follows, follow=follower.follow)
        service.tools_change = True  # told on the stdio session, or a 2025 HTTP session's GET stream
        features.list_changes = True
        relay = ChangeRelay(catalog, events, names)
        relay.watch()
        features.watch()  # after the calls' hook: it passes each notification on to it too
        service.tasks.watch()  # and tasks' status, to the host that owns the task
        await _serve(service, relay, features, settings, events, follower)
    except BaseException as exc:
        reason = f"{type(exc).__name__}: {exc}" if not isinstance(exc, KeyboardInterrupt) else "interrupted"
        raise
    finally:
        await catalog.close()
        events.emit(ProxyEnd(reason=reason))
        if writer is not None:
            writer.close()


def _refuse_itself(catalog: Catalog) -> None:
    """A config entry that starts ``toolrelay proxy`` would start the proxy again, and again:
    a host's own config given as is names the proxy itself."""
    for name, connection in catalog.connections.items():
        config = connection.config
        words = [Path(config.command or "").name, *config.args]
        if "proxy" in words and any(word.startswith("toolrelay") for word in words[:3]):
            raise UsageError(f"server {name} of the config runs toolrelay proxy itself (a host's own config "
                             "given as is names the proxy); leave it out of the proxy's --config")


def _refuse_collisions(catalog: Catalog) -> None:
    found = collisions((route.server, route.tool) for route in catalog.routes)
    if found:
        raise UsageError("tool name collision: " + "; ".join(found) + " (rename a server in the config, "
                         "or deny one of the tools with the server's toolrelay deny list)")


def _refuse_prompt_collisions(found: list[str]) -> None:
    if found:
        raise UsageError("prompt name collision: " + "; ".join(found) + " (rename a server in the config)")


async def _serve(
    service: ProxyService, relay: ChangeRelay, features: FeatureRelay, settings: ProxySettings,
    events: EventStream, follower: Following,
) -> None:
    # weakly held: a session the HTTP endpoint ended (DELETE, too many) is forgotten with it
    sessions: weakref.WeakSet[ServerSession] = weakref.WeakSet()
    relay.hosts[0] = lambda: _tell_all(sessions, m.TOOLS_CHANGED, None)
    features.hosts[0] = lambda method, params: _tell_all(sessions, method, params, follower)
    hub = service.listen_hub
    if hub is not None:  # and every 2026-07-28 host's listen request
        relay.hosts[1] = lambda: hub.publish(m.TOOLS_CHANGED)
        features.hosts[1] = hub.publish
    if settings.http is None:
        def joined(session: ServerSession) -> None:
            sessions.add(session)
            service.forwarder.calls.track(session)
            if events.active:  # every message of the host leg, as on the wire
                session.peer.tracer = HostWire(events)

        await serve_stdio(service, max_message_bytes=settings.max_message_bytes, on_session=joined)
        return
    from ..server.http import serve_http
    from ..server.http_session import HttpSession
    from ..server.http_streams import StreamOptions

    calls = service.forwarder.calls

    def opened(session: HttpSession) -> None:
        sessions.add(session.session)  # told of list changes on its GET stream
        number = calls.join(session.session)
        if events.active:  # every message of this host's leg, as it went on its streams
            session.wire.outer = HostWire(events, host=number)

    if service.rounds is not None:  # 2026-07-28 exchanges have no session: host 0, numbered each
        service.rounds.host = MODERN_HOST
    features.modern_host = MODERN_HOST
    host, port = settings.http
    modern_tracer = HostWire(events, host=MODERN_HOST, exchanges=True) if events.active else None
    await serve_http(service, host=host, port=port, token=settings.token,
                     max_message_bytes=settings.max_message_bytes, allowed_origins=settings.allowed_origins,
                     on_ready=settings.on_ready, on_session=opened,
                     streams=StreamOptions(abandon_after=settings.abandon_after, hold=settings.sse_hold),
                     modern_tracer=modern_tracer)


def _tell_all(sessions: weakref.WeakSet[ServerSession], method: str, params: JSONObject | None,
              follower: Following | None = None) -> None:
    """Send a notification to every handshake-era host connected (2026-07-28 hosts hear it
    on their listen requests: ``listen_hub.py``); a resource's update only to the hosts
    that subscribed to it (``followed.py``)."""
    updated = (params or {}).get("uri") if method == m.RESOURCE_UPDATED else None
    if follower is not None and updated is not None:
        follower.sweep()  # a session that ended leaves what it followed
    for session in list(sessions):
        if session.peer.closed is not None or session.request_envelope == MODERN:
            continue  # a 2026-07-28 stdio host hears only what its listen requests asked for
        if isinstance(updated, str) and follower is not None and not follower.wants(session, updated):
            continue  # it did not subscribe to that resource
        try:
            session.peer.notify(method, params)
        except ToolrelayError as exc:  # a host that went away
            log.debug("could not tell a host %s: %s", method, exc)
