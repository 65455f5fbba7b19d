"""Sign-in and refresh as generators of steps: sans-IO, like httpx's ``Auth.auth_flow``.

A flow yields what it needs done (``HttpCall``: one HTTP exchange, redirects not followed;
``AskRedirect``: where the answer is to come back, once the server is known; ``AskPerson``:
a person's answer to an authorization URL) and is sent back what came (``HttpReply``,
``RedirectUri``, ``PersonAnswer``); it returns a ``Grant`` or raises ``SignInFailed``.
``session.py`` drives it over the network; tests drive it with canned replies.

    sign_in: resource metadata → server metadata → redirect → client (config, CIMD, earlier, DCR)
             → authorization (PKCE S256, state, resource, scope) → token
    refresh: token (refresh_token grant, resource)
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from ._failures import NoResourceMetadata, SignInFailed
from .challenge import Challenge
from .grant import Grant
from .metadata import (
    ResourceMetadata,
    ServerMetadata,
    canonical_resource,
    check_endpoint,
    read_resource_metadata,
    read_server_metadata,
    resource_metadata_urls,
    server_metadata_urls,
)
from .pkce import Pkce
from .registration import choose_client, read_registration, registration_body
from .settings import OAuthSettings
from .tokens import Client, TokenCall, code_request, read_tokens, refresh_request, token_error

__all__ = [
    "AskPerson", "AskRedirect", "HttpCall", "HttpReply", "PersonAnswer", "RedirectUri", "Reply", "SignInPlan",
    "Step", "refresh", "sign_in",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpCall:
    """One HTTP exchange to make (never following a redirect, never with a Bearer token)."""

    step: str
    """What it is for, as recorded: ``resource metadata``, ``registration``, ``token``..."""
    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    form: Mapping[str, str] | None = None
    json: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpReply:
    status: int
    headers: Mapping[str, str]
    """Names in lower case."""
    body: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class AskRedirect:
    """Say where the authorization answer is to come back (a person may be asked first)."""

    issuer: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RedirectUri:
    uri: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AskPerson:
    """Have a person open ``url`` and sign in; the answer is the redirect's parameters."""

    url: str
    issuer: str
    state: str
    """The request's state: the redirect must bring it back."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PersonAnswer:
    params: Mapping[str, str]
    """The query parameters the redirect brought: code, state, iss (or error)."""


Step = HttpCall | AskRedirect | AskPerson
Reply = HttpReply | RedirectUri | PersonAnswer
Flow = Generator[Step, Reply, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class SignInPlan:
    """What a sign-in starts from."""

    server_url: str
    headless: bool
    """Take the code from the redirect's Location, no person involved."""
    now: float
    challenge: Challenge | None = None
    """The 401 or 403 that asked for it (None: a sign-in asked for by the user)."""
    settings: OAuthSettings | None = None
    earlier: Grant | None = None
    """The grant this one replaces: its client may be reused, its scopes are kept on a step-up."""


def sign_in(plan: SignInPlan) -> Generator[Step, Reply, Grant]:
    """The whole authorization code flow, from discovery to the token."""
    resource = yield from _resource_metadata(plan)
    issuer = resource.authorization_servers[0]
    server = yield from _server_metadata(issuer)
    redirect = yield AskRedirect(issuer=server.issuer)
    if not isinstance(redirect, RedirectUri):
        raise TypeError(f"a redirect URI was expected, not {redirect!r}")
    before = plan.earlier
    earlier = before.client if before is not None and before.issuer == server.issuer else None
    client = choose_client(plan.settings, server, earlier, redirect.uri, plan.now)
    if client is None:
        client = yield from _register(server, redirect.uri)
    scopes = _scopes(plan, resource)
    pkce = Pkce()
    url = _authorization_url(server, client, pkce, scopes, resource.resource)
    if plan.headless:
        params = yield from _headless_answer(url, redirect.uri)
    else:
        answer = yield AskPerson(url=url, issuer=server.issuer, state=pkce.state)
        if not isinstance(answer, PersonAnswer):
            raise TypeError(f"a person's answer was expected, not {answer!r}")
        params = dict(answer.params)
    code = _code(params, pkce.state, server)
    call = code_request(client, code=code, verifier=pkce.verifier, resource=resource.resource)
    reply = yield from _http(_token_call("token", server.token_endpoint, call))
    if reply.status != 200:
        raise token_error(reply.status, reply.body, refreshing=False)
    tokens = read_tokens(reply.body, plan.now)
    return Grant(server=canonical_resource(plan.server_url), resource=resource.resource, issuer=server.issuer,
                 token_endpoint=server.token_endpoint, client=client, tokens=tokens, scopes=scopes,
                 signed_in_at=plan.now)


def refresh(grant: Grant, now: float) -> Generator[Step, Reply, Grant]:
    """A new access token for ``grant`` (its refresh token traded; kept if none comes back)."""
    refresh_token = grant.tokens.refresh_token
    if refresh_token is None:
        raise SignInFailed("there is no refresh token")
    call = refresh_request(grant.client, refresh_token=refresh_token, resource=grant.resource)
    reply = yield from _http(_token_call("refresh", grant.token_endpoint, call))
    if reply.status != 200:
        raise token_error(reply.status, reply.body, refreshing=True)
    return replace(grant, tokens=read_tokens(reply.body, now, previous_refresh=refresh_token))


# -- discovery ----------------------------------------------------------------------------


def _resource_metadata(plan: SignInPlan) -> Generator[Step, Reply, ResourceMetadata]:
    named = plan.challenge.resource_metadata if plan.challenge is not None else None
    urls = resource_metadata_urls(plan.server_url, named)
    for url in urls:
        check_endpoint(url, "resource metadata URL")  # what it names gets the token: never over cleartext
        reply = yield from _http(HttpCall(step="resource metadata", method="GET", url=url,
                                          headers={"accept": "application/json"}))
        if reply.status == 200:
            return read_resource_metadata(reply.body, plan.server_url)
    raise NoResourceMetadata(f"the server publishes no resource metadata (tried {', '.join(urls)})")


def _server_metadata(issuer: str) -> Generator[Step, Reply, ServerMetadata]:
    urls = server_metadata_urls(issuer)
    for url in urls:
        reply = yield from _http(HttpCall(step="server metadata", method="GET", url=url,
                                          headers={"accept": "application/json"}))
        if reply.status == 200:
            return read_server_metadata(reply.body, issuer)
    raise SignInFailed(f"the authorization server {issuer} publishes no metadata (tried {', '.join(urls)})")


def _register(server: ServerMetadata, redirect_uri: str) -> Generator[Step, Reply, Client]:
    assert server.registration_endpoint is not None
    reply = yield from _http(HttpCall(step="registration", method="POST", url=server.registration_endpoint,
                                      headers={"accept": "application/json"},
                                      json=registration_body(server, redirect_uri)))
    if reply.status not in (200, 201):
        raise SignInFailed(f"the client registration at {server.registration_endpoint} was refused "
                           f"(HTTP {reply.status})")
    return read_registration(reply.body, server, redirect_uri)


# -- authorization ------------------------------------------------------------------------


def _scopes(plan: SignInPlan, resource: ResourceMetadata) -> tuple[str, ...]:
    """The config's scopes, else the challenge's, else all the server lists, else none; a
    step-up adds the challenge's to those asked before."""
    challenge = plan.challenge
    if plan.settings is not None and plan.settings.scopes is not None:
        chosen = plan.settings.scopes
    elif challenge is not None and challenge.scopes is not None:
        chosen = challenge.scopes
    else:
        chosen = resource.scopes_supported or ()
    if challenge is not None and challenge.insufficient_scope:
        before = plan.earlier.scopes if plan.earlier is not None else ()
        chosen = (*before, *chosen, *(challenge.scopes or ()))
    return tuple(dict.fromkeys(chosen))


def _authorization_url(
    server: ServerMetadata, client: Client, pkce: Pkce, scopes: tuple[str, ...], resource: str
) -> str:
    params = {"response_type": "code", "client_id": client.client_id, "redirect_uri": client.redirect_uri,
              "code_challenge": pkce.challenge, "code_challenge_method": "S256", "state": pkce.state,
              "resource": resource}
    if scopes:
        params["scope"] = " ".join(scopes)
    endpoint = server.authorization_endpoint
    return endpoint + ("&" if urlsplit(endpoint).query else "?") + urlencode(params)


def _headless_answer(url: str, redirect_uri: str) -> Generator[Step, Reply, dict[str, str]]:
    """Ask the authorization server itself: its redirect's Location holds the answer."""
    reply = yield from _http(HttpCall(step="authorization", method="GET", url=url))
    location = reply.headers.get("location")
    if reply.status not in (301, 302, 303, 307, 308) or not location:
        raise SignInFailed(f"the authorization server answered the authorization request with HTTP "
                           f"{reply.status}, not a redirect: it wants a person to sign in")
    target, expected = urlsplit(location), urlsplit(redirect_uri)
    if (target.scheme, target.netloc, target.path) != (expected.scheme, expected.netloc, expected.path):
        raise SignInFailed("the authorization server redirected somewhere else than toolrelay's redirect URI")
    return dict(parse_qsl(target.query))


def _code(params: Mapping[str, str], state: str, server: ServerMetadata) -> str:
    """The code of an authorization answer, once its state (and issuer) are checked."""
    if "error" in params:
        described = params.get("error_description", "")
        raise SignInFailed(f"the authorization server refused: {params['error']}"
                           + (f" ({described[:200]})" if described else ""))
    if params.get("state") != state:
        raise SignInFailed("the authorization answer's state is not the request's (a stale or forged "
                           "redirect): refused")
    iss = params.get("iss")
    if (iss is None and server.iss_in_response) or (iss is not None and iss != server.issuer):
        raise SignInFailed(f"the authorization answer's issuer ({iss}) is not {server.issuer}: refused")
    code = params.get("code")
    if not code:
        raise SignInFailed("the authorization answer has no code")
    return code


# -- steps --------------------------------------------------------------------------------


def _token_call(step: str, endpoint: str, call: TokenCall) -> HttpCall:
    return HttpCall(step=step, method="POST", url=endpoint, headers=call.headers, form=call.form)


def _http(call: HttpCall) -> Generator[Step, Reply, HttpReply]:
    reply = yield call
    if not isinstance(reply, HttpReply):
        raise TypeError(f"an HTTP reply was expected for {call.step}, not {reply!r}")
    return reply
