"""The client's ``subscriptions/listen`` request on a 2026-07-28 connection (``protocol/listen.py``).

One per link, opened after discovery when the server declares something toolrelay uses:
its tools' and resources' list changes (the catalog re-lists) and updates of the
resources a run attached (``--resource``; the revision has no ``resources/subscribe``).
The request is never answered while it serves: its notifications, tagged with its id,
go through the link's notification table as in the 2025 era. Following one more
resource replaces it (the old one is cancelled, a new one asks the whole filter); closing
the link cancels it (stdio: ``notifications/cancelled``; HTTP: that, and its stream is
closed), and a restarted server is listened to again by its new link.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import ToolrelayError
from ..protocol.exchange import Exchange
from ..protocol.jsonrpc import JSONObject, Notification
from ..protocol.listen import LISTEN, listen_filter, subscription_id
from ..protocol.peer import Peer

__all__ = ["Listener"]


class Listener:
    """A link's listen request: started, acknowledged, replaced, stopped."""

    def __init__(
        self, peer: Peer, server: str, *, enveloped: Callable[[JSONObject], JSONObject | None],
        notice: Callable[[str, str], None],
    ) -> None:
        self.peer = peer
        self.server = server
        self._enveloped = enveloped
        self._notice = notice
        self.asked: JSONObject = {}
        """The filter of the request now open (empty: none is open)."""
        self.honoured: JSONObject | None = None
        """What the server acknowledged for it (None until it has)."""
        self.acknowledged = asyncio.Event()
        self._task: asyncio.Task[Exchange] | None = None
        self._stopping = False

    def start(self, capabilities: dict[str, Any], resources: Sequence[str]) -> bool:
        """Open the request for what ``capabilities`` declare; False when nothing is."""
        wanted = listen_filter(capabilities, resources)
        if not wanted:
            return False
        self.asked, self.honoured = wanted, None
        self.acknowledged = asyncio.Event()
        params = self._enveloped({"notifications": wanted})
        self._stopping = False
        self._task = asyncio.ensure_future(self.peer.call(LISTEN, params))
        self._task.add_done_callback(self._ended)
        return True

    async def restart(
        self, capabilities: dict[str, Any], resources: Sequence[str], *, timeout: float
    ) -> None:
        """Replace the open request by one asking the whole filter now, and wait (up to
        ``timeout``) for its acknowledgement, so that what it leaves out is said first."""
        await self.stop()
        if not self.start(capabilities, resources) or self._task is None:
            return
        acknowledged = asyncio.ensure_future(self.acknowledged.wait())
        try:  # a refusal ends the request: no acknowledgement is coming
            await asyncio.wait({acknowledged, self._task}, timeout=timeout,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            acknowledged.cancel()

    def quiet(self) -> None:
        """The link is being given up: the request's end is expected, nothing to say."""
        self._stopping = True

    async def stop(self) -> None:
        """Cancel the open request (the peer sends ``notifications/cancelled`` for it)."""
        task, self._task = self._task, None
        if task is None or task.done():
            return
        self._stopping = True
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, ToolrelayError):
            await task

    def received(self, notification: Notification) -> None:
        """``notifications/subscriptions/acknowledged``: the subset the server honours; each
        attached resource it will not report is said (the run goes on without it)."""
        listen_id = subscription_id(notification.raw)
        exchange = self.peer.pending_exchange(listen_id) if listen_id is not None else None
        if exchange is None or exchange.method != LISTEN:
            return  # a late one, for a request already replaced: recorded only
        params = notification.params if isinstance(notification.params, dict) else {}
        honoured = params.get("notifications")
        self.honoured = honoured if isinstance(honoured, dict) else {}
        kept = self.honoured.get("resourceSubscriptions")
        for uri in self.asked.get("resourceSubscriptions", []):
            if not isinstance(kept, list) or uri not in kept:
                self._notice("warning", f"server {self.server} will not tell updates of {uri}: "
                                        "its subscriptions/listen acknowledgement leaves it out")
        self.acknowledged.set()

    def _ended(self, task: asyncio.Task[Exchange]) -> None:
        """The request ended other than by our cancel: the server answered it (it ended the
        stream), refused it, or the link failed. Said once; nothing more is heard."""
        if task.cancelled():
            return
        error = task.exception()  # retrieved even when not said
        if self._stopping or self.peer.closed is not None:
            return
        if error is not None:
            why = str(error)
        else:
            refused = task.result().error
            why = f"refused: {refused.message}" if refused is not None else "ended by the server"
        self._notice("warning", f"server {self.server}: {LISTEN} {why}; changes to its tools and "
                                "resources are no longer heard on this connection")
