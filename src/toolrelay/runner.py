"""The library's front door: run one task end to end.

``await run_async(task, RunOptions(...))`` opens the model endpoint (or starts the
offline stand-in), connects the MCP servers, optionally records a transcript, runs the
relay loop and closes everything; ``run(task, **options)`` is the synchronous form, and
``async for event in run_stream(task, options)`` the same run seen as it happens (the
answer text as it is written, each call, each turn; ``relay.run_events``).
The CLI's ``run`` and ``demo`` use the same function.

The run's parts (endpoint, transcript, host, catalog, tracing, model client, relay) are
built by ``assembly.single_run.assemble_run`` from ``RunOptions`` (``assembly.options``,
re-exported here), as a ``Conversation``'s are; a batch task's relay comes from the same
``assembly.parts.Assembly``. What servers ask of the run is answered through a
``client.host.Host``: sampling requests go to the run's own model once ``approve_sampling``
approves them, elicitations to ``elicit``; without those callbacks they are refused and
declined.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncGenerator
from dataclasses import replace
from typing import Unpack

from .assembly.option_names import check_option_names
from .assembly.options import (
    DEFAULT_MODEL,
    OFFLINE_MODEL,
    RunKeywords,
    RunOptions,
    request_settings,
)
from .assembly.parts import check_options, hosted_endpoint, model_sampler
from .assembly.single_run import assemble_run
from .errors import UsageError
from .relay.loop import RunResult
from .relay.run_events import RunEvent, RunListener, stream_run

__all__ = [
    "DEFAULT_MODEL",
    "OFFLINE_MODEL",
    "RunKeywords",
    "RunOptions",
    "check_option_names",
    "check_options",
    "hosted_endpoint",
    "model_sampler",
    "request_settings",
    "run",
    "run_async",
    "run_stream",
]


async def run_async(task: str, options: RunOptions | None = None) -> RunResult:
    """Run ``task`` to its end; raises only for what ends the run itself (ModelError,
    config and connection failures, interruption)."""
    opts = options or RunOptions()
    run_id = opts.run_id or uuid.uuid4().hex[:12]
    async with contextlib.AsyncExitStack() as stack:
        assembled = await assemble_run(opts, stack, run_id=run_id)  # checks before anything starts
        name, first_input = await assembled.first_input(task)
        result = await assembled.relay.run(name, run_id=run_id, first_input=first_input)
        if opts.on_result is not None:
            opts.on_result(result)
        return result
    raise AssertionError("unreachable")  # pragma: no cover  (mypy: the with block returns)


def run_stream(task: str, options: RunOptions | None = None) -> AsyncGenerator[RunEvent, None]:
    """``run_async`` seen as it happens: ``async for event in run_stream(task, options)``
    yields text deltas, calls started and finished, turns, and last ``RunFinished`` (with
    the ``RunResult``). Raises what ``run_async`` raises, after its ``RunFinished`` when
    the run had begun; closing the iterator early (``contextlib.aclosing``) cancels the run."""
    opts = options or RunOptions()

    async def start(listener: RunListener) -> RunResult:
        return await run_async(task, replace(opts, on_event=listener))

    return stream_run(start, also=opts.on_event)


def run(task: str, **options: Unpack[RunKeywords]) -> RunResult:
    """Synchronous ``run_async``: ``toolrelay.run("…", model="offline")``; the keywords are
    ``RunOptions``' fields."""
    _check_no_running_loop()
    check_option_names(options)  # for callers no type checker looked at
    return asyncio.run(run_async(task, replace(RunOptions(), **options)))


def _check_no_running_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return  # the normal case: no loop here, run() starts one
    raise UsageError(
        "toolrelay.run() cannot start inside a running event loop (async code, Jupyter): "
        "use `await toolrelay.run_async(task, toolrelay.RunOptions(...))` there"
    )

