"""Consent: a tool whose annotations do not say ``readOnlyHint: true`` runs only after approval.

Annotations are hints from the server; only an explicit read-only hint skips the
question. Who approves is the caller's choice, an ``Approver`` callback: ``approve_all``
(``--yes``), ``refusing(hint)`` (nobody can approve; the model is told why), or one that
asks someone (the CLI's terminal prompt lives in ``cli/consent.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from .route import Route

__all__ = ["LIBRARY_HINT", "REMEMBERED", "Approver", "ConsentMemory", "approve_all", "refusing"]

REMEMBERED: Final = ("run", "saved")
"""How long an answer stands: ``run`` (``a``: this tool, this run), ``saved`` (``s``: this
tool on this server, kept in the state folder for later runs)."""

Approver = Callable[[Route, dict[str, Any]], Awaitable[str | None]]
"""Asked before a tool that is not read-only runs: None approves, a string is the refusal."""

LIBRARY_HINT = "pass approve= to approve calls"


async def approve_all(route: Route, arguments: dict[str, Any]) -> str | None:
    """``--yes``: every call is approved."""
    return None


def refusing(hint: str) -> Approver:
    """Nobody can approve: every call that needs consent is refused, with ``hint``."""

    async def refuse(route: Route, arguments: dict[str, Any]) -> str | None:
        why = "needs consent" if route.read_only else "is not marked read-only"  # read-only: a policy asks
        return f"tool {route.tool} on server {route.server} {why} and was not approved ({hint})"

    return refuse


Saver = Callable[[str, str], None]
"""Keeps an ``s`` answer for later runs: (server, tool)."""


@dataclass(slots=True)
class ConsentMemory:
    """The answers that stand for later calls of a tool: the policy asks it before consent
    (``relay/policy.py``), and records a call it approves so as ``remembered``."""

    saved: set[tuple[str, str]] = field(default_factory=set)
    """(server, tool) approved for good (read from the state folder at the start)."""
    run: set[tuple[str, str]] = field(default_factory=set)
    """(server, tool) approved for the rest of this run."""
    save: Saver | None = None

    @classmethod
    def of(cls, saved: Iterable[tuple[str, str]], save: Saver | None = None) -> ConsentMemory:
        return cls(saved=set(saved), save=save)

    def remembered(self, server: str, tool: str) -> str | None:
        """``saved`` or ``run`` when an answer stands for the tool; None otherwise."""
        if (server, tool) in self.saved:
            return "saved"
        return "run" if (server, tool) in self.run else None

    def remember(self, server: str, tool: str, how: str) -> None:
        """Let ``how`` (``run`` or ``saved``) answer later calls of the tool."""
        if how == "saved":
            self.saved.add((server, tool))
            if self.save is not None:
                self.save(server, tool)
        else:
            self.run.add((server, tool))
