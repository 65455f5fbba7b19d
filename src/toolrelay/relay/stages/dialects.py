"""How each model dialect's answers are read: one reader per API, picked by name.

A model adapter (``model.ResponsesClient``) returns a ``model.ModelReply`` naming its
dialect and records each model event with it; ``reader_for(dialect)`` gives the reader
that turns such an answer into the loop's values. The loop, sampling, ``verify`` and
``view`` all read answers through it, so the live run and the proof read one answer
alike. The loop's own vocabulary (the request body it builds, the output items it
replays, the ``function_call_output`` items it feeds back) is the Responses one; an
adapter for another API translates the request on the way out, and its reader gives the
answer's items back in that vocabulary (``ModelTurn.output``).

A reader (``DialectReader``) has four parts: ``turn(body)`` (an answer → ``ModelTurn``:
its items, calls, text, status, token counts; ``ValueError`` when it is no answer of the
dialect), ``usage(body)`` (an answer's token counts, flat, ``relay.stages.usage``) and
``assemble(events)`` (a recorded stream's events → what they make, as the adapter
assembled them live), and ``request(body)`` (a recorded request body → the loop's
Responses vocabulary, for the checks that read what a request carried). Two dialects:
``responses`` and ``chat`` (``chat_reader``). A transcript's model events name their dialect; one without
(written before they did) is a Responses one (``dialect_of``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from ...events import DEFAULT_DIALECT
from ...protocol import responses
from ...protocol.stream import Assembled, StreamAssembler, StreamEvent, Update, assemble
from .chat_reader import CHAT
from .parse import ModelTurn, read_response
from .usage import token_counts

__all__ = [
    "CHAT", "READERS", "RESPONSES", "DialectReader", "StreamAssembling", "UnknownDialect", "dialect_of",
    "known_reader", "reader_for",
]


class StreamAssembling(Protocol):
    """One stream's assembler (``protocol.stream``, ``protocol.chat_stream``)."""

    @property
    def ended(self) -> bool: ...

    def feed(self, event: StreamEvent) -> list[Update]: ...

    def finish(self) -> Assembled: ...


class DialectReader(Protocol):
    """What toolrelay needs to read one API's answers (see the module docstring)."""

    @property
    def dialect(self) -> str: ...

    @property
    def answer(self) -> str:
        """What one answer of the dialect is called, for messages: ``a Responses object``."""
        ...

    def turn(self, body: dict[str, Any]) -> ModelTurn: ...

    def usage(self, body: Any) -> dict[str, int]: ...

    def assemble(self, events: Sequence[StreamEvent]) -> Assembled: ...

    def assembler(self) -> StreamAssembling:
        """A fresh assembler of the dialect's streams, fed event by event."""
        ...

    def request(
        self, body: dict[str, Any], after: tuple[dict[str, Any], dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """A recorded request body of the dialect in the loop's (Responses) vocabulary;
        ``after``: the run's request body before it and what this gave of it (a reader may
        take what the two share from there, instead of reading it again)."""
        ...


class UnknownDialect(ValueError):
    """No reader for a dialect: its message names it and the dialects there are readers for."""

    def __init__(self, dialect: object) -> None:
        known = ", ".join(sorted(READERS))
        super().__init__(f"the model dialect {dialect!r} has no reader in this toolrelay (it reads: {known})")
        self.dialect = dialect


@dataclass(frozen=True, slots=True)
class ResponsesReader:
    """The Responses API's answers (``relay.stages.parse``), usage and streams (``protocol.stream``)."""

    dialect: str = responses.DIALECT
    answer: str = "a Responses object"

    def turn(self, body: dict[str, Any]) -> ModelTurn:
        return read_response(body)

    def usage(self, body: Any) -> dict[str, int]:
        return token_counts(body.get("usage") if isinstance(body, dict) else None)

    def assemble(self, events: Sequence[StreamEvent]) -> Assembled:
        return assemble(events)

    def assembler(self) -> StreamAssembling:
        return StreamAssembler()

    def request(
        self, body: dict[str, Any], after: tuple[dict[str, Any], dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        return body


RESPONSES: Final = ResponsesReader()
READERS: Final[Mapping[str, DialectReader]] = {RESPONSES.dialect: RESPONSES, CHAT.dialect: CHAT}
"""dialect → its reader. A new dialect is a reader here and an adapter in ``model/``."""


def reader_for(dialect: object) -> DialectReader:
    """The reader of ``dialect``, or ``UnknownDialect``."""
    reader = known_reader(dialect)
    if reader is None:
        raise UnknownDialect(dialect)
    return reader


def known_reader(dialect: object) -> DialectReader | None:
    """The reader of ``dialect``; None when there is none."""
    return READERS.get(dialect) if isinstance(dialect, str) else None


def dialect_of(record: Mapping[str, Any] | None) -> object:
    """The dialect a model event's record names; a record without one is a Responses one."""
    if record is None:
        return DEFAULT_DIALECT
    return record.get("dialect", DEFAULT_DIALECT)
