"""``toolrelay run "TASK"``: the model chooses tools, toolrelay runs them, until it answers.

Progress goes to stderr (each model turn, each call with alias, server, mcp id, duration
and ok/error); the answer goes to stdout as the model writes it (``answer.py``; with
``--json``, one document at the end instead). Answers are streamed unless
``--no-stream``; ``--early`` says which calls start while the response still streams.
Exit 0 only when the run completed (also when calls failed and the model answered
anyway; 1 then with --fail-on-call-error); 1 when it ended any other way (max turns, a
refusal, an incomplete response...); 3 when the model endpoint is unreachable, answers an
HTTP error, or its stream breaks off after calls started; 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from dataclasses import replace

from ..errors import UsageError
from ..events import EventStream
from ..relay.loop import RunResult
from ..relay.policy import Policy
from ..relay.stages.consent import Approver, ConsentMemory, approve_all, refusing
from ..relay.stages.endings import ending_line
from ..runner import OFFLINE_MODEL, RunOptions, run_async
from .answer import AnswerPrinter
from .consent import NO_TERMINAL_HINT, remembering, sampling_approver, terminal_approver
from .elicitation import elicitor_for
from .host_options import add_elicit_options
from .otel_options import tracer_provider
from .progress import AtFirstStart, ProgressPrinter, failure_text
from .run_options import add_run_options, shaping_options
from .server_activity import ServerActivityPrinter
from .sign_in import apply_auth_option

__all__ = ["configure", "run"]

EXAMPLES = """examples:
  toolrelay run "Read the first 20 lines of notes.txt" --model offline
  OPENAI_API_KEY=sk-... toolrelay run "Summarise notes.txt" --model gpt-4.1
  toolrelay run "What is in todo.md?" --base-url http://127.0.0.1:11434/v1 --model qwen3
  toolrelay run "..." --config .vscode/mcp.json --transcript run.jsonl --json

model endpoint: OPENAI_API_KEY, OPENAI_BASE_URL (or --base-url); Azure OpenAI with
AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY and OPENAI_API_VERSION; --model offline: a stand-in."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", nargs="?", default="",
                        help="what the model should do (may be left out with --prompt)")
    add_run_options(parser, "run")
    add = parser.add_argument
    add("--prompt", metavar="SERVER/NAME",
        help="start from a server's prompt (see `toolrelay prompts`); the task, if given, follows it")
    add("--arg", dest="prompt_arguments", action="append", default=[], type=prompt_argument, metavar="K=V",
        help="an argument of --prompt (repeat for more)")
    add("--resource", dest="resources", action="append", default=[], metavar="URI",
        help="attach a server's resource to the task (see `toolrelay resources`; repeat for more)")
    add("--no-server-instructions", dest="server_instructions", action="store_false",
        help="leave out the instructions servers send at start-up (added after yours by default)")
    add_elicit_options(parser)
    add("--transcript", metavar="FILE", help="record every event as JSONL")
    add("--fail-on-call-error", action="store_true",
        help="exit 1 when any tool call failed, even if the model answered")
    add("--json", action="store_true", help="print the whole result as JSON on stdout")
    parser.epilog = EXAMPLES + "\n\n" + (parser.epilog or "")


def prompt_argument(text: str) -> tuple[str, str]:
    """An argparse type: ``K=V`` (the value may hold ``=``)."""
    name, equals, value = text.partition("=")
    if not equals or not name:
        raise argparse.ArgumentTypeError(f"takes NAME=VALUE, not {text!r}")
    return name, value


def approver(yes: bool, lock: asyncio.Lock | None = None, memory: ConsentMemory | None = None) -> Approver:
    """--yes approves all; a terminal asks; otherwise calls needing consent are refused."""
    if yes:
        return approve_all
    if _at_terminal():
        return terminal_approver(lock=lock, memory=memory)
    return refusing(NO_TERMINAL_HINT)


def _at_terminal() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def options_from_args(args: argparse.Namespace, events: EventStream) -> RunOptions:
    prompts = asyncio.Lock()  # one question on the terminal at a time, whoever asks
    shaped = shaping_options(args)
    given = next((part for part in shaped.filters if isinstance(part, Policy)), None)
    policy = given if args.yes else remembering(given, asking=_at_terminal())  # a, s and saved answers
    if policy is not None and given is None:
        shaped = replace(shaped, filters=(*shaped.filters, policy), hooks=(*shaped.hooks, policy))
    return replace(
        shaped,
        approve=approver(args.yes, prompts, policy.memory if policy else None), transcript=args.transcript,
        events=events,
        approve_sampling=sampling_approver(args.yes, prompts),
        elicit=elicitor_for(args.elicit, open_urls=args.open, lock=prompts),
        server_instructions=args.server_instructions,
        prompt=args.prompt, prompt_arguments=dict(args.prompt_arguments), resources=list(args.resources),
    )


def run(args: argparse.Namespace) -> int:
    if not args.task and args.prompt is None:
        raise UsageError("run takes a task (what the model should do), or --prompt SERVER/NAME")
    if args.prompt_arguments and args.prompt is None:
        raise UsageError("--arg gives an argument of --prompt: add --prompt SERVER/NAME")
    if args.script and args.model != OFFLINE_MODEL:
        raise UsageError("--script drives the offline model; add --model offline")
    events = EventStream()
    if not args.quiet:
        if args.config is None:
            notice = f"· no --config: the built-in read-only file server exposes {os.getcwd()} as server fs\n"
            events.subscribe(AtFirstStart(sys.stderr, notice))
        events.subscribe(ServerActivityPrinter())  # first: its bar is cleared before other lines
        events.subscribe(ProgressPrinter())
    options = options_from_args(args, events)
    options.tracer_provider = tracer_provider(args)
    apply_auth_option(args)
    ended: list[RunResult] = []
    answer = None
    if not args.json:
        reasoning = None if args.quiet else sys.stderr
        answer = AnswerPrinter(sys.stdout, reasoning, dim=sys.stderr.isatty())
        options.on_event = answer

    def print_result(result: RunResult) -> None:  # before the servers stop: that may be cut short
        ended.append(result)
        printed = answer is not None and result.turns in answer.turns
        _print_result(result, as_json=args.json, progress_shown=not args.quiet, answer_printed=printed)

    options.on_result = print_result
    try:
        result = asyncio.run(run_async(args.task, options))
    except KeyboardInterrupt:
        sys.stderr.write(_interrupted(ended[0] if ended else None))
        return 130
    if not result.completed or (args.fail_on_call_error and result.failed_calls):
        return 1
    return 0


def _interrupted(ended: RunResult | None) -> str:
    """What Ctrl-C cut short: the run itself, or (its answer already out) the servers' stop."""
    if ended is None:
        return "toolrelay run: aborted (Ctrl-C); in-flight calls were cancelled\n"
    how = "completed" if ended.completed else f"ended {ended.status}"
    return f"toolrelay run: interrupted while the servers were stopping (the run had {how})\n"


def _print_result(result: RunResult, *, as_json: bool, progress_shown: bool, answer_printed: bool) -> None:
    """The end of the run: the JSON document, or the refusal (the answer itself was
    printed as it arrived, unless no text of the last turn was)."""
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
        return
    if result.refusal is not None:
        sys.stdout.write(f"[refusal] {result.refusal}\n")
    elif result.final_text is not None and not answer_printed:
        sys.stdout.write(result.final_text + ("\n" if not result.final_text.endswith("\n") else ""))
    failed = [c for c in result.calls if not c.ok]
    if failed and progress_shown:  # each call line said why: count them, do not repeat them
        sys.stderr.write(f"toolrelay run: {len(failed)} of {len(result.calls)} call(s) failed "
                         "(see the call lines above)\n")
    elif failed:
        sys.stderr.write(f"toolrelay run: {len(failed)} of {len(result.calls)} call(s) failed:\n")
        for call in failed:  # worded as the call lines and `toolrelay call` word them
            first_line = failure_text(call.to_record()).splitlines()[0]
            sys.stderr.write(f"  {call.call_id} {call.alias}: {first_line}\n")
    if not result.completed and not progress_shown:  # else the progress line said it
        ending = ending_line(result.status, result.turns, result.reason)
        sys.stderr.write(f"toolrelay run: the run {ending}\n")
