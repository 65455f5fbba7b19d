"""``toolrelay.SyncConversation``: ``Conversation`` for code without an event loop.

One ``asyncio.Runner`` (one event loop) lives as long as the conversation, so the servers
it started stay open between ``send`` calls, as they do in the async form.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import TracebackType
from typing import Any, Unpack

from ..assembly.options import RunKeywords, RunOptions
from ..errors import UsageError
from ..relay.stages.run_result import RunResult
from .session import Conversation

__all__ = ["SyncConversation"]


class SyncConversation:
    """``with toolrelay.SyncConversation(model="offline") as conv: conv.send("…")``."""

    def __init__(self, options: RunOptions | None = None, **keywords: Unpack[RunKeywords]) -> None:
        """The options as for ``toolrelay.Conversation``."""
        self.conversation = Conversation(options, **keywords)
        """The async conversation it drives (its counts, ``items``, ``results``)."""
        self._runner: asyncio.Runner | None = None

    @classmethod
    def load(cls, path: str | Path, options: RunOptions | None = None,
             **keywords: Unpack[RunKeywords]) -> SyncConversation:
        """``Conversation.load``, synchronous."""
        loaded = cls.__new__(cls)
        loaded.conversation = Conversation.load(path, options, **keywords)
        loaded._runner = None
        return loaded

    def __enter__(self) -> SyncConversation:
        self._run(self.conversation.open())
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def send(self, text: str) -> RunResult:
        """Send the next user message; the user turn's result (``Conversation.send``)."""
        result: RunResult = self._run(self.conversation.send(text))
        return result

    def save(self, path: str | Path) -> Path:
        """``Conversation.save``."""
        return self.conversation.save(path)

    def close(self) -> None:
        """Stop the servers and the endpoint, close the transcript and the event loop."""
        if self._runner is None:
            return
        try:
            self._runner.run(self.conversation.close())
        finally:
            self._runner.close()
            self._runner = None

    def _run(self, work: Any) -> Any:
        if self._runner is None:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                self._runner = asyncio.Runner()
            else:
                work.close()
                raise UsageError("toolrelay.SyncConversation cannot run inside a running event loop "
                                 "(async code, Jupyter): use `async with toolrelay.Conversation(...)` there")
        return self._runner.run(work)
