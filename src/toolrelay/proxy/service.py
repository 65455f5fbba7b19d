"""The proxy as a ``ToolService``: the server stack serves it to hosts in either era.

``server/app.py`` (stdio, Streamable HTTP sessions: 2025-06-18 and 2025-11-25) and
``server/stateless.py`` (2026-07-28) answer the lifecycle and the envelope; this service
answers ``tools/list`` with every upstream tool under its alias (``offered.py``), hands
each ``tools/call`` to the ``Forwarder``, and its method table (``feature_methods``)
answers resources, prompts and completion from every upstream (``features.py``); a host
that takes tasks has its own tasks passed through (``tasks.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any

from .._version import __version__
from ..protocol.jsonrpc import JSONObject, Request
from ..protocol.request_envelope import CLIENT_CAPABILITIES_KEY
from ..relay.catalog import Catalog
from ..server.app import CallContext, ServerSession
from ..server.features import FeatureHandler
from ..server.listen_hub import ListenHub
from .features import FeatureRelay
from .forward import Forwarder
from .offered import host_tools
from .rounds import Rounds
from .task_bridge import shown_with_task_support
from .tasks import TaskRelay, host_takes_tasks

__all__ = ["ProxyService"]


class ProxyService:
    """Every upstream server's tools, offered as one server's."""

    uses_client_roots = False
    relays_logging = True
    """Hosts may set a log level: upstream log messages of their calls are passed on (``host_calls.py``)."""
    tools_change = False
    """Whether hosts are told of tool list changes (``listChanged``): set where the transport can."""
    listen_hub: ListenHub | None = None
    """Where 2026-07-28 hosts' listen requests hear the upstream servers' list changes."""

    def __init__(self, catalog: Catalog, forwarder: Forwarder, *, name: str = "toolrelay-proxy",
                 features: FeatureRelay | None = None) -> None:
        self.name = name
        self.features = features
        self.version = __version__
        self.catalog = catalog
        self.forwarder = forwarder
        self.tasks: TaskRelay | None = None
        """Where a host's own tasks pass through (``tasks.py``); None: every call is answered plainly."""
        self.rounds: Rounds | None = None
        """How a 2026-07-28 host's calls are answered (``rounds.py``); None: forwarded as one exchange."""
        found = catalog.server_instructions()
        self.instructions = "\n\n".join(f"{server}: {text}" for server, text in found.items()) or None

    def tools(self) -> list[dict[str, Any]]:
        return self.tools_for(None)

    def tools_for(self, session: ServerSession | None) -> list[dict[str, Any]]:
        """The tools a host is offered: a host whose tasks pass through sees their task support."""
        offered = host_tools(self.catalog, self.tasks.shown_to(session) if self.tasks is not None else None)
        if self.tasks is not None and host_takes_tasks(session):  # a 2026-07-28 server's: bridged tasks
            bridged = {route.alias for route in self.catalog.routes if self.tasks.bridge.serves(route.server)}
            offered = [shown_with_task_support(tool) if tool["name"] in bridged else tool for tool in offered]
        if self.forwarder.keep_names:  # each tool by its own name (one server: names.py)
            own = {route.alias: route.tool for route in self.catalog.routes}
            offered = [{**tool, "name": own.get(tool["name"], tool["name"])} for tool in offered]
        return offered

    def feature_methods(self) -> Mapping[str, FeatureHandler]:
        found = dict(self.features.methods()) if self.features is not None else {}
        return {**found, **self.tasks.methods()} if self.tasks is not None else found

    def extension_methods(self) -> Mapping[str, FeatureHandler]:
        """The 2026-07-28 tasks extension's methods (a host's bridged tasks: ``task_bridge.py``)."""
        return self.tasks.bridge.modern_methods() if self.tasks is not None else {}

    def extension_capabilities(self) -> JSONObject:
        return self.tasks.bridge.extension_capabilities() if self.tasks is not None else {}

    def feature_capabilities(self) -> JSONObject:
        found = self.features.capabilities() if self.features is not None else {}
        return {**found, **self.tasks.capabilities()} if self.tasks is not None else found

    def call(self, name: str, arguments: JSONObject, context: CallContext) -> Awaitable[JSONObject]:
        request = context.request
        if request is None:  # every transport gives it; a direct caller may not
            params: JSONObject = {"name": name, "arguments": arguments}
            request = Request(id=None, method="tools/call", params=params,  # type: ignore[arg-type]
                              raw={"jsonrpc": "2.0", "method": "tools/call", "params": params})
        session = context.session
        if session is None and self.tasks is not None:  # a 2026-07-28 host that takes tasks
            route = self.catalog.route(self.forwarder.catalog_alias(name))
            declared = _enveloped_capabilities(request)
            if self.tasks.bridge.takes_modern(route, declared):
                assert route is not None
                exchange = context.stream.exchange if context.stream is not None else None
                return self.tasks.bridge.create(name, route, arguments, request, context.protocol_version,
                                                None, capabilities=declared, exchange=exchange)
        if session is None and self.rounds is not None:  # 2026-07-28: asks are input_required rounds
            return self.rounds.call(name, arguments, request, context.protocol_version,
                                    _enveloped_capabilities(request), stream=context.stream)
        tasks = self.tasks
        if tasks is not None and session is not None and isinstance((request.params or {}).get("task"), dict):
            route = self.catalog.route(self.forwarder.catalog_alias(name))
            if tasks.passes(route, session, request.params):
                assert route is not None
                return tasks.create(name, route, arguments, request, context.protocol_version, session)
            if host_takes_tasks(session) and tasks.bridge.takes(route, request.params):
                assert route is not None
                return tasks.bridge.create(name, route, arguments, request, context.protocol_version, session)
        capabilities = session.client_capabilities if session is not None else {}
        return self.forwarder.forward(name, arguments, request, context.protocol_version, session=session,
                                      capabilities=capabilities, stream=context.stream)


def _enveloped_capabilities(request: Request) -> JSONObject:
    """A 2026-07-28 host's capabilities, from its request's envelope."""
    meta = (request.params or {}).get("_meta")
    found = meta.get(CLIENT_CAPABILITIES_KEY) if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}
