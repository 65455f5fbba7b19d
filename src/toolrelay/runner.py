"""The library's front door: run one task end to end.

``await run_async(task, RunOptions(...))`` opens the model endpoint (or starts the
offline stand-in), connects the MCP servers, optionally records a transcript, runs the
relay loop and closes everything; ``run(task, **options)`` is the synchronous form, and
``async for event in run_stream(task, options)`` the same run seen as it happens (the
answer text as it is written, each call, each turn; ``relay.run_events``).
The CLI's ``run`` and ``demo`` use the same function.

What servers ask of the run is answered through a ``client.host.Host``: sampling requests
go to the run's own model (``model_sampler``) once ``approve_sampling`` approves them,
elicitations to ``elicit``; without those callbacks they are refused and declined.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, TypedDict, Unpack

from .client.config import with_cli_settings
from .client.host import Elicitor, Host, Sampler, SamplingApprover, declining, refusing_approval
from .errors import UsageError
from .events import EventStream
from .model import ModelEndpoint, ResponsesClient
from .offline import OfflineModel, load_script
from .redaction import url_secrets
from .relay.catalog import Catalog, ConfigSource, StructuredOutput, servers_from
from .relay.consent import LIBRARY_HINT, refusing
from .relay.context import CallHook
from .relay.instructions import with_server_instructions
from .relay.loop import Approver, Relay, RunLimits, RunResult
from .relay.namespaces import DeclareMode
from .relay.offer import ToolFilter
from .relay.offered import starting_input
from .relay.request import RequestSettings
from .relay.run_events import RunEvent, RunListener, iterate_run, tell_both
from .relay.sampling import responses_sampler
from .transcript.writer import TranscriptWriter

__all__ = [
    "DEFAULT_MODEL",
    "OFFLINE_MODEL",
    "RunKeywords",
    "RunOptions",
    "check_options",
    "hosted_endpoint",
    "model_sampler",
    "request_settings",
    "run",
    "run_async",
    "run_stream",
]

DEFAULT_MODEL = "gpt-4.1"
OFFLINE_MODEL = "offline"
SAMPLING_LIBRARY_HINT = "pass approve_sampling= to let servers sample the model"
ELICIT_LIBRARY_HINT = "pass elicit= to answer servers' questions"


@dataclass(kw_only=True)
class RunOptions:
    """Everything a run can be told; defaults match the CLI's."""

    model: str = DEFAULT_MODEL
    """A model name, or ``offline`` for the built-in stand-in on loopback."""
    base_url: str | None = None
    """The Responses endpoint (default ``OPENAI_BASE_URL`` or OpenAI's)."""
    api_key: str | None = None
    """Default: ``OPENAI_API_KEY`` (or Azure's) from the environment."""
    config: ConfigSource = None
    """An MCP config file or server configs; None = the built-in file server on the cwd."""
    strict: bool = False
    declare: DeclareMode = "flat"
    """``namespaces``: each server is one Responses ``namespace`` of its tools' bare names
    (``--declare``); ``flat``: one ``server__tool`` function per tool."""
    structured_output: StructuredOutput = "auto"
    """``auto``: a tool's ``outputSchema`` is declared as ``output_schema`` and its valid
    ``structuredContent`` is what the model reads (``--structured-output``); ``off``: never."""
    chain: bool = False
    store: bool | None = None
    instructions: str | None = None
    tool_choice: str = "auto"
    parallel_tool_calls: bool = True
    stream: bool = True
    """Stream the answers (``--no-stream``: False asks for whole responses)."""
    extra_body: dict[str, Any] = field(default_factory=dict)
    limits: RunLimits = field(default_factory=RunLimits)
    approve: Approver | None = None
    """Asked before tools that are not read-only; None refuses them (the model is told)."""
    approve_sampling: SamplingApprover | None = None
    """Asked before a server's sampling request goes to the run's model; None refuses them
    (the server gets error -1)."""
    elicit: Elicitor | None = None
    """Answers servers' elicitations (a form or a URL for the user); None declines them."""
    script: str | Path | None = None
    """The offline model's script (``--script``)."""
    transcript: str | Path | None = None
    events: EventStream | None = None
    prompt: str | None = None
    """Start from a server's prompt, ``SERVER/NAME`` (``--prompt``); the task, if any, follows it."""
    prompt_arguments: Mapping[str, str] = field(default_factory=dict)
    """The prompt's arguments (``--arg k=v``)."""
    resources: Sequence[str] = ()
    """Resource URIs attached to the task as input parts (``--resource``)."""
    expose_resources: bool = False
    """Offer the model a ``<server>__read_resource(uri)`` tool per server with resources
    (``--expose-resources``), so it can follow a ``resource_link``."""
    filters: Sequence[ToolFilter] = ()
    """Links added to the offer chain (``toolrelay.ToolFilter``): tools they withhold are not
    offered to the model, each recorded with its reason (``--engine ray``: picklable ones)."""
    server_instructions: bool = True
    """Pass each server's initialize ``instructions`` on to the model (``--no-server-instructions``)."""
    protocol_version: str | None = None
    """The MCP revision asked of every server (``--protocol-version``); None: each server's
    config pin (``toolrelay.protocolVersion``), else ``auto`` (the probe)."""
    server_log_level: str | None = None
    """Log messages asked of every server (``--server-log-level``; wins over ``logLevel``)."""
    call_max_time: float | None = None
    """The most a tools/call may take in all (``--call-max-time``; wins over ``maxCallTime``)."""
    max_sampling_per_call: int | None = None
    """Sampling requests of a server answered during one tool call (``--max-sampling-per-call``;
    wins over ``maxSamplingPerCall``, default 32); the rest are refused."""
    roots: Sequence[str | Path] = ()
    """Directories every server is told it may work in (``--root``; wins over a config's
    ``roots``, never over ``"roots": false``); none: only the config's roots are declared."""
    environ: Mapping[str, str] | None = None
    run_id: str | None = None
    on_result: Callable[[RunResult], None] | None = None
    """Called with the result as soon as the run ends, before the servers are stopped
    (which can take seconds, or be interrupted): the CLI prints the answer there."""
    on_event: RunListener | None = None
    """Told each event of ``relay.run_events`` as it happens (``run_stream`` iterates them)."""
    hooks: Sequence[CallHook] = ()
    """Asked before every tool call and told its outcome (``relay.context.CallHook``); in
    a batch, every task's calls (under Ray, each worker runs its own copy)."""


class RunKeywords(TypedDict, total=False):
    """The keywords of ``run(task, **options)``: ``RunOptions``' fields, each optional, so
    that an IDE completes them and a type checker checks them (a test keeps the two equal)."""

    model: str
    base_url: str | None
    api_key: str | None
    config: ConfigSource
    strict: bool
    declare: DeclareMode
    structured_output: StructuredOutput
    chain: bool
    store: bool | None
    instructions: str | None
    tool_choice: str
    parallel_tool_calls: bool
    stream: bool
    extra_body: dict[str, Any]
    limits: RunLimits
    approve: Approver | None
    approve_sampling: SamplingApprover | None
    elicit: Elicitor | None
    script: str | Path | None
    transcript: str | Path | None
    events: EventStream | None
    prompt: str | None
    prompt_arguments: Mapping[str, str]
    resources: Sequence[str]
    expose_resources: bool
    filters: Sequence[ToolFilter]
    server_instructions: bool
    protocol_version: str | None
    server_log_level: str | None
    call_max_time: float | None
    max_sampling_per_call: int | None
    roots: Sequence[str | Path]
    environ: Mapping[str, str] | None
    run_id: str | None
    on_result: Callable[[RunResult], None] | None
    on_event: RunListener | None
    hooks: Sequence[CallHook]


async def run_async(task: str, options: RunOptions | None = None) -> RunResult:
    """Run ``task`` to its end; raises only for what ends the run itself (ModelError,
    config and connection failures, interruption)."""
    opts = options or RunOptions()
    events = opts.events or EventStream()
    run_id = opts.run_id or uuid.uuid4().hex[:12]
    _check_context_mode(opts)
    async with contextlib.AsyncExitStack() as stack:
        # every file and option is checked before a model or server starts
        servers = with_cli_settings(servers_from(opts.config, events=events), log_level=opts.server_log_level,
                                    max_call_time=opts.call_max_time, roots=opts.roots,
                                    max_sampling_per_call=opts.max_sampling_per_call)
        endpoint = _endpoint(opts, stack)
        if opts.transcript is not None:
            writer = TranscriptWriter(opts.transcript, run_id)
            writer.add_secrets(s for server in servers for s in server.secrets)
            writer.add_secrets([endpoint.api_key] if endpoint.api_key else [])
            writer.add_secrets(url_secrets(endpoint.base_url))
            stack.callback(writer.close)
            stack.callback(events.subscribe(writer))
        host = Host(
            sampler=await model_sampler(stack, opts, endpoint),
            approve_sampling=opts.approve_sampling or refusing_approval(SAMPLING_LIBRARY_HINT),
            elicitor=opts.elicit or declining(ELICIT_LIBRARY_HINT),
        )
        catalog = Catalog(servers, events=events, strict=opts.strict, protocol_version=opts.protocol_version,
                          declare=opts.declare, structured_output=opts.structured_output,
                          host=host, expose_resources=opts.expose_resources, filters=opts.filters)
        await stack.enter_async_context(catalog)
        client = await stack.enter_async_context(ResponsesClient(endpoint, events=events))
        shared = catalog.server_instructions() if opts.server_instructions else {}
        relay = Relay(
            catalog, client, request_settings(opts, shared), events=events, limits=opts.limits,
            strict=opts.strict,
            approve=opts.approve or refusing(LIBRARY_HINT), endpoint=client.url, listener=opts.on_event,
            hooks=opts.hooks,
        )
        connections = {name: catalog.connections[name] for name in catalog.available}
        name, first_input = await starting_input(
            task, connections, prompt=opts.prompt, arguments=dict(opts.prompt_arguments),
            resources=opts.resources, media_budget=opts.limits.media_budget,
        )
        result = await relay.run(name, run_id=run_id, first_input=first_input)
        if opts.on_result is not None:
            opts.on_result(result)
        return result
    raise AssertionError("unreachable")  # pragma: no cover  (mypy: the with block returns)


async def model_sampler(
    stack: contextlib.AsyncExitStack, opts: RunOptions, endpoint: ModelEndpoint | None = None
) -> Sampler:
    """A sampler that answers servers' sampling requests with ``opts.model`` (at ``endpoint``,
    else the one ``opts`` names; the offline stand-in is started for ``offline``), open until
    ``stack`` closes. Its model requests are not the run's turns: they are not recorded as
    such (the server's request and toolrelay's answer are)."""
    endpoint = endpoint or _endpoint(opts, stack)
    client = await stack.enter_async_context(ResponsesClient(endpoint, events=EventStream()))
    return responses_sampler(client, opts.model)


async def run_stream(task: str, options: RunOptions | None = None) -> AsyncGenerator[RunEvent, None]:
    """``run_async`` seen as it happens: ``async for event in run_stream(task, options)``
    yields text deltas, calls started and finished, turns, and last ``RunFinished`` (with
    the ``RunResult``). Raises what ``run_async`` raises, after its ``RunFinished`` when
    the run had begun; closing the iterator early (``contextlib.aclosing``) cancels the run."""
    opts = options or RunOptions()

    async def start(listener: RunListener) -> RunResult:
        before = opts.on_event
        tell = listener if before is None else tell_both(before, listener)
        return await run_async(task, replace(opts, on_event=tell))

    async with contextlib.aclosing(iterate_run(start)) as events:  # closed with this one
        async for event in events:
            yield event




def run(task: str, **options: Unpack[RunKeywords]) -> RunResult:
    """Synchronous ``run_async``: ``toolrelay.run("…", model="offline")``; the keywords are
    ``RunOptions``' fields."""
    _check_no_running_loop()
    _check_option_names(options)  # for callers no type checker looked at
    return asyncio.run(run_async(task, replace(RunOptions(), **options)))


def _check_option_names(options: Mapping[str, Any]) -> None:
    names = [f.name for f in fields(RunOptions)]
    for name in options:
        if name not in names:
            import difflib  # only on this error path: start-up time matters

            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            takes = ", ".join(names)
            raise UsageError(f"toolrelay.run() has no option {name!r}: {hint}RunOptions takes {takes}")


def check_options(options: RunOptions) -> None:
    """Every check ``run_async`` makes before it starts anything, on its own (it starts
    nothing either): for a caller that prepares something first, as the demo creates its
    folder, and must create nothing on a usage error."""
    _check_context_mode(options)
    servers_from(options.config, events=EventStream())  # no subscriber: run_async says its notices
    if options.model != OFFLINE_MODEL:
        hosted_endpoint(options)
    elif options.script is not None:
        load_script(options.script)


def _check_no_running_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return  # the normal case: no loop here, run() starts one
    raise UsageError(
        "toolrelay.run() cannot start inside a running event loop (async code, Jupyter): "
        "use `await toolrelay.run_async(task, toolrelay.RunOptions(...))` there"
    )


def _check_context_mode(opts: RunOptions) -> None:
    """Chain mode continues from the previous response as the endpoint stored it; with
    store: false it stores none, and the endpoint would be wrongly blamed afterwards."""
    if opts.chain and (opts.store is False or opts.extra_body.get("store") is False):
        raise UsageError(
            "--chain (chain=True) continues from the previous response as the endpoint stored it, and "
            "--no-store (store=False) sends store: false, so it keeps none: use one of them "
            "(without --chain the context is replayed, which works with store: false)"
        )


def _endpoint(opts: RunOptions, stack: contextlib.AsyncExitStack) -> ModelEndpoint:
    if opts.model == OFFLINE_MODEL:
        model = stack.enter_context(OfflineModel(opts.script))
        return ModelEndpoint(base_url=model.base_url)
    return hosted_endpoint(opts)


def hosted_endpoint(opts: RunOptions) -> ModelEndpoint:
    """The endpoint of a hosted (or local) model server, its key checked (``batch`` shares one)."""
    environ = os.environ if opts.environ is None else opts.environ
    endpoint = ModelEndpoint.from_environment(opts.base_url, environ)
    if opts.api_key is not None:
        endpoint = replace(endpoint, api_key=opts.api_key)
    endpoint.check_key()
    return endpoint


def request_settings(
    opts: RunOptions, server_instructions: Mapping[str, str] | None = None
) -> RequestSettings:
    """What every request of a run with ``opts`` carries (``batch`` builds its runs' too), with
    the ``server_instructions`` (server name → its initialize instructions) after the run's own."""
    return RequestSettings(
        model=opts.model,
        instructions=with_server_instructions(opts.instructions, server_instructions),
        tool_choice=opts.tool_choice,
        parallel_tool_calls=opts.parallel_tool_calls,
        context_mode="chain" if opts.chain else "replay",
        store=opts.store,
        stream=opts.stream,
        extra=dict(opts.extra_body),
    )
