"""One run's relay, assembled the one way ``runner.run_async`` and ``Conversation`` both take.

``await assemble_run(options, stack, run_id=...)`` builds, in this order and each open
until ``stack`` closes: the ``Assembly`` (its checks first: a usage error starts nothing),
the model endpoint, the transcript (its writer told the secrets before the first event),
the ``Host`` with a sampler on the run's endpoint, the ``Catalog``, the run's spans (before
the servers start, so their start-up is traced), the servers, and the ``Relay``. A run and
a conversation differ only in how the transcript is opened (a conversation loaded in a
later process appends to its file: ``transcript=``) and in what they do with the relay
afterwards (one ``relay.run``, or one per user turn). Only the order lives here: a feature
every run, conversation and batch task gets (a hook, a filter, a client) belongs in
``Assembly``, whose ``relay`` a batch task's relay is built by too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..events import EventStream, Subscriber
from ..relay.catalog import Catalog
from ..relay.loop import Relay
from ..relay.offered import starting_input
from ..transcript.writer import TranscriptWriter
from .options import RunOptions
from .parts import LIBRARY_WORDING, Assembly, Wording

__all__ = ["AssembledRun", "TranscriptOpener", "assemble_run", "new_transcript"]

TranscriptOpener = Callable[[Path, str, Sequence[str]], tuple[TranscriptWriter, Subscriber]]
"""(path, run id, secrets) → the transcript's writer (closed with the run) and the
subscriber that feeds it the run's events."""


def new_transcript(path: Path, run_id: str, secrets: Sequence[str]) -> tuple[TranscriptWriter, Subscriber]:
    """A fresh transcript at ``path``: the writer is its own subscriber."""
    writer = TranscriptWriter(path, run_id, secrets)
    return writer, writer


@dataclass(frozen=True, kw_only=True)
class AssembledRun:
    """What ``assemble_run`` built: open until its stack closes."""

    options: RunOptions
    """The run's options as assembled: with the config file's policy, if it names one."""
    catalog: Catalog
    """The open servers' catalog."""
    relay: Relay
    """The loop on ``catalog`` and the run's model client, with every run-level hook."""

    async def first_input(self, task: str) -> tuple[str, list[dict[str, Any]] | None]:
        """The run's name and first input items for ``task`` (a server prompt's messages and
        the resources, when the options name them; ``relay.offered.starting_input``)."""
        opts = self.options
        connections = {name: self.catalog.connections[name] for name in self.catalog.available}
        return await starting_input(
            task, connections, prompt=opts.prompt, arguments=dict(opts.prompt_arguments),
            resources=opts.resources, media_budget=opts.limits.media_budget)


async def assemble_run(
    options: RunOptions, stack: contextlib.AsyncExitStack, *, run_id: str,
    transcript: TranscriptOpener = new_transcript, wording: Wording = LIBRARY_WORDING,
) -> AssembledRun:
    """The relay of one run (or one conversation) of ``options``, its servers started, its
    transcript (when ``options.transcript`` names one) opened by ``transcript``; all of it
    closes with ``stack``."""
    events = options.events or EventStream()
    parts = Assembly(options, stack, events=events, wording=wording)  # checks before anything starts
    opts = parts.options  # with the config's policy, if it names one
    endpoint = parts.endpoint()
    if opts.transcript is not None:
        writer, subscriber = transcript(Path(opts.transcript), run_id, parts.secrets(endpoint))
        stack.callback(writer.close)
        stack.callback(events.subscribe(subscriber))
    host = parts.host(await parts.sampler(endpoint))
    catalog = parts.catalog(parts.servers, host)
    tracing = parts.tracing(catalog, parts.secrets(endpoint))  # before the servers start
    await stack.enter_async_context(catalog)
    relay = parts.relay(catalog, await parts.client(), opts, listener=opts.on_event, tracing=tracing)
    return AssembledRun(options=opts, catalog=catalog, relay=relay)
