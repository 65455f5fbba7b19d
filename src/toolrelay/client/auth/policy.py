"""How a sign-in may happen where toolrelay runs: the policy the CLI (or a library user)
sets for the servers connected in its context.

- ``never``: stored sign-ins are used (and refreshed); a server that needs a new one is
  reported as unavailable, with the command that signs in. The default.
- ``headless``: no person: toolrelay requests the authorization URL itself and takes the
  code from the redirect's ``Location`` (what test authorization servers and CI allow).
- ``person``: a person signs in, in a browser: the ``Presenter`` (the CLI's) asks whether
  to, and shows the URL; the code comes back to a listener on 127.0.0.1.

The policy rides a context variable, so every connection opened inside
``with signing_in(policy):`` (its tasks included) follows it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, Protocol

__all__ = ["MODES", "Mode", "Presenter", "SignInPolicy", "current_policy", "signing_in", "use_policy"]

Mode = Literal["never", "headless", "person"]
MODES: Final = ("never", "headless", "person")


class Presenter(Protocol):
    """The person's side of a sign-in (the CLI implements it on the terminal)."""

    async def offer(self, server: str) -> bool:
        """Ask whether to sign in to ``server`` now; False leaves it unavailable."""

    async def show(self, server: str, url: str) -> None:
        """Have the person open ``url`` (a browser, or the URL printed)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SignInPolicy:
    """How servers that ask for OAuth sign-in are answered."""

    mode: Mode = "never"
    presenter: Presenter | None = None
    """Needed for ``person``."""
    fresh: bool = False
    """Sign in again even where a stored sign-in exists (``toolrelay auth login``)."""
    store: Path | None = None
    """The folder of stored grants; None: ``$XDG_STATE_HOME/toolrelay/oauth``."""
    login_hint: str = "sign in first with `toolrelay auth login {server} --config FILE`"
    """What a server that needs a sign-in is reported with (``{server}`` is its name)."""
    wait: float = 300.0
    """Seconds a person has to finish signing in."""


_NEVER: Final = SignInPolicy()
_POLICY: ContextVar[SignInPolicy | None] = ContextVar("toolrelay_sign_in", default=None)


def current_policy() -> SignInPolicy:
    """The policy of the current context (``never`` unless set)."""
    return _POLICY.get() or _NEVER


@contextlib.contextmanager
def signing_in(policy: SignInPolicy) -> Iterator[SignInPolicy]:
    """Connections opened inside follow ``policy``."""
    token = _POLICY.set(policy)
    try:
        yield policy
    finally:
        _POLICY.reset(token)


def use_policy(policy: SignInPolicy) -> None:
    """Connections opened from now on in this context (and in the tasks and ``asyncio.run``
    it starts) follow ``policy``: for a command line that sets it once."""
    _POLICY.set(policy)
