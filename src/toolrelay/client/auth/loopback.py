"""The redirect listener of a person's sign-in: ``http://127.0.0.1:PORT/callback`` on a
free port, served by toolrelay's one HTTP server stack (``httpserver.ServerThread``).

The authorization server sends the person's browser there with the code; the listener
hands the redirect's parameters to the waiting sign-in (which checks them: ``state``,
``iss``) and shows the browser a short page. An answer whose ``state`` is not the
request's is refused at once (a stale tab, or a forged redirect).
"""

from __future__ import annotations

import asyncio
import html
from urllib.parse import parse_qsl

from ...errors import TransportError
from ...httpserver import HttpRequest, HttpResponder, ServerThread
from ._failures import SignInFailed

__all__ = ["RedirectListener"]

_PATH = "/callback"
_PAGE = "<!doctype html><meta charset=utf-8><title>toolrelay</title><p>{}</p>"


class RedirectListener:
    """One sign-in's redirect: ``start`` gives the redirect URI, ``answer`` the parameters."""

    def __init__(self) -> None:
        self._thread = ServerThread(self._handle, max_body_bytes=64 * 1024, name="toolrelay-oauth-redirect")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._answer: asyncio.Future[dict[str, str]] | None = None
        self.state: str | None = None
        """The state the answer must bring back (set before the person is sent off)."""
        self.redirect_uri = ""

    async def start(self) -> str:
        """Listen on 127.0.0.1 (a free port); the redirect URI."""
        self._loop = asyncio.get_running_loop()
        self._answer = self._loop.create_future()
        try:
            port = self._thread.start("127.0.0.1", 0)
        except TransportError as exc:
            raise SignInFailed(f"cannot listen for the sign-in's redirect: {exc}") from None
        self.redirect_uri = f"http://127.0.0.1:{port}{_PATH}"
        return self.redirect_uri

    async def answer(self, wait: float) -> dict[str, str]:
        """The redirect's parameters, once the browser brings them (SignInFailed after ``wait`` s)."""
        assert self._answer is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._answer), wait)
        except TimeoutError:
            raise SignInFailed(f"no sign-in came back within {wait:g} s") from None

    async def stop(self) -> None:
        await asyncio.to_thread(self._thread.stop)

    async def _handle(self, request: HttpRequest, http: HttpResponder) -> None:
        """Runs on the listener's own thread; the answer crosses to the sign-in's loop."""
        if request.method != "GET" or request.path != _PATH:
            await http.send(404, [("content-type", "text/plain")], b"not found")
            return
        params = dict(parse_qsl(request.query))
        matches = params.get("state") == self.state
        if "error" in params:
            status, said = 400, f"The sign-in was refused: {params['error']}. You can close this tab."
        elif not matches:
            status, said = 400, "This sign-in answer does not belong to the sign-in toolrelay started."
        else:
            status, said = 200, "Signed in: toolrelay has the answer. You can close this tab."
        page = _PAGE.format(html.escape(said)).encode()
        await http.send(status, [("content-type", "text/html; charset=utf-8"), ("cache-control", "no-store")],
                        page)
        if self._loop is not None and self._answer is not None:
            self._loop.call_soon_threadsafe(self._settle, params)

    def _settle(self, params: dict[str, str]) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(params)
