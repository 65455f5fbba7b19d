"""``toolrelay batch TASKS.jsonl --out DIR``: one run per task, many at once, resumable.

Each line of TASKS.jsonl is ``{"id": "t1", "task": "…"}`` with optional overrides
(``batches/tasks.py``). Every task runs as ``toolrelay run`` would, with these options;
its transcript goes to ``DIR/transcripts/<id>.jsonl`` and its result line to
``DIR/results.jsonl`` as it finishes. Progress goes to stderr (a bar on a terminal, else a
line per task); the summary to stdout at the end. Running the same command again resumes:
finished tasks are skipped. Exit 0 when every task completed; 1 when some did not (or a
line of the tasks file was skipped); 2 usage; 3 when the servers cannot start; 130 on
Ctrl-C (every finished task is recorded: run it again to resume).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from dataclasses import replace
from pathlib import Path

from ..assembly.options import OFFLINE_MODEL
from ..batches import ENGINES, BatchOptions, Summary, TaskFile, TaskSpec, batch_async, read_results
from ..batches.results import RESULTS_FILE
from ..client.host import accept_defaults
from ..errors import UsageError
from ..relay.stages.consent import approve_all
from .batch_progress import BatchProgress
from .common import positive_count, positive_seconds
from .consent import sampling_approver
from .otel_options import batch_export
from .run_options import add_run_options, shaping_options
from .sign_in import apply_auth_option

__all__ = ["configure", "run"]

EXAMPLES = """examples:
  toolrelay batch tasks.jsonl --out runs/ --model offline
  toolrelay batch tasks.jsonl --out runs/ --config mcp.json --model gpt-4.1 -j 8 --yes
  toolrelay batch tasks.jsonl --out runs/ --model offline --engine ray --actors 2

tasks file: one JSON object a line, {"id": "t1", "task": "..."}, optionally with model,
instructions, max_turns, max_tool_calls, timeout, tool_choice or script (a path relative
to the tasks file) for that task. A batch never prompts: tools that are not read-only
run only with --yes. Run the same command again to resume a batch that was stopped."""


def configure(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("tasks", help="the tasks file (JSON lines)")
    add("--out", required=True, metavar="DIR", help="the batch folder: results.jsonl and transcripts/")
    add("-j", "--concurrency", type=positive_count, metavar="N",
        help="tasks in flight at once (default 32 with --model offline, else 8)")
    start = parser.add_mutually_exclusive_group()
    start.add_argument("--resume", dest="start", action="store_const", const="resume", default="auto",
                       help="resume the batch in DIR (what running the same command again does)")
    start.add_argument("--restart", dest="start", action="store_const", const="restart",
                       help="delete the batch in DIR and start over")
    add("--engine", choices=ENGINES, default="local", help="local (default) or ray")
    add("--ray-address", metavar="ADDRESS", help="the Ray cluster (default RAY_ADDRESS, else a local Ray)")
    add("--ray-join-timeout", type=positive_seconds, default=30.0, metavar="SECONDS",
        help="Ray: seconds to join the cluster at --ray-address before giving up (default 30)")
    add("--actors", type=positive_count, metavar="N", help="Ray workers (default one per node)")
    add("--collect", action="store_true",
        help="Ray: send each transcript back to this machine (else workers write into DIR, "
             "which must then be a shared path)")
    add_run_options(parser, "batch")
    add("--elicit", choices=("defaults", "decline"), default="decline",
        help="servers' questions: accept a form's defaults, or decline (default; a batch never prompts)")
    parser.epilog = EXAMPLES + "\n\n" + (parser.epilog or "")


def options_from_args(args: argparse.Namespace) -> BatchOptions:
    if args.script and args.model != OFFLINE_MODEL:
        raise UsageError("--script drives the offline model; add --model offline")
    if (args.ray_address or args.actors or args.collect) and args.engine != "ray":
        raise UsageError("--ray-address, --actors and --collect go with --engine ray")
    run = replace(
        shaping_options(args),
        approve=approve_all if args.yes else None,
        approve_sampling=sampling_approver(True) if args.yes else None,
        elicit=accept_defaults if args.elicit == "defaults" else None,
    )
    return BatchOptions(out=args.out, run=run, concurrency=args.concurrency, start=args.start,
                        ray_address=args.ray_address, actors=args.actors, collect=args.collect,
                        ray_join_timeout=args.ray_join_timeout, otel=batch_export(args))


def run(args: argparse.Namespace) -> int:
    apply_auth_option(args)
    options = options_from_args(args)
    tasks = TaskFile(args.tasks)
    for problem in tasks.problems:
        sys.stderr.write(f"toolrelay batch: {problem}\n")
    out = Path(args.out)
    already = sum(1 for _ in read_results(out / RESULTS_FILE)) if args.start != "restart" else 0
    progress = BatchProgress(max(tasks.count - already, 0), bar=False if args.quiet else None)
    first_start: list[float] = []  # when the first task started: the engine's start-up is before it

    def started_task(spec: TaskSpec) -> None:
        if not first_start:
            first_start.append(time.monotonic())
        if not args.quiet:
            progress.started(spec)

    def folder_ready() -> None:  # said once the folder is this batch's (no other batch holds it)
        if not args.quiet and already:
            sys.stderr.write(f"toolrelay batch: resuming {out}: {already} of {tasks.count} tasks "
                             "already finished\n")

    options.on_started, options.on_ready = started_task, folder_ready
    if args.quiet and args.engine == "ray":
        from ..batches.ray_engine import hide_ray_notes  # imported with the engine it is about

        hide_ray_notes()
    started = time.monotonic()
    # Every object alive now (modules, the parser, the options) lives as long as the process:
    # frozen, the collector's full passes, which a batch's many short-lived objects trigger
    # again and again, no longer walk them (measured: ~5% of a one-call task's CPU).
    gc.freeze()
    try:
        asyncio.run(_drive(tasks, options, args.engine, None if args.quiet else progress))
    except KeyboardInterrupt:
        if not args.quiet:
            progress.close()
        sys.stderr.write(f"toolrelay batch: interrupted; every finished task is in {out / RESULTS_FILE}: "
                         "run the same command again to resume\n")
        return 130
    if not args.quiet:
        progress.close()
    startup = first_start[0] - started if first_start and args.engine == "ray" else None
    return _report(out, tasks, time.monotonic() - started, startup)


async def _drive(tasks: TaskFile, options: BatchOptions, engine: str, progress: BatchProgress | None) -> None:
    async for result in batch_async(tasks, options, engine="ray" if engine == "ray" else "local"):
        if progress is not None:
            progress.finished(result)


def _report(out: Path, tasks: TaskFile, wall: float, startup: float | None = None) -> int:
    """The summary of the whole batch (earlier runs' tasks too); the exit code."""
    summary = Summary.of(read_results(out / RESULTS_FILE))
    lines = summary.lines()
    if tasks.problems:
        lines.append(f"skipped: {len(tasks.problems)} line(s) of {tasks.path} that are not tasks (see above)")
    lines.append(f"wall time: {wall:.2f} s; results in {out / RESULTS_FILE}")
    if startup is not None:  # Ray's own start (cluster, actors, their servers) is a fixed cost
        lines.append(f"engine start-up: {startup:.2f} s before the first task started")
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    every_task_done = summary.completed == tasks.count == summary.tasks
    return 0 if every_task_done and not tasks.problems else 1

