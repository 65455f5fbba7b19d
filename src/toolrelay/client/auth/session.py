"""The HTTP transport's OAuth hook: one ``OAuthSession`` per opened channel.

``prepare`` (when the channel opens, outside any request's timeout) takes the server's
stored grant, refreshes it if it has expired, and signs in at once where that is asked
for (``toolrelay auth login``) or where a person is at hand without a stored sign-in: a
GET without a token brings the server's challenge (``_probe``), so a person who takes
minutes is not cut short by a request's timeout. ``stream`` sends one request with the
Bearer token (refreshed shortly before it expires) and answers what comes back:

- 401: the token was renewed meanwhile → send again; else refresh it once; else sign in
  (as the policy allows: headless, a person, or not at all: then the server is reported
  as needing a sign-in, with the command that does it);
- 403 ``insufficient_scope``: sign in again for the scopes asked as well (a step-up), at
  most ``MAX_STEP_UPS`` times for one request;
- anything else goes back to the transport as it came.

The token goes to the MCP server's URL only, never to the authorization server or any
other host, and redirects are never followed. Every exchange with the authorization side
is an ``AuthExchange`` event (URL and status), every outcome an ``AuthOutcome``; tokens
and secrets become redaction secrets the moment they are known.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import AsyncIterator, Callable, Generator
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx2

from ..._version import __version__
from ...errors import HttpStatusError, TransportError
from ...events import AuthExchange, AuthOutcome, Event
from ...redaction import redact_url, remember_secret
from ..config import ServerConfig
from ..http_failures import failure_words, unreachable
from ._failures import GrantRefused, NoResourceMetadata, SignInFailed
from .challenge import Challenge, read_challenge
from .flow import (
    AskPerson,
    AskRedirect,
    HttpCall,
    HttpReply,
    PersonAnswer,
    RedirectUri,
    Reply,
    SignInPlan,
    Step,
    refresh,
    sign_in,
)
from .grant import Grant
from .loopback import RedirectListener
from .metadata import secure_url
from .policy import current_policy
from .store import GrantStore

__all__ = ["HEADLESS_REDIRECT", "MAX_STEP_UPS", "OAuthSession"]

HEADLESS_REDIRECT: Final = "http://127.0.0.1/callback"
"""The redirect URI of a headless sign-in: never listened on, its ``Location`` is read."""
MAX_STEP_UPS: Final = 2
"""Scope step-ups for one request (SEP-835: "no more than a few"): with the first sign-in,
at most three authorizations."""
_BODY_LIMIT: Final = 1024 * 1024
_ONE_TIME: Final = frozenset({"state", "code_challenge", "code"})


@dataclass(slots=True)
class _Tries:
    """What one request has tried already."""

    refreshed: bool = False
    signed_in: bool = False
    step_ups: int = 0


class OAuthSession:
    """The Bearer token of one server's channel, and what a 401 or 403 leads to."""

    def __init__(
        self, config: ServerConfig, *, tls: ssl.SSLContext | None = None,
        emit: Callable[[Event], None] | None = None, connection: int = 0,
    ) -> None:
        self.config = config
        own_header = any(name.lower() == "authorization" for name in config.headers)
        self.enabled = config.url is not None and not own_header
        """False where the config sends its own Authorization header: it is used as it is."""
        self.cleartext = config.url is not None and not secure_url(config.url)
        """Plain http off loopback: no token is ever sent there, nor any sign-in started for it."""
        self.policy = current_policy()
        self.store = GrantStore(self.policy.store)
        self._tls = tls
        self._emit = emit
        self._connection = connection
        self._grant: Grant | None = None
        self._earlier: Grant | None = None
        """A grant no longer used, whose client may be: a fresh sign-in reuses its registration."""
        self._lock = asyncio.Lock()
        self._client: httpx2.AsyncClient | None = None
        self._quiet: list[Event] | None = None

    @property
    def url(self) -> str:
        assert self.config.url is not None
        return self.config.url

    # -- the transport's side -------------------------------------------------------------

    async def prepare(self) -> None:
        """Take the stored grant (refreshed if it expired); sign in now if that is asked for."""
        if not self.enabled:
            return
        stored = self.store.load(self.url) if not self.cleartext else None
        if stored is not None:
            _remember(stored)
        if self.policy.fresh:
            self._earlier = stored
        elif stored is not None:
            self._grant = stored
            async with self._lock:
                if stored.tokens.expired(time.time()) and stored.tokens.refresh_token is not None:
                    await self._refresh()
                else:
                    self._outcome("stored")
        if self.policy.fresh or (self.policy.mode == "person" and self._bearer_now() is None):
            async with self._lock:
                await self._sign_in(await self._probe(), proactive=True)

    async def _probe(self) -> Challenge | None:
        """The server's challenge to a bare GET without a token, if it answers 401: a sign-in a
        person takes minutes over then happens here, outside any request's timeout, also
        where only the challenge names the resource metadata."""
        try:
            client = self._auth_client()
            async with client.stream("GET", self.url, headers={"accept": "text/event-stream"}) as response:
                status, header = response.status_code, response.headers.get("www-authenticate")
        except httpx2.HTTPError as exc:
            refused = unreachable(self.config, exc)
            if refused is not None:
                raise refused from None  # nothing to sign in to: said as a request would say it
            return None  # the request proper will say what is wrong
        return read_challenge(status, header) if status == 401 else None

    def authorization(self) -> dict[str, str]:
        """The Authorization header for a request that must not wait (the closing DELETE)."""
        token = self._bearer_now()
        return {"authorization": f"Bearer {token}"} if token is not None else {}

    @contextlib.asynccontextmanager
    async def stream(
        self, client: httpx2.AsyncClient, method: str, url: str, *, headers: dict[str, str],
        content: bytes | None = None,
    ) -> AsyncIterator[httpx2.Response]:
        """``client.stream`` with the token, and a 401 / 403 answered before it is yielded."""
        tries = _Tries()
        while True:
            sent = await self._bearer() if self.enabled else None
            sending = headers if sent is None else {**headers, "authorization": f"Bearer {sent}"}
            response = await client.send(client.build_request(method, url, headers=sending, content=content),
                                          stream=True)
            status = response.status_code
            try:
                again = status in (401, 403) and self.enabled and await self._answer(
                    read_challenge(status, response.headers.get("www-authenticate")), sent, tries)
            except BaseException:
                await response.aclose()
                raise
            if not again:
                break
            await response.aclose()
        try:
            yield response
        finally:
            await response.aclose()

    def hint(self, status: int) -> str | None:
        """What to add to a 401 / 403 the transport reports (None: its usual hint)."""
        if not self.enabled or status not in (401, 403):
            return None
        return f" (check the server's headers in the config, or {self._login_hint()})"

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # -- tokens ---------------------------------------------------------------------------

    def _bearer_now(self) -> str | None:
        grant = self._grant
        if grant is None or self.cleartext or grant.tokens.expired(time.time(), margin=0.0):
            return None
        return grant.tokens.access_token

    async def _bearer(self) -> str | None:
        """The access token to send, refreshed first when it is about to expire."""
        grant = self._grant
        if grant is not None and grant.tokens.expired(time.time()) and grant.tokens.refresh_token is not None:
            async with self._lock:
                if self._grant is grant:
                    await self._refresh()
        return self._bearer_now()

    async def _refresh(self) -> bool:
        """Trade the refresh token (under the lock); False when it was refused (the grant is
        dropped: only a sign-in helps now)."""
        grant = self._grant
        assert grant is not None
        try:
            renewed = await self._drive(refresh(grant, time.time()))
        except GrantRefused as exc:
            self._drop()
            self._outcome("failed", detail=str(exc), issuer=grant.issuer)
            return False
        except SignInFailed as exc:
            raise TransportError(f"server {self.config.name}: refreshing the OAuth token failed: {exc}") \
                from None
        self._keep(renewed)
        self._outcome("refreshed")
        return True

    def _keep(self, grant: Grant) -> None:
        _remember(grant)
        self._grant, self._earlier = grant, None
        self.store.save(grant)

    def _drop(self) -> None:
        self._earlier, self._grant = self._grant, None
        self.store.forget(self.url)

    # -- 401 and 403 ----------------------------------------------------------------------

    async def _answer(self, challenge: Challenge, sent: str | None, tries: _Tries) -> bool:
        """Whether to send the request again, now that this was done about ``challenge``."""
        if challenge.status == 403 and not challenge.insufficient_scope:
            return False
        async with self._lock:
            current = self._bearer_now()
            if current is not None and current != sent:
                return True  # renewed while this request was on its way
            if challenge.status == 401:
                return await self._unauthorized(challenge, sent, tries)
            if tries.step_ups >= MAX_STEP_UPS:
                granted = self._grant.tokens.scope if self._grant is not None else None
                why = (f"still refused for insufficient scope after {MAX_STEP_UPS} sign-ins for more scope "
                       f"(the server asks for {challenge.scope or 'no scope it names'}; granted: "
                       f"{granted or 'none said'})")
                self._outcome("failed", detail=why)
                raise HttpStatusError(403, f"server {self.config.name}: {why}")
            tries.step_ups += 1
            return await self._sign_in(challenge)

    async def _unauthorized(self, challenge: Challenge, sent: str | None, tries: _Tries) -> bool:
        grant = self._grant
        if sent is not None and grant is not None and grant.tokens.refresh_token and not tries.refreshed:
            tries.refreshed = True
            if await self._refresh():
                return True
        if tries.signed_in:
            return False  # a token granted just now is refused: say so, do not loop
        tries.signed_in = True
        return await self._sign_in(challenge)

    async def _sign_in(self, challenge: Challenge | None, *, proactive: bool = False) -> bool:
        """Sign in as the policy allows (under the lock); False when the server turns out not
        to use OAuth sign-in (no resource metadata), so its answer stands."""
        if self.cleartext:
            return self._refuse_cleartext(challenge)
        mode = self.policy.mode
        if mode == "never":
            if (challenge is not None and challenge.resource_metadata is None and self._grant is None
                    and self._earlier is None):
                return False  # nothing says this server uses OAuth: its 401 is reported as it is
            raise self._needed(challenge, "no sign-in can happen here")
        plan = SignInPlan(server_url=self.url, headless=mode == "headless", now=time.time(),
                          challenge=challenge, settings=self.config.oauth,
                          earlier=self._grant or self._earlier)
        self._quiet = [] if proactive else None
        try:
            grant = await self._drive(sign_in(plan))
        except NoResourceMetadata:
            if proactive or (challenge is not None and challenge.resource_metadata is None):
                self._quiet = None  # a look that found nothing is not worth recording
                return False
            raise self._failed("the server publishes no resource metadata") from None
        except SignInFailed as exc:
            raise self._failed(str(exc)) from None
        finally:
            self._flush_quiet()
        self._keep(grant)
        self._outcome("signed_in", how="headless" if mode == "headless" else "browser")
        return True

    def _refuse_cleartext(self, challenge: Challenge | None) -> bool:
        """A plain-http URL off loopback: False where nothing says the server uses OAuth (its
        answer stands; no metadata is looked up over plain http); else the sign-in is refused."""
        if not self.policy.fresh and (challenge is None or challenge.resource_metadata is None):
            return False
        raise self._failed(f"the server's URL {self.config.target} is not https, and a token goes over plain "
                           "http only to this machine (localhost, 127.0.0.1, [::1]): refused")

    def _needed(self, challenge: Challenge | None, why: str) -> HttpStatusError:
        status = challenge.status if challenge is not None else 401
        stepping_up = challenge is not None and challenge.insufficient_scope
        scope = f" for scope {challenge.scope}" if challenge is not None and stepping_up else ""
        self._outcome("needed", detail=why + scope)
        return HttpStatusError(status, f"server {self.config.name} needs an OAuth sign-in{scope} ({why}): "
                                       f"{self._login_hint()}")

    def _failed(self, why: str) -> TransportError:
        self._outcome("failed", detail=why)
        return TransportError(f"server {self.config.name}: OAuth sign-in failed: {why}")

    def _login_hint(self) -> str:
        return self.policy.login_hint.format(server=self.config.name)

    # -- driving a flow -------------------------------------------------------------------

    async def _drive(self, flow: Generator[Step, Reply, Grant]) -> Grant:
        """Run a flow's steps until it returns its grant."""
        listener: RedirectListener | None = None
        reply: Reply | None = None
        try:
            while True:
                try:
                    step = flow.send(reply) if reply is not None else next(flow)
                except StopIteration as done:
                    grant: Grant = done.value
                    return grant
                if isinstance(step, HttpCall):
                    reply = await self._perform(step)
                elif isinstance(step, AskRedirect):
                    listener = await self._redirect_for(step)
                    reply = RedirectUri(uri=listener.redirect_uri if listener else HEADLESS_REDIRECT)
                else:
                    reply = await self._ask_person(step, listener)
        finally:
            flow.close()
            if listener is not None:
                await listener.stop()

    async def _perform(self, call: HttpCall) -> HttpReply:
        client = self._auth_client()
        body: dict[str, Any] = {"data": dict(call.form)} if call.form is not None else {}
        if call.json is not None:
            body = {"json": call.json}
        request = client.build_request(call.method, call.url, headers=dict(call.headers), **body)
        try:
            response = await client.send(request, stream=True)
            try:
                content = bytearray()
                async for chunk in response.aiter_bytes():
                    content += chunk
                    if len(content) > _BODY_LIMIT:
                        raise SignInFailed(f"the answer to the {call.step} request is larger than 1 MiB")
            finally:
                await response.aclose()
        except httpx2.HTTPError as exc:
            self._exchange(call, None)
            raise SignInFailed(f"cannot reach {redact_url(call.url)} ({call.step}): {failure_words(exc)}") \
                from None
        self._exchange(call, response.status_code)
        headers = {name.lower(): value for name, value in response.headers.items()}
        return HttpReply(status=response.status_code, headers=headers, body=bytes(content))

    async def _redirect_for(self, step: AskRedirect) -> RedirectListener | None:
        """None for a headless sign-in; else, once the person agrees, a listener."""
        if self.policy.mode != "person" or self.policy.presenter is None:
            return None
        self._flush_quiet()  # the server does use OAuth: what was found so far is recorded
        if not await self.policy.presenter.offer(self.config.name):
            raise SignInFailed("the sign-in was declined")
        listener = RedirectListener()
        await listener.start()
        return listener

    async def _ask_person(self, step: AskPerson, listener: RedirectListener | None) -> PersonAnswer:
        presenter = self.policy.presenter
        if listener is None or presenter is None:
            raise SignInFailed("no person can sign in here")
        listener.state = step.state
        await presenter.show(self.config.name, step.url)
        return PersonAnswer(params=await listener.answer(self.policy.wait))

    def _auth_client(self) -> httpx2.AsyncClient:
        """The authorization side's own client: none of the MCP server's configured headers,
        no redirects followed, never a Bearer token."""
        if self._client is None:
            self._client = httpx2.AsyncClient(
                headers={"user-agent": f"toolrelay/{__version__}"}, follow_redirects=False,
                timeout=httpx2.Timeout(self.config.request_timeout), verify=self._tls or True)
        return self._client

    # -- events ---------------------------------------------------------------------------

    def _exchange(self, call: HttpCall, status: int | None) -> None:
        self._tell(AuthExchange(server=self.config.name, connection=self._connection, step=call.step,
                                method=call.method, url=_recorded(call.url), status=status))

    def _outcome(self, outcome: str, *, how: str = "", detail: str = "", issuer: str | None = None) -> None:
        grant = self._grant
        self._tell(AuthOutcome(
            server=self.config.name, connection=self._connection, outcome=outcome,
            issuer=issuer or (grant.issuer if grant is not None else None),
            scopes=list(grant.scopes) if grant is not None else [], how=how, detail=detail))

    def _tell(self, event: Event) -> None:
        if self._quiet is not None:
            self._quiet.append(event)  # a look for metadata that may find nothing: held back
        elif self._emit is not None:
            self._emit(event)

    def _flush_quiet(self) -> None:
        held, self._quiet = self._quiet, None
        for event in held or ():
            self._tell(event)


def _recorded(url: str) -> str:
    """A URL as the transcript keeps it: the one-time ``state`` and PKCE challenge left out
    (they prove nothing afterwards), secrets redacted."""
    parts = urlsplit(url)
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in _ONE_TIME]
    return redact_url(urlunsplit(parts._replace(query=urlencode(kept))))


def _remember(grant: Grant) -> None:
    """Its tokens and its client's secret are redacted wherever they would show."""
    for secret in (grant.tokens.access_token, grant.tokens.refresh_token, grant.client.client_secret):
        if secret:
            remember_secret(secret)
