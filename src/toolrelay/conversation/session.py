"""``toolrelay.Conversation``: a run that goes on, one user message at a time.

    async with toolrelay.Conversation(model="offline", transcript="chat.jsonl") as conv:
        first = await conv.send("Read notes.txt")
        second = await conv.send("And what does its last line say?")
        conv.save("chat.json")

Each ``send`` is one user turn of the same run: its request carries the whole context so
far (replayed, or named by ``previous_response_id`` with ``chain=True``), the servers stay
open between turns (one assembly, one catalog for the conversation's life), and one
transcript records every turn (a ``user_turn`` record starts each after the first), so
``toolrelay verify`` judges the conversation as one run. ``save`` writes what a later
process needs to go on (``saved.py``); ``Conversation.load`` continues it there, appending
to the same transcript. ``send`` returns the user turn's ``RunResult`` (its calls, its
turns, its token usage); ``turns``, ``usage`` and ``results`` count the whole
conversation.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncGenerator
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, Unpack

from ..assembly.option_names import check_option_names
from ..assembly.options import RunKeywords, RunOptions
from ..assembly.single_run import AssembledRun, assemble_run
from ..errors import UsageError
from ..relay.catalog import Catalog
from ..relay.continuation import Continuation
from ..relay.loop import Relay
from ..relay.run_events import RunEvent, RunListener, stream_run
from ..relay.stages.request import Conversation as Context
from ..relay.stages.request import user_message
from ..relay.stages.run_result import RunResult
from ..relay.stages.usage import add_counts
from .record import TranscriptTail, conversation_transcript, recorded_tail
from .saved import SavedConversation, read_saved, write_saved

__all__ = ["Conversation"]


class Conversation:
    """A conversation with the model and the options' servers: ``await conv.send(text)``
    per user message, each continuing with the full context (``toolrelay.SyncConversation``
    is the synchronous form)."""

    def __init__(self, options: RunOptions | None = None, **keywords: Unpack[RunKeywords]) -> None:
        """``options`` (or ``RunOptions``' fields as keywords, over them) as for ``toolrelay.run``;
        ``transcript`` records the whole conversation."""
        check_option_names(keywords, caller="Conversation()")
        self.options = replace(options or RunOptions(), **keywords)
        self.run_id = self.options.run_id or uuid.uuid4().hex[:12]
        """The conversation's run id: every turn's records carry it."""
        self.turns = 0
        """Model turns so far (numbered through the conversation)."""
        self.user_turns = 0
        """User messages sent so far."""
        self.usage: dict[str, int] = {}
        """Token usage so far, summed over every response (``RunResult.usage``'s counts)."""
        self.results: list[RunResult] = []
        """Each user turn's result, in order (this process's)."""
        self._context = Context()
        self._tail: TranscriptTail | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._assembled: AssembledRun | None = None
        self._closed = False
        self._sending = False

    # -- life -----------------------------------------------------------------------------

    async def __aenter__(self) -> Conversation:
        await self.open()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self.close()

    async def open(self) -> None:
        """Start the model endpoint and the servers, and open the transcript (``send`` does it
        on first use); they stay open until ``close``."""
        if self._closed:
            raise UsageError("this conversation was closed: save it before closing, then "
                             "Conversation.load(path) to go on")
        if self._stack is not None:
            return
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            self._assembled = await assemble_run(self.options, stack, run_id=self.run_id,
                                                 transcript=conversation_transcript(self._tail))
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack

    async def close(self) -> None:
        """Stop the servers and the model endpoint and close the transcript (``save`` first to
        go on later)."""
        self._closed = True
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    @property
    def catalog(self) -> Catalog:
        """The open servers' catalog (``open`` first): the tools offered, their servers."""
        if self._assembled is None:
            raise UsageError("the conversation is not open: `await conv.open()` or `async with` it first")
        return self._assembled.catalog

    @property
    def items(self) -> list[dict[str, Any]]:
        """Every input and output item of the conversation so far, in order (a copy)."""
        return list(self._context.history)

    # -- turns ----------------------------------------------------------------------------

    async def send(self, text: str) -> RunResult:
        """Send the next user message; the user turn's result once the model answered (or
        the turn stopped: ``status`` says how). Raises what ``toolrelay.run_async`` raises."""
        return await self._send(text, self.options.on_event)

    def stream(self, text: str) -> AsyncGenerator[RunEvent, None]:
        """``send`` seen as it happens (``toolrelay.run_stream``'s events, ``RunFinished`` last)."""
        return stream_run(lambda listener: self._send(text, listener), also=self.options.on_event)

    async def _send(self, text: str, listener: RunListener | None) -> RunResult:
        if self._sending:
            raise UsageError("a conversation takes one message at a time: await the previous send "
                             "before sending the next (each one continues from the answer before it)")
        self._sending = True
        try:
            return await self._turn(text, listener)
        finally:
            self._sending = False

    async def _turn(self, text: str, listener: RunListener | None) -> RunResult:
        await self.open()
        assert self._assembled is not None
        relay = self._assembled.relay
        relay.listener = listener
        if self.user_turns == 0:
            name, first_input = await self._assembled.first_input(text)
            run = relay.run(name, run_id=self.run_id, first_input=first_input)
        else:
            point = Continuation(context=self._context, turns=self.turns, user_turn=self.user_turns + 1,
                                 usage=self.usage)
            run = relay.run(text, run_id=self.run_id, first_input=[user_message(text)], continuing=point)
        try:
            result = await run
        finally:
            self._took_turn(relay)
        if self.options.on_result is not None:
            self.options.on_result(result)
        return result

    def _took_turn(self, relay: Relay) -> None:
        """Count the user turn the relay just ran (however it ended) into the conversation."""
        result = relay.result
        if relay.context is not None:
            self._context = relay.context
        self.user_turns += 1
        if result is not None:
            self.turns += result.turns
            self.usage = add_counts(self.usage, result.usage)
            self.results.append(result)

    # -- another process ------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write what a later process needs to go on (``Conversation.load``); the path."""
        target = Path(path)
        transcript = Path(self.options.transcript) if self.options.transcript is not None else None
        write_saved(target, SavedConversation(
            run_id=self.run_id, context_mode="chain" if self.options.chain else "replay",
            turns=self.turns, user_turns=self.user_turns, usage=dict(self.usage),
            context=self._context, transcript=transcript))
        return target

    @classmethod
    def load(cls, path: str | Path, options: RunOptions | None = None,
             **keywords: Unpack[RunKeywords]) -> Conversation:
        """The conversation saved at ``path``, to go on with ``options`` (its servers, its
        model); its transcript (the saved one unless ``transcript`` says another) is appended."""
        saved = read_saved(Path(path))
        conversation = cls(options, **keywords)
        opts = conversation.options
        mode = "chain" if opts.chain else "replay"
        if mode != saved.context_mode:
            raise UsageError(f"{path} was saved in {saved.context_mode} mode and these options are "
                             f"{mode} mode: load it with chain={saved.context_mode == 'chain'}")
        transcript = Path(opts.transcript) if opts.transcript is not None else saved.transcript
        if transcript is not None and transcript.exists():
            conversation._tail = _checked_tail(transcript, saved, Path(path))
        conversation.options = replace(opts, transcript=transcript, run_id=saved.run_id)
        conversation.run_id = saved.run_id
        conversation.turns, conversation.user_turns = saved.turns, saved.user_turns
        conversation.usage, conversation._context = dict(saved.usage), saved.context
        return conversation


def _checked_tail(transcript: Path, saved: SavedConversation, path: Path) -> TranscriptTail:
    """Where the transcript goes on, once it is the saved conversation's, as saved."""
    tail = recorded_tail(transcript)
    if tail.run_id != saved.run_id:
        raise UsageError(f"{transcript} records run {tail.run_id}, but {path} saved run {saved.run_id}: "
                         "pass the conversation's own transcript")
    recorded = tail.end.turns if tail.end is not None else None
    if recorded != saved.turns:
        raise UsageError(f"{transcript} went on after {path} was saved (it records {recorded} model "
                         f"turn(s) ended, the save {saved.turns}): save the conversation after its last turn")
    return tail


