"""A run's parts, built from ``RunOptions``: the one composition root.

``Assembly(options, stack, events=..., wording=...)`` checks the options' servers and then
builds, each open until ``stack`` closes: the model endpoint (the offline stand-in for
``--model offline``, else the hosted one, its key checked), one ``ResponsesClient`` per
endpoint (shared by whoever asks for the same one), the sampler that answers servers'
sampling requests, the ``Host`` of callbacks, the ``Catalog`` (``catalogs.catalog_of``),
the ``Relay`` and the secrets a transcript hides. ``single_run.assemble_run`` builds one per
run (``run_async``) and per conversation, ``batches.session.BatchSession`` one per batch
process (the local engine, each Ray worker), sharing its servers and endpoints among the
tasks. A feature every run and batch task gets (a hook, a filter, a client of its own) is
installed here, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from ..client.config import ServerConfig, config_policy, with_cli_settings
from ..client.host import Host, Sampler, SamplingApprover, SamplingRequest, declining, refusing_approval
from ..events import EventStream
from ..model import ModelEndpoint, ResponsesClient
from ..model.chat_client import open_client
from ..protocol.jsonrpc import JSONObject
from ..redaction import url_secrets
from ..relay.catalog import Catalog, servers_from
from ..relay.loop import Relay
from ..relay.policy import Policy, policy_of
from ..relay.run_events import RunListener
from ..relay.sampling import responses_sampler
from ..relay.stages.consent import LIBRARY_HINT, refusing
from ..relay.stages.context import CallHook
from .catalogs import catalog_of, configured_servers
from .options import OFFLINE_MODEL, RunOptions, check_context_mode, check_pins, request_settings
from .prices import load_prices

__all__ = [
    "BATCH_WORDING", "LIBRARY_WORDING", "Assembly", "Wording", "check_options", "hosted_endpoint",
    "model_sampler",
]


@dataclass(frozen=True)
class Wording:
    """What a refusal says when the options give no callback for a question."""

    consent: str
    """A tool call that needs consent (no ``approve``)."""
    sampling: str
    """A server's sampling request (no ``approve_sampling``)."""
    elicit: str
    """A server's elicitation (no ``elicit``)."""


LIBRARY_WORDING: Final = Wording(
    consent=LIBRARY_HINT,
    sampling="pass approve_sampling= to let servers sample the model",
    elicit="pass elicit= to answer servers' questions",
)
BATCH_WORDING: Final = Wording(
    consent="run the batch with --yes (yes=True) to approve tools that are not read-only",
    sampling="run the batch with --yes (approve_sampling=) to let servers sample the model",
    elicit="run the batch with --elicit defaults (elicit=) to accept forms' defaults",
)

_EndpointKey = tuple[bool, str | None]
"""Which endpoint options name: (offline, its script), else the hosted one."""
_ClientKey = tuple[_EndpointKey, str]
"""An endpoint and the API it is asked by (``api``)."""


class Assembly:
    """Builds the parts of the runs of ``options``; what it opens closes with ``stack``."""

    def __init__(self, options: RunOptions, stack: contextlib.AsyncExitStack, *, events: EventStream,
                 wording: Wording = LIBRARY_WORDING) -> None:
        check_context_mode(options)
        check_pins(options)
        self.prices = load_prices(options.prices)
        """The price table, checked before anything starts (``--prices``)."""
        options = with_config_policy(options)
        self.options = options
        self.events = events
        self.wording = wording
        self.servers: list[ServerConfig] = configured_servers(
            options.config, events=events, log_level=options.server_log_level,
            max_call_time=options.call_max_time, roots=options.roots,
            max_sampling_per_call=options.max_sampling_per_call, pins=options.pins)
        """Checked before any model or server starts (a usage error starts nothing)."""
        self._function_hooks = _add_function_servers(self.servers, options)
        self._stack = stack
        self._endpoints: dict[_EndpointKey, ModelEndpoint] = {}
        self._clients: dict[_ClientKey, ResponsesClient] = {}
        self._opening = asyncio.Lock()
        self._sampler: Sampler | None = None
        self._sampler_opening = asyncio.Lock()
        for part in (*options.filters, *options.hooks):  # a part that records what it decides (a policy)
            record_to = getattr(part, "record_to", None)
            if callable(record_to):
                record_to(events)

    def endpoint(self, opts: RunOptions | None = None) -> ModelEndpoint:
        """The endpoint ``opts`` (default: the assembly's options) name, opened on first use."""
        opts = opts or self.options
        key = _endpoint_key(opts)
        if key not in self._endpoints:
            self._endpoints[key] = open_endpoint(opts, self._stack)
        return self._endpoints[key]

    async def client(self, opts: RunOptions | None = None) -> ResponsesClient:
        """The client of the endpoint ``opts`` name (opened on first use, then shared: its
        connections and its back-off after a 429)."""
        opts = opts or self.options
        key = (_endpoint_key(opts), opts.api)
        async with self._opening:
            if key not in self._clients:
                client = open_client(opts.api, self.endpoint(opts), events=self.events)
                self._clients[key] = await self._stack.enter_async_context(client)
        return self._clients[key]

    async def sampler(self, endpoint: ModelEndpoint | None = None) -> Sampler:
        """A sampler on ``endpoint`` (default: an endpoint of its own), open now."""
        return await model_sampler(self._stack, self.options, endpoint)

    async def sample(self, request: SamplingRequest) -> JSONObject:
        """A server's sampling request, answered with the options' model on an endpoint of
        its own, opened on first use (a batch opens none until a server samples)."""
        async with self._sampler_opening:
            if self._sampler is None:
                self._sampler = await self.sampler()
        return await self._sampler(request)

    def host(self, sampler: Sampler | None) -> Host:
        """What servers ask: sampling goes to ``sampler`` once approved, elicitations to the
        options' ``elicit``; without those callbacks they are refused and declined."""
        return Host(
            sampler=sampler,
            approve_sampling=self._policy_gate(self.options.approve_sampling
                                               or refusing_approval(self.wording.sampling)),
            elicitor=self.options.elicit or declining(self.wording.elicit),
        )

    def _policy_gate(self, approve: SamplingApprover) -> SamplingApprover:
        """``approve`` behind the policy's sampling rules, when the options hold a policy."""
        policy = next((part for part in self.options.filters if isinstance(part, Policy)), None)
        return policy.sampling_gate(approve) if policy is not None else approve

    def catalog(self, servers: Sequence[ServerConfig], host: Host, *, events: EventStream | None = None,
                opts: RunOptions | None = None, shared: Catalog | None = None) -> Catalog:
        """The catalog of ``servers`` (not yet open), beside the open ``shared`` one if given."""
        opts = opts or self.options
        return catalog_of(servers, events=self.events if events is None else events, strict=opts.strict,
                          protocol_version=opts.protocol_version, host=host, shared=shared,
                          expose_resources=opts.expose_resources, filters=opts.filters,
                          declare=opts.declare, structured_output=opts.structured_output,
                          tool_search=opts.tool_search, always_load=opts.always_load)

    def relay(self, catalog: Catalog, client: ResponsesClient, opts: RunOptions | None = None, *,
              events: EventStream | None = None, listener: RunListener | None = None,
              tracing: CallHook | None = None) -> Relay:
        """The loop of one run on ``catalog`` and ``client``, with the servers' instructions
        after the run's own (unless ``server_instructions`` is off). Its hooks: the run's
        ``tracing`` first (the first refusal ends the asking, and a call a later hook refuses
        still gets its span), then the options' own, then the function servers'."""
        opts = opts or self.options
        instructions = catalog.server_instructions() if opts.server_instructions else None
        traced = () if tracing is None else (tracing,)
        return Relay(
            catalog, client, request_settings(opts, instructions),
            events=self.events if events is None else events, limits=opts.limits, strict=opts.strict,
            approve=opts.approve or refusing(self.wording.consent), endpoint=client.url,
            listener=listener, hooks=(*traced, *opts.hooks, *self._function_hooks), prices=self.prices,
        )

    def tracing(self, catalog: Catalog, secrets: Sequence[str]) -> CallHook | None:
        """The run's spans (``otel/``: a hook, and a subscriber of the assembly's events until
        the stack closes), when the options give a tracer provider or the application set a
        global one; None, and no OpenTelemetry import, otherwise."""
        if self.options.tracer_provider is None and "opentelemetry.trace" not in sys.modules:
            return None  # nobody can have set a global provider
        from ..otel.metrics import run_metrics
        from ..otel.run_spans import RunTracing, tracer_of

        tracer = tracer_of(self.options.tracer_provider)
        if tracer is None:
            return None
        tracing = RunTracing(tracer, secrets=secrets, catalog=catalog,
                             metrics=run_metrics(self.options.meter_provider))
        return self._stack.enter_context(tracing.listen(self.events))

    def secrets(self, endpoint: ModelEndpoint | None = None) -> list[str]:
        """What a transcript must never show: the servers' secrets and ``endpoint``'s key and
        the secrets in its URL."""
        secrets = [secret for server in self.servers for secret in server.secrets]
        if endpoint is not None:
            secrets += [endpoint.api_key] if endpoint.api_key else []
            secrets += url_secrets(endpoint.base_url)
        return secrets


def _add_function_servers(servers: list[ServerConfig], opts: RunOptions) -> tuple[CallHook, ...]:
    """``opts.tools`` as in-process servers after ``servers`` (``functions/``, imported only
    when there are some), and the hook that tells them each call's call_id."""
    if not opts.tools:
        return ()
    from ..functions.servers import CallIds, function_servers

    added = function_servers(opts.tools, [server.name for server in servers])
    servers += with_cli_settings(added, log_level=opts.server_log_level, max_call_time=opts.call_max_time,
                                 roots=(), max_sampling_per_call=opts.max_sampling_per_call, pins=opts.pins)
    return (CallIds(frozenset(server.name for server in added)),)


def with_config_policy(options: RunOptions) -> RunOptions:
    """``options`` with the config file's ``"toolrelay": {"policy": ...}`` as filter and hook,
    unless they hold a policy already (``--policy``, or the caller's own, wins)."""
    config = options.config
    if not isinstance(config, (str, os.PathLike)) or any(
            isinstance(part, Policy) for part in (*options.filters, *options.hooks)):
        return options
    path = Path(config)
    block = config_policy(path)
    if block is None:
        return options
    policy = policy_of(block, path)
    return replace(options, filters=(*options.filters, policy), hooks=(*options.hooks, policy))


def _endpoint_key(opts: RunOptions) -> _EndpointKey:
    offline = opts.model == OFFLINE_MODEL
    if offline:
        return offline, str(opts.script) if opts.script is not None else None
    # a hosted endpoint by its URL and key: a batch task may name its own (per-task base_url)
    if opts.base_url is None and opts.api_key is None:
        return offline, None
    return offline, f"{opts.base_url}\n{opts.api_key}"


def open_endpoint(opts: RunOptions, stack: contextlib.AsyncExitStack) -> ModelEndpoint:
    """The endpoint ``opts`` name: the offline stand-in (started until ``stack`` closes), or
    the hosted one."""
    if opts.model == OFFLINE_MODEL:
        from ..offline import OfflineModel  # its HTTP server and h11: only for the stand-in

        model = stack.enter_context(OfflineModel(opts.script))
        return ModelEndpoint(base_url=model.base_url)
    return hosted_endpoint(opts)


def hosted_endpoint(opts: RunOptions) -> ModelEndpoint:
    """The endpoint of a hosted (or local) model server, its key checked."""
    environ = os.environ if opts.environ is None else opts.environ
    endpoint = ModelEndpoint.from_environment(opts.base_url, environ)
    if opts.api_key is not None:
        endpoint = replace(endpoint, api_key=opts.api_key)
    endpoint.check_key()
    return endpoint


async def model_sampler(
    stack: contextlib.AsyncExitStack, opts: RunOptions, endpoint: ModelEndpoint | None = None
) -> Sampler:
    """A sampler that answers servers' sampling requests with ``opts.model`` (at ``endpoint``,
    else the one ``opts`` names; the offline stand-in is started for ``offline``), open until
    ``stack`` closes. Its model requests are not the run's turns: they are not recorded as
    such (the server's request and toolrelay's answer are)."""
    endpoint = endpoint or open_endpoint(opts, stack)
    client = await stack.enter_async_context(open_client(opts.api, endpoint, events=EventStream()))
    return responses_sampler(client, opts.model)


def check_options(options: RunOptions, *, endpoint: bool = True) -> None:
    """Every check a run makes before it starts anything, on its own (it starts nothing
    either): for a caller that prepares something first, as the demo creates its folder,
    and must create nothing on a usage error. ``endpoint=False``: not the hosted endpoint's
    (a batch whose tasks name their own: ``batches.endpoints``)."""
    check_context_mode(options)
    check_pins(options)
    load_prices(options.prices)
    servers_from(options.config, events=EventStream())  # no subscriber: the run says its notices
    _add_function_servers([], options)
    if options.model != OFFLINE_MODEL:
        if endpoint:
            hosted_endpoint(options)
    elif options.script is not None:
        from ..offline import load_script

        load_script(options.script)
