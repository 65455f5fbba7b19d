"""What a run can be told: ``RunOptions`` (the library's and the CLI's one vocabulary), and
the checks and request settings that follow from it alone.

``run(task, **options)`` takes ``RunOptions``' fields as keywords (``RunKeywords``, kept equal
by a test); ``assembly.parts`` builds a run's parts from it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypedDict

from ..client.config import PIN_MODES
from ..client.host import Elicitor, SamplingApprover
from ..errors import UsageError
from ..events import EventStream
from ..functions.sources import ToolSource
from ..model.chat_client import API_CHOICES, ApiChoice
from ..relay.catalog import ConfigSource, StructuredOutput
from ..relay.loop import Approver, RunLimits, RunResult
from ..relay.offer import ToolFilter
from ..relay.run_events import RunListener
from ..relay.stages.context import CallHook
from ..relay.stages.cost import Price
from ..relay.stages.deferred import ToolSearchMode
from ..relay.stages.instructions import with_server_instructions
from ..relay.stages.namespaces import DeclareMode
from ..relay.stages.request import RequestSettings
from ..relay.stages.sampling_fields import SAMPLING, SEED_NEEDS_CHAT, sampling_extra, sampling_problem
from .request_file import dialect_fields, loop_names

__all__ = [
    "DEFAULT_MODEL",
    "OFFLINE_MODEL",
    "PriceSource",
    "RunKeywords",
    "RunOptions",
    "check_context_mode",
    "request_settings",
]

PriceSource = str | Path | Mapping[str, Mapping[str, float]] | Mapping[str, Price] | None
"""Where a run's prices come from: a JSON file, or the table itself."""

DEFAULT_MODEL = "gpt-4.1"
OFFLINE_MODEL = "offline"


class MeterProvider(Protocol):
    """An OpenTelemetry ``MeterProvider`` (``opentelemetry.sdk.metrics.MeterProvider``),
    named here so that importing toolrelay imports no OpenTelemetry."""

    def get_meter(self, name: str, version: str | None = None, schema_url: str | None = None,
                  attributes: Any = None) -> Any: ...


class TracerProvider(Protocol):
    """An OpenTelemetry ``TracerProvider`` (``opentelemetry.sdk.trace.TracerProvider``), as
    a run uses it: named here so that importing toolrelay imports no OpenTelemetry."""

    def get_tracer(self, instrumenting_module_name: str, instrumenting_library_version: str | None = None,
                   ) -> Any: ...


@dataclass(kw_only=True)
class RunOptions:
    """Everything a run can be told; defaults match the CLI's."""

    model: str = DEFAULT_MODEL
    """A model name, or ``offline`` for the built-in stand-in on loopback."""
    base_url: str | None = None
    """The Responses endpoint (default ``OPENAI_BASE_URL`` or OpenAI's)."""
    api: ApiChoice = "responses"
    """The model API (``--api``): ``responses``, ``chat`` (``{base_url}/chat/completions``), or
    ``auto`` (Responses, then chat when the endpoint answers 404 / 405 at ``/responses``)."""
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
    tool_search: ToolSearchMode = "off"
    """``hosted``: tools declared deferred in namespaces with the API's ``tool_search``;
    ``client``: only a client ``tool_search`` tool, answered from toolrelay's own index
    (``--tool-search``); ``off``: every tool declared."""
    always_load: tuple[str, ...] = ()
    """With ``tool_search``: aliases or globs declared up front (``--always-load``)."""
    chain: bool = False
    store: bool | None = None
    instructions: str | None = None
    tool_choice: str = "auto"
    parallel_tool_calls: bool = True
    stream: bool = True
    """Stream the answers (``--no-stream``: False asks for whole responses)."""
    extra_body: dict[str, Any] = field(default_factory=dict)
    """Request settings: more body fields sent with every request as given (``--request-settings
    FILE`` fills it: ``assembly.request_file``); fields toolrelay sets itself are refused, and
    the sampling fields above win over their namesakes here."""
    prompt_cache_key: str | None = None
    """Sent as ``prompt_cache_key`` with every request (``--prompt-cache-key``): requests that
    share it share the endpoint's prompt cache. A batch's tasks default to the batch's name
    and the task's family (``batches.session``)."""
    temperature: float | None = None
    """Sent as ``temperature`` (``--temperature``, 0 to 2); None: the endpoint's default."""
    top_p: float | None = None
    """Sent as ``top_p`` (``--top-p``, 0 to 1); None: the endpoint's default."""
    seed: int | None = None
    """Sent as ``seed`` (``--seed``): a Chat Completions field, so only with ``api="chat"``."""
    max_output_tokens: int | None = None
    """Sent as ``max_output_tokens`` (``--max-output-tokens``, at least 1; chat:
    ``max_completion_tokens``)."""
    top_logprobs: int | None = None
    """Sent as ``top_logprobs`` (``--top-logprobs``, 0 to 20), asking for the answer's logprobs
    (Responses: ``include`` ``message.output_text.logprobs``; chat: ``logprobs: true``)."""
    compact_at: int | None = None
    """Ask the endpoint to compact the context once it reaches this many tokens
    (``--compact-at``: ``context_management``); later inputs start from the compaction item.
    Responses only (``api="chat"`` refuses it)."""
    prices: PriceSource = None
    """A price table (``--prices FILE``): a JSON file's path, or the parsed table itself, model
    → dollars per million tokens (``relay/stages/cost.py``); the run's cost goes into
    ``RunResult.cost`` and ``run_end``. toolrelay ships no prices."""
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
    pins: str | None = None
    """How tool definitions are pinned (``--pins``: enforce, strict, warn, off; wins over each
    server's ``toolrelay.pins``); None: each server's setting, else enforce (``relay/pins.py``)."""
    environ: Mapping[str, str] | None = None
    run_id: str | None = None
    on_result: Callable[[RunResult], None] | None = None
    """Called with the result as soon as the run ends, before the servers are stopped
    (which can take seconds, or be interrupted): the CLI prints the answer there."""
    on_event: RunListener | None = None
    """Told each event of ``relay.run_events`` as it happens (``run_stream`` iterates them)."""
    hooks: Sequence[CallHook] = ()
    """Asked before every tool call and told its outcome (``relay.stages.context.CallHook``); in
    a batch, every task's calls (under Ray, each worker runs its own copy)."""
    tools: Sequence[ToolSource] = ()
    """Python functions as tools (``@toolrelay.tool``, or plain ones), served by the
    in-process MCP server ``py`` beside the configured servers, and ``toolrelay.tools_server``
    groups, each a server of its own name (``functions/``; ``--engine ray``: importable ones)."""
    tracer_provider: TracerProvider | None = None
    """Trace the run with this OpenTelemetry provider (the ``otel`` extra; docs/traces.md);
    None: the global one, once the application has set one, else no tracing. In a batch,
    the local engine's tasks (Ray workers trace with ``BatchOptions.otel``)."""
    meter_provider: MeterProvider | None = None
    """A traced run's metrics go to this OpenTelemetry ``MeterProvider`` (None: the global
    one; docs/traces.md#metrics)."""


class RunKeywords(TypedDict, total=False):
    """The keywords of ``run(task, **options)``: ``RunOptions``' fields, each optional, so
    that an IDE completes them and a type checker checks them (a test keeps the two equal)."""

    model: str
    base_url: str | None
    api: ApiChoice
    api_key: str | None
    config: ConfigSource
    strict: bool
    declare: DeclareMode
    structured_output: StructuredOutput
    tool_search: ToolSearchMode
    always_load: tuple[str, ...]
    chain: bool
    store: bool | None
    instructions: str | None
    tool_choice: str
    parallel_tool_calls: bool
    stream: bool
    extra_body: dict[str, Any]
    prompt_cache_key: str | None
    temperature: float | None
    top_p: float | None
    seed: int | None
    max_output_tokens: int | None
    top_logprobs: int | None
    compact_at: int | None
    prices: PriceSource
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
    pins: str | None
    environ: Mapping[str, str] | None
    run_id: str | None
    on_result: Callable[[RunResult], None] | None
    on_event: RunListener | None
    hooks: Sequence[CallHook]
    tools: Sequence[ToolSource]
    tracer_provider: TracerProvider | None
    meter_provider: MeterProvider | None


def check_context_mode(opts: RunOptions) -> None:
    """Chain mode continues from the previous response as the endpoint stored it; with
    store: false it stores none, and the endpoint would be wrongly blamed afterwards."""
    if opts.chain and (opts.store is False or opts.extra_body.get("store") is False):
        raise UsageError(
            "--chain (chain=True) continues from the previous response as the endpoint stored it, and "
            "--no-store (store=False) sends store: false, so it keeps none: use one of them "
            "(without --chain the context is replayed, which works with store: false)"
        )
    check_api(opts)


def task_key(task_id: str, variable: str, environ: Mapping[str, str] | None) -> str:
    """A batch task's API key, from the environment variable its ``api_key_env`` names."""
    found = (os.environ if environ is None else environ).get(variable, "").strip()
    if not found:
        raise UsageError(f"task {task_id}: api_key_env names {variable}, which is not set in the environment")
    return found


def check_api(opts: RunOptions) -> None:
    """What the chat dialect cannot say is refused before anything starts (and what the
    Responses API cannot: a sampling ``seed``)."""
    if opts.api not in API_CHOICES:
        raise UsageError(f"api must be one of {', '.join(API_CHOICES)}, not {opts.api!r}")
    check_sampling(opts)
    check_compact_at(opts)
    if opts.extra_body:
        settings_of(opts, EXTRA_BODY)
    if opts.api != "chat":
        return
    if opts.chain:
        raise UsageError("--chain (chain=True) needs the Responses API's previous_response_id, which "
                         "Chat Completions has not: with --api chat the context is replayed")
    if opts.declare == "namespaces":
        raise UsageError("--declare namespaces needs the Responses API's namespace tools, which Chat "
                         "Completions has not: use --declare flat with --api chat")


def check_sampling(opts: RunOptions) -> None:
    """The sampling fields, by the check a batch task line's have too (``sampling_fields``)."""
    for key, value in sampling_of(opts).items():
        why = sampling_problem(key, value)
        if why is not None:
            raise UsageError(f"{why} (--{key.replace('_', '-')})")
    if opts.seed is not None and opts.api != "chat":
        raise UsageError(f"{SEED_NEEDS_CHAT}: --seed (seed=) needs --api chat (api={opts.api!r})")


def sampling_of(opts: RunOptions) -> dict[str, Any]:
    """The sampling fields ``opts`` gives (those not None)."""
    return {key: getattr(opts, key) for key in SAMPLING if getattr(opts, key) is not None}


STORE_INCLUDE = "reasoning.encrypted_content"
"""What ``--no-store`` asks a request to ``include`` (``relay.stages.request``)."""
EXTRA_BODY = "the request settings (extra_body, --request-settings)"
"""How the errors of a run's own request settings name them."""


def settings_of(opts: RunOptions, source: str) -> dict[str, Any]:
    """``opts.extra_body`` checked and as a request of ``opts.api`` carries it (``request_file``):
    ``UsageError`` naming ``source`` and the field."""
    return dialect_fields(loop_names(opts.extra_body, source), opts.api, source)


def check_compact_at(opts: RunOptions) -> None:
    """A compaction threshold is a positive token count, and a Responses feature."""
    threshold = opts.compact_at
    if threshold is None:
        return
    if not isinstance(threshold, int) or isinstance(threshold, bool) or threshold < 1:
        raise UsageError(f"--compact-at (compact_at) must be a positive number of tokens, not {threshold!r}")
    if opts.api == "chat":
        raise UsageError("--compact-at (compact_at) asks the Responses API to compact the context "
                         "(context_management), which Chat Completions has not: use --api responses, "
                         "or leave --compact-at out with --api chat")


def check_pins(opts: RunOptions) -> None:
    if opts.pins is not None and opts.pins not in PIN_MODES:
        raise UsageError(f"pins must be one of {', '.join(PIN_MODES)}, not {opts.pins!r}")


def request_settings(
    opts: RunOptions, server_instructions: Mapping[str, str] | None = None
) -> RequestSettings:
    """What every request of a run with ``opts`` carries, with the ``server_instructions``
    (server name → its initialize instructions) after the run's own."""
    return RequestSettings(
        model=opts.model,
        instructions=with_server_instructions(opts.instructions, server_instructions),
        tool_choice=opts.tool_choice,
        parallel_tool_calls=opts.parallel_tool_calls,
        context_mode="chain" if opts.chain else "replay",
        store=opts.store,
        stream=opts.stream,
        extra=_with_store_include(opts, sampling_extra(sampling_of(opts), settings_of(opts, EXTRA_BODY))),
        prompt_cache_key=opts.prompt_cache_key,
        compact_at=opts.compact_at,
    )


def _with_store_include(opts: RunOptions, extra: dict[str, Any]) -> dict[str, Any]:
    """``extra`` whose own ``include`` (sent over the request's) also asks for the encrypted
    reasoning ``--no-store`` replays."""
    include = extra.get("include")
    if opts.store is not False or not isinstance(include, list) or STORE_INCLUDE in include:
        return extra
    return {**extra, "include": [STORE_INCLUDE, *include]}
