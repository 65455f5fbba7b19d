"""``toolrelay call ALIAS 'JSON'``: one tool call, its result, and with ``--wire`` the exact
JSON-RPC lines (with their ids). What the server asks meanwhile is answered as the options
say: sampling with ``--model`` (approved by ``--yes`` or on the terminal), elicitation by
``--elicit``. With ``--transcript PATH`` the call is recorded as a run's calls are (the
same writer), between ``direct_call`` and ``direct_call_end`` (``relay/stages/direct_call.py``),
for ``toolrelay verify``: a refusal by the policy or a pin too.

Exit codes: 0 success; 1 a tool error, or arguments the tool's schema rejects; 2 usage
(unknown alias, arguments that are not JSON); 3 a protocol or transport error, or the
alias's server is unavailable.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import uuid
from pathlib import Path
from typing import Any

from ..errors import ToolrelayError, TransportError, UsageError, unavailable_text
from ..events import Event, EventStream
from ..protocol import json_depth
from ..relay.catalog import Catalog
from ..relay.stages.context import CallContext
from ..relay.stages.direct_call import NOT_OFFERED, DirectCall, DirectCallEnd
from ..relay.stages.policy_rules import PolicyDecision
from ..relay.stages.result import CallOutcome
from ..transcript.writer import TranscriptWriter
from .common import add_root_option, add_server_options, catalog_from_args, positive_seconds, print_json
from .host_options import (
    add_elicit_options,
    add_pins_option,
    add_policy_option,
    add_sampling_cap_option,
    add_sampling_options,
    check_sampling_args,
    host_from_args,
    policy_from_args,
)
from .otel_options import add_otel_options, call_tracing
from .progress import ProgressPrinter, WireLog, WirePrinter, failure_text
from .server_activity import add_call_max_time_option, add_log_level_option

__all__ = ["configure", "run"]

EXAMPLES = """examples:
  toolrelay call fs__read_text_file '{"path": "notes.txt", "head": 5}'
  toolrelay call fs__list_directory '{"path": "."}' --wire
  toolrelay call fs__read_text_file '{"path": "a.txt"}' --policy policy.json --transcript call.jsonl
  toolrelay call ev__trigger-sampling-request '{"prompt": "hi"}' --config mcp.json --model offline --yes
  toolrelay call ev__trigger-elicitation-request --config mcp.json --elicit defaults"""

_EXIT = {
    "ok": 0, "tool_error": 1, "invalid_output": 1, "invalid_arguments": 1, "unknown_tool": 2,
    "protocol_error": 3, "transport_error": 3, "not_approved": 1, "refused_by_hook": 1, "cancelled": 130,
}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("alias", help="the tool's alias, as `toolrelay tools` lists it")
    parser.add_argument("arguments", nargs="?", default="{}", help="arguments as JSON text (default {})")
    add_server_options(parser, strict=False)
    add_root_option(parser)
    parser.add_argument("--wire", action="store_true", help="print the JSON-RPC request and response lines")
    parser.add_argument("--timeout", type=positive_seconds, metavar="S",
                        help="seconds to wait without an answer or progress (default: the server's, 60)")
    parser.add_argument("--json", action="store_true", help="print the whole outcome as JSON")
    parser.add_argument("--transcript", metavar="PATH",
                        help="record the call (its messages, policy decisions and outcome) as JSONL "
                             "for `toolrelay verify`")
    add_call_max_time_option(parser)
    add_log_level_option(parser)
    add_sampling_cap_option(parser)
    add_pins_option(parser)
    add_policy_option(parser)
    add_sampling_options(parser)
    add_elicit_options(parser)
    add_otel_options(parser)
    parser.epilog = EXAMPLES + "\n\n" + (parser.epilog or "")


def run(args: argparse.Namespace) -> int:
    try:
        json_depth.loads(args.arguments)
    except ValueError as exc:
        raise UsageError(f"arguments must be JSON text, e.g. '{{\"path\": \"notes.txt\"}}': {exc}") from None
    check_sampling_args(args)
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    events = EventStream()
    printer = ProgressPrinter(verbose=False)
    async with contextlib.AsyncExitStack() as stack:
        host = await host_from_args(args, stack)
        policy = policy_from_args(args)  # the same object filters and hooks (it reads what the filter saw)
        filters = (policy,) if policy else ()
        decisions: list[dict[str, Any]] = []
        if policy is not None:  # what it decides goes into --json's "policy"
            policy.record_to(events)
            events.subscribe(lambda event: _keep_decision(event, decisions))
        catalog = catalog_from_args(args, events, printer=printer, host=host, filters=filters)
        call_id = _record(args, events, stack, catalog)
        wire = WireLog(catalog.secrets)
        if args.wire:  # with --json the wire goes inside the JSON: stdout stays one document
            events.subscribe(wire if args.json else WirePrinter(sys.stdout, catalog.secrets))
        # this call's own server failing is this command's error, said once (not also a notice)
        printer.silenced.update(catalog.servers_named_by(args.alias))
        hooks = call_tracing(args, events, stack, catalog)
        async with catalog:
            try:
                _check_server_available(catalog, args.alias)
            except ToolrelayError as exc:
                status = NOT_OFFERED if isinstance(exc, UsageError) else "unavailable"
                events.emit(DirectCallEnd(call_id=call_id or "", status=status, reason=str(exc)))
                raise
            context = CallContext(timeout=args.timeout, hooks=(*hooks, *((policy,) if policy else ())))
            outcome = await catalog.call(args.alias, args.arguments, context=context, call_id=call_id)
            events.emit(DirectCallEnd(call_id=call_id or "", status=outcome.status,
                                      reason=outcome.message or ""))
    if args.json:
        print_json(_outcome_json(outcome) | ({"wire": wire.messages} if args.wire else {})
                   | ({"policy": [_decision(d) for d in decisions]} if policy is not None else {}))
    else:
        _print_outcome(outcome)
    return _EXIT[outcome.status]


def _record(args: argparse.Namespace, events: EventStream, stack: contextlib.AsyncExitStack,
            catalog: Catalog) -> str | None:
    """With ``--transcript``: the transcript written from here on (the servers' secrets kept
    out), its first record the call asked for; the call_id the call runs under (None without)."""
    if args.transcript is None:
        return None
    run_id = uuid.uuid4().hex[:12]
    writer = TranscriptWriter(Path(args.transcript), run_id, catalog.secrets)
    stack.callback(writer.close)
    stack.callback(events.subscribe(writer))
    call_id = f"call_{run_id}"
    events.emit(DirectCall(call_id=call_id, alias=args.alias, arguments_text=args.arguments))
    return call_id


def _keep_decision(event: Event, decisions: list[dict[str, Any]]) -> None:
    if isinstance(event, PolicyDecision) and event.stage == "call":
        decisions.append(event.to_record())


def _decision(record: dict[str, Any]) -> dict[str, Any]:
    """A policy decision as --json shows it (its transcript fields, without seq and time)."""
    return {key: value for key, value in record.items() if key not in ("seq", "time", "kind")}


def _check_server_available(catalog: Catalog, alias: str) -> None:
    """An alias of a server that never listed its tools is that server's failure, and one
    of a tool withheld (e.g. it must run as a task, and cannot) says why: not an unknown tool."""
    if catalog.route(alias) is not None:
        return
    withheld = catalog.withheld_reason(alias)
    if withheld is not None:
        raise UsageError(f"{alias}: {withheld}")
    for server in catalog.servers_named_by(alias):
        error = catalog.unavailable.get(server)
        if error is not None:
            raise TransportError(unavailable_text(server, error))


def _outcome_json(outcome: CallOutcome) -> dict[str, Any]:
    return outcome.to_record() | {
        "arguments": outcome.arguments, "request": outcome.request,
        "response": outcome.response, "result": outcome.result,
    }


def _print_outcome(outcome: CallOutcome) -> None:
    if outcome.status not in ("ok", "tool_error", "invalid_output"):
        sys.stderr.write(f"toolrelay call: {failure_text(outcome.to_record())}\n")
        return
    result = outcome.result or {}
    if outcome.status == "tool_error":
        note = f"the tool reported an error (isError: true, mcp id {outcome.mcp_id})"
        sys.stderr.write(f"toolrelay call: {note}\n")
    if outcome.status == "invalid_output":  # shown, so the user sees what broke the schema
        note = f"the output is invalid (mcp id {outcome.mcp_id}): {outcome.message}"
        sys.stderr.write(f"toolrelay call: {note}\n")
    blocks = result.get("content") or []
    for block in blocks:
        sys.stdout.write(_block_text(block))
    if "structuredContent" in result and not _only_wraps_text(result["structuredContent"], blocks):
        sys.stdout.write("\n--- structuredContent\n")
        sys.stdout.write(json.dumps(result["structuredContent"], indent=2, ensure_ascii=False) + "\n")


def _only_wraps_text(structured: Any, blocks: list[dict[str, Any]]) -> bool:
    """Whether ``structuredContent`` is just the text in one field (the file server's
    ``{"content": text}``; the SDK's ``{"result": value}`` of a tool returning a plain
    value, its text that value's JSON): printed, it would say the same twice."""
    texts = [str(block.get("text", "")) for block in blocks if block.get("type") == "text"]
    if not isinstance(structured, dict) or len(structured) != 1 or not texts:
        return False
    [value], text = structured.values(), "".join(texts).rstrip("\n")
    if isinstance(value, str):
        return value.rstrip("\n") == text
    try:
        return bool(json_depth.loads(text) == value)
    except ValueError:
        return False


def _block_text(block: dict[str, Any]) -> str:
    if block.get("type") == "text":
        text = str(block.get("text", ""))
        return text if text.endswith("\n") or not text else text + "\n"
    shown = {k: (f"<{len(str(v))} base64 chars>" if k in ("data", "blob") else v) for k, v in block.items()}
    return f"[{block.get('type')} block] {json.dumps(shown, ensure_ascii=False)}\n"
