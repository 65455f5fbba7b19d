"""The options of a run, declared once for ``toolrelay run`` and ``toolrelay batch``, and
read into ``RunOptions`` once (``shaping_options``).

A new option of both ``run`` and ``batch`` goes here: a row of ``SHARED`` (its help in
``run``'s words, and in ``batch``'s where a batch says it per task), read in
``shaping_options``, named in ``help_layout.GROUPS`` and documented in docs/cli.md under
both verbs. An option of one verb only stays in that verb's ``configure``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from ..assembly.options import DEFAULT_MODEL, RunOptions
from ..assembly.request_file import dialect_fields, load_request_settings
from ..model.chat_client import API_CHOICES
from ..relay.loop import RunLimits
from ..relay.stages.deferred import TOOL_SEARCH_MODES
from ..relay.stages.feedback import DEFAULT_MEDIA_BUDGET, DEFAULT_OUTPUT_BUDGET
from ..relay.streaming import EARLY_POLICIES
from .arg_types import a_number, a_whole_number
from .common import add_root_option, add_server_options, positive_count, positive_seconds
from .host_options import add_pins_option, add_policy_option, add_sampling_cap_option, policy_from_args
from .otel_options import add_otel_options
from .server_activity import add_call_max_time_option, add_log_level_option

__all__ = ["SHARED", "Shared", "add_run_options", "shaping_options"]

Verb = Literal["run", "batch"]


@dataclass(frozen=True)
class Shared:
    """One option of both verbs."""

    flags: tuple[str, ...]
    help: str
    """``run``'s help (and ``batch``'s, unless ``per_task`` is given)."""
    per_task: str | None = None
    """``batch``'s help, where it differs."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """The rest of ``add_argument``'s keywords."""

    def help_for(self, verb: Verb) -> str:
        return self.per_task if verb == "batch" and self.per_task is not None else self.help


SHARED: Final[tuple[Shared, ...]] = (
    Shared(("--api",), "the model API: responses (default), chat (POST {base}/chat/completions), or auto "
                       "(Responses, then chat if the endpoint has no /responses)",
           "the model API: responses (default), chat or auto",
           {"choices": API_CHOICES, "default": "responses"}),
    Shared(("--instructions",), "system instructions sent with every request"),
    Shared(("--chain",), "send previous_response_id instead of replaying the context (not with --no-store)",
           "send previous_response_id instead of replaying the context", {"action": "store_true"}),
    Shared(("--no-store",), "send store: false (and ask for encrypted reasoning items to replay)",
           "send store: false", {"dest": "store", "action": "store_const", "const": False, "default": None}),
    Shared(("--tool-choice",), "auto (default), required, none, or an alias",
           settings={"default": "auto", "metavar": "CHOICE"}),
    Shared(("--no-parallel",), "parallel_tool_calls: false (at most one call per turn)",
           "parallel_tool_calls: false", {"dest": "parallel", "action": "store_false"}),
    Shared(("--no-stream",),
           "ask for whole responses instead of streamed ones (the text then appears at once)",
           "ask for whole responses", {"dest": "stream", "action": "store_false"}),
    Shared(("--prompt-cache-key",), "sent as prompt_cache_key with every request (requests that share a "
                                    "key share the endpoint's prompt cache)",
           "prompt_cache_key of every task's requests (default: the batch's name and the task's family)",
           {"metavar": "KEY"}),
    Shared(("--request-settings",),
           "a JSON object of body fields sent with every request as given (prompt_cache_options, "
           "reasoning, text, metadata, service_tier, a server's extras such as top_k); the sampling "
           "options win over the file's fields",
           "a JSON object of body fields sent with every task's requests (a task's request_settings "
           "go over it)", {"metavar": "FILE"}),
    Shared(("--temperature",), "sampling temperature, 0 to 2 (default: the endpoint's)",
           "sampling temperature, 0 to 2 (a task's own temperature wins)",
           {"type": a_number, "metavar": "T"}),
    Shared(("--top-p",), "nucleus sampling, 0 to 1 (default: the endpoint's)",
           "nucleus sampling, 0 to 1 (a task's own top_p wins)", {"type": a_number, "metavar": "P"}),
    Shared(("--seed",), "sampling seed (a Chat Completions field: with --api chat)",
           "sampling seed, with --api chat (a task's own wins)", {"type": a_whole_number, "metavar": "N"}),
    Shared(("--max-output-tokens",), "the most tokens an answer may take (chat: max_completion_tokens)",
           "the most tokens an answer may take (a task's own max_output_tokens wins)",
           {"type": a_whole_number, "metavar": "N"}),
    Shared(("--top-logprobs",), "ask for the answer's logprobs with the N likeliest tokens, 0 to 20",
           "ask for the answers' logprobs, 0 to 20 (a task's own top_logprobs wins)",
           {"type": a_whole_number, "metavar": "N"}),
    Shared(("--compact-at",), "ask the endpoint to compact the context once it reaches TOKENS "
                              "(context_management); later inputs start from the compaction item "
                              "(Responses only)",
           "compact each task's context once it reaches TOKENS (Responses only)",
           {"type": positive_count, "metavar": "TOKENS"}),
    Shared(("--prices",), "a JSON price table, model → dollars per million tokens (input, output, "
                          "cached_input, cache_write): the run's cost is shown and recorded; none is shipped",
           "a JSON price table, model → dollars per million tokens: each task's cost and the batch's",
           {"metavar": "FILE"}),
    Shared(("--early",), "calls that start while their response still streams: read-only (default: tools "
                         "annotated readOnlyHint), all, or none (servers whose annotations you do not trust)",
           "calls that start while their response still streams (default read-only)",
           {"choices": EARLY_POLICIES, "default": "read-only"}),
    Shared(("--max-turns",), "model requests (default 10)", "model requests per task (default 10)",
           {"type": positive_count, "default": 10, "metavar": "N"}),
    Shared(("--max-tool-calls",), "tool calls in the whole run", "tool calls per task",
           {"type": positive_count, "metavar": "N"}),
    Shared(("--timeout",), "wall-clock limit for the run, in seconds",
           "wall-clock limit per task, in seconds",
           {"type": positive_seconds, "metavar": "S"}),
    Shared(("--call-timeout",),
           "per tools/call: seconds without an answer or progress (default: each server's, 60)",
           "per tools/call: seconds without an answer or progress (default: each server's)",
           {"type": positive_seconds, "metavar": "S"}),
    Shared(("--output-budget",),
           f"tool output passed on before it is cut (default {DEFAULT_OUTPUT_BUDGET})",
           settings={"type": positive_count, "default": DEFAULT_OUTPUT_BUDGET, "metavar": "CHARS"}),
    Shared(("--media-budget",),
           f"images and files per tool output passed on (default {DEFAULT_MEDIA_BUDGET})",
           settings={"type": positive_count, "default": DEFAULT_MEDIA_BUDGET, "metavar": "BYTES"}),
    Shared(("--text-only",), "images/files in results become text stand-ins (for text-only endpoints)",
           "images/files in results become text stand-ins", {"action": "store_true"}),
    Shared(("--yes",),
           "approve every call of tools not marked read-only, and every sampling request of a server",
           "run tools that are not read-only and let servers sample the model (a batch never prompts)",
           {"action": "store_true"}),
    Shared(("--quiet",), "no progress on stderr", settings={"action": "store_true"}),
    Shared(("--tool-search",),
           "off (default), hosted (tools declared deferred in namespaces, the API searches and loads "
           "them) or client (only a tool_search tool is declared; toolrelay searches its catalog "
           "and loads the best matches)",
           settings={"choices": TOOL_SEARCH_MODES, "default": "off"}),
    Shared(("--always-load",),
           "with --tool-search: a tool declared up front, never deferred (an alias such as "
           "github.get_issue, or a glob; repeatable)",
           settings={"action": "append", "default": [], "metavar": "ALIAS_OR_GLOB"}),
)
"""The options both verbs declare alike (besides those of ``add_run_options``' helpers)."""


def add_run_options(parser: argparse.ArgumentParser, verb: Verb) -> None:
    """Every option ``run`` and ``batch`` share: servers, roots, the model, requests, limits,
    what servers ask, ``--yes``, ``--quiet``, ``--otel``."""
    add_server_options(parser)
    add_root_option(parser)
    add_model_options(parser)
    for option in SHARED:
        parser.add_argument(*option.flags, help=option.help_for(verb), **option.settings)
    add_call_max_time_option(parser)
    add_log_level_option(parser)
    add_sampling_cap_option(parser)
    add_pins_option(parser)
    add_policy_option(parser)
    add_expose_resources(parser)
    add_otel_options(parser)


def add_model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=DEFAULT_MODEL,
                        help=f"model name, or 'offline' (default {DEFAULT_MODEL})")
    parser.add_argument("--base-url", metavar="URL",
                        help="Responses endpoint (default OPENAI_BASE_URL or OpenAI)")
    parser.add_argument("--script", metavar="FILE", help="the offline model's script (with --model offline)")


def add_expose_resources(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--expose-resources", action="store_true",
        help="offer a SERVER__read_resource(uri) tool per server with resources (for resource_link)")


def shaping_options(args: argparse.Namespace) -> RunOptions:
    """What the shared options say (model, servers, requests, limits): each verb adds how it
    asks for consent and where it records."""
    policy = policy_from_args(args)  # one object: the filter and the hook (it reads what the filter saw)
    return RunOptions(
        filters=(policy,) if policy else (), hooks=(policy,) if policy else (),
        model=args.model, base_url=args.base_url, api=args.api,
        config=Path(args.config) if args.config else None,
        strict=args.strict, chain=args.chain, store=args.store, instructions=args.instructions,
        declare=args.declare, structured_output=args.structured_output,
        tool_search=args.tool_search, always_load=tuple(args.always_load),
        tool_choice=args.tool_choice, parallel_tool_calls=args.parallel, stream=args.stream,
        limits=RunLimits(
            max_turns=args.max_turns, max_tool_calls=args.max_tool_calls, timeout=args.timeout,
            call_timeout=args.call_timeout, output_budget=args.output_budget,
            media_budget=args.media_budget, multimodal=not args.text_only, early=args.early,
        ),
        script=args.script, protocol_version=args.protocol_version, expose_resources=args.expose_resources,
        server_log_level=args.server_log_level, call_max_time=args.call_max_time, roots=args.roots,
        max_sampling_per_call=args.max_sampling_per_call, pins=args.pins,
        prompt_cache_key=args.prompt_cache_key, temperature=args.temperature, top_p=args.top_p,
        seed=args.seed, max_output_tokens=args.max_output_tokens, top_logprobs=args.top_logprobs,
        compact_at=args.compact_at, prices=args.prices, extra_body=request_settings_of(args),
    )


def request_settings_of(args: argparse.Namespace) -> dict[str, Any]:
    """The ``--request-settings`` file's fields ({} without one), checked for ``--api`` here so
    that an error names the file (a batch task of another API is checked as it starts)."""
    if args.request_settings is None:
        return {}
    fields = load_request_settings(args.request_settings)
    dialect_fields(fields, args.api, f"request settings {args.request_settings}")
    return fields
