"""What ``verify`` concludes: one finding per checked link, and the run's verdict.

The seven links are the seed's order for finding a fault (section 8): model response →
parse result → routing target → server checks → actual feedback → correlation ids → next
model input. A finding names its link, says what was checked in words a person can act
on, and carries the ids involved (``call_id`` on the model side, ``mcp_id`` with its
``server`` on the MCP side) and the transcript ``seqs`` of the events it rests on.
A run that simply did not finish is not a broken link: it is ``unfinished``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "ENDPOINT_INCONSISTENCY", "LINKS", "LINK_TITLES", "NEXT_STEP", "Finding", "Grounds", "Verdict",
    "link_rank",
]

LINKS: Final = (
    "model_response",
    "parse",
    "routing",
    "server_check",
    "feedback",
    "correlation",
    "next_input",
)
"""The seed's order (section 8). Link names, not event kinds: the link ``model_response``
and ``ModelResponseEvent.kind`` (likewise ``feedback``) only share a spelling."""

LINK_TITLES: Final = {
    "model_response": "model response",
    "parse": "parse result",
    "routing": "routing target",
    "server_check": "server checks",
    "feedback": "actual feedback",
    "correlation": "correlation ids",
    "next_input": "next model input",
}

NEXT_STEP: Final = {
    "model_response": "read the model_response body: its status, its output items and each "
    "function_call's call_id, name and arguments text",
    "parse": "compare the function_call's arguments text with the call_parsed event: the text must "
    "be a string and parse to the recorded value",
    "routing": "check the declarations' routes (alias → server/tool) and the tools/call params: "
    "the original tool name and the same argument values",
    "server_check": "read the MCP exchange: was the tools/call sent, answered once, and classified "
    "as the server answered it (result, isError, JSON-RPC error)?",
    "feedback": "compare the function_call_output with what render_output gives for the recorded "
    "MCP response: same text, failure markers kept",
    "correlation": "pair the ids: each MCP request id with one response on the same server "
    "connection, each call_id with one function_call_output, and each MCP event with the call_id "
    "whose arguments it carries",
    "next_input": "diff the next request with the previous one: same declarations, the previous "
    "input and output items unchanged and in order, then the outputs",
}
"""What to check next when a link is broken (the seed's section 8 order)."""


ENDPOINT_INCONSISTENCY: Final = "endpoint_inconsistency"
"""The check of a started call its completed response contradicts: the endpoint's doing,
recorded (ok) unless an output went back for that call anyway."""


def link_rank(link: str) -> int:
    """The link's position in the seed's order (unknown links sort last)."""
    return LINKS.index(link) if link in LINKS else len(LINKS)


class Grounds:
    """What several findings make their words and seq numbers from when first read, each
    finding by its ``check``: one object for all the findings about a call, where a function
    for each finding's words and one for its seqs would be two objects per finding."""

    __slots__ = ()

    def said(self, check: str) -> str:
        """The words of the finding made by ``check``."""
        raise NotImplementedError

    def seqs_of(self, check: str) -> tuple[int, ...]:
        """The seq numbers of the finding made by ``check``."""
        raise NotImplementedError


Said = str | Callable[[], str] | Grounds
"""A finding's message, or what says it when it is first read (``Finding.message``)."""
Seqs = tuple[int, ...] | Callable[[], tuple[int, ...]] | Grounds
"""A finding's seq numbers, or what works them out when they are first read."""


class Finding:
    """One checked fact about one link: holds (``ok``) or contradicts the record.

    ``message`` and ``seqs`` may be given as functions that make them, or as the ``Grounds``
    they are made from: a verdict holds a finding for every link of every call (60,000 for
    10,000 calls), and most are only counted, never shown, so their words and seq numbers
    are made when first read. Its
    fields may be given in order (``evidence.call_finding`` does: by keyword, a finding
    takes twice as long to make)."""

    __slots__ = ("_message", "_seqs", "call_id", "check", "link", "mcp_id", "ok", "server", "turn")

    def __init__(self, link: str, ok: bool, message: Said, call_id: str | None = None,
                 mcp_id: int | str | None = None, server: str | None = None, turn: int | None = None,
                 seqs: Seqs = (), check: str = "") -> None:
        self.link = link
        self.ok = ok
        self._message = message
        self.call_id = call_id
        self.mcp_id = mcp_id
        self.server = server
        self.turn = turn
        self._seqs = seqs
        self.check = check  # which invariant produced it (e.g. ``arguments_equal``), for grouping

    @property
    def message(self) -> str:
        said = self._message
        if not isinstance(said, str):
            said = self._message = said.said(self.check) if isinstance(said, Grounds) else said()
        return said

    @message.setter
    def message(self, said: Said) -> None:
        self._message = said

    @property
    def seqs(self) -> tuple[int, ...]:
        """Transcript seq numbers of the events involved."""
        seqs = self._seqs
        if not isinstance(seqs, tuple):
            seqs = self._seqs = seqs.seqs_of(self.check) if isinstance(seqs, Grounds) else seqs()
        return seqs

    @seqs.setter
    def seqs(self, seqs: Seqs) -> None:
        self._seqs = seqs

    def __getstate__(self) -> tuple[object, ...]:
        return self._fields()  # words and seqs made first: what makes them need not pickle

    def __setstate__(self, state: tuple[object, ...]) -> None:
        for name, value in zip(_STATE, state, strict=True):
            setattr(self, name, value)

    def _fields(self) -> tuple[object, ...]:
        return (self.link, self.ok, self.message, self.call_id, self.mcp_id, self.server, self.turn,
                self.seqs, self.check)

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if isinstance(other, Finding) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value (as the dataclass was)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(_STATE, self._fields(), strict=True))
        return f"Finding({shown})"

    def to_dict(self) -> dict[str, object]:
        return {
            "link": self.link,
            "ok": self.ok,
            "check": self.check,
            "message": self.message,
            "call_id": self.call_id,
            "mcp_id": self.mcp_id,
            "server": self.server,
            "turn": self.turn,
            "seqs": list(self.seqs),
        }


_STATE: Final = ("link", "ok", "message", "call_id", "mcp_id", "server", "turn", "seqs", "check")
"""A finding's fields, in the order ``_fields`` gives them (its repr and pickled state)."""


@dataclass(slots=True, kw_only=True)
class Verdict:
    """Every finding, the first broken link in the seed's order, and whether the run finished."""

    findings: list[Finding]
    broken: Finding | None
    finished: bool
    unfinished: list[str] = field(default_factory=list)
    """Why the run is not finished, e.g. ``call_x has no output``."""
    run_status: str | None = None
    """run_end's status, or None when the transcript has no run_end."""
    run_id: str | None = None
    source: str = ""

    @property
    def ok(self) -> bool:
        """No link is broken (an unfinished run can be ok)."""
        return self.broken is None

    def broken_findings(self) -> list[Finding]:
        return [finding for finding in self.findings if not finding.ok]

    def inconsistencies(self) -> list[Finding]:
        """Where the model endpoint contradicted itself and toolrelay held to what ran."""
        return [f for f in self.findings if f.ok and f.check == ENDPOINT_INCONSISTENCY]

    def to_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "run_id": self.run_id,
            "ok": self.ok,
            "broken": None if self.broken is None else self.broken.to_dict(),
            "finished": self.finished,
            "unfinished": self.unfinished,
            "run_status": self.run_status,
            "findings": [finding.to_dict() for finding in self.findings],
        }
