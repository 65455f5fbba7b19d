"""A local OAuth 2.1 authorization server and an MCP server protected by it, for the
sign-in tests: two ``toolrelay.httpserver.ServerThread`` listeners on 127.0.0.1, so two
origins (a token that reaches the authorization server's port went to another host).

The authorization server does what a real one checks: PKCE S256 (the verifier must
match), the redirect URI and client of the code, the client's authentication at the
token endpoint (basic, post or none, as registered), codes used once, refresh tokens
rotated, and the ``resource`` of each request. Its ``/authorize`` answers at once with a
302 to the redirect URI (no login page): a headless client reads the code from the
``Location``, a "browser" (a test's HTTP client following redirects) lands on the
client's loopback listener.

The protected MCP server (the echo service behind ``McpEndpoint``) answers 401 with
``WWW-Authenticate: Bearer resource_metadata=...`` without a valid token, and 403
``insufficient_scope`` for a ``tools/call`` whose token lacks ``call_scope``.
Every request either side saw is kept (``seen``), headers included, for the tests to
check where a token went.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urlencode

from toolrelay.httpserver import HttpRequest, HttpResponder, ServerThread
from toolrelay.server.http import McpEndpoint
from toolrelay.server.http_rules import AccessPolicy

from .servers.echo_service import EchoService

__all__ = ["OAuthOptions", "OAuthServers", "Seen"]

_JSON = [("content-type", "application/json"), ("cache-control", "no-store")]


@dataclass(slots=True)
class OAuthOptions:
    """How the two servers behave (a test changes one thing at a time)."""

    s256: bool = True
    """Advertise PKCE S256 in the metadata."""
    issuer_path: str = ""
    """A path of the issuer (``/tenant1``)."""
    metadata_issuer: str | None = None
    """An issuer the metadata says instead of its own (an issuer mismatch)."""
    resource: str | None = None
    """A ``resource`` the resource metadata says instead of the MCP server's URL."""
    challenge_scope: str | None = None
    """``scope`` in the 401's challenge."""
    scopes_supported: list[str] | None = None
    call_scope: str | None = None
    """A scope a tools/call needs (a 403 insufficient_scope without it)."""
    registration: bool = True
    auth_methods: list[str] = field(default_factory=lambda: ["none"])
    token_lifetime: int = 3600
    refresh_tokens: bool = True
    withhold_scope: str | None = None
    """A scope the authorization server never grants (a step-up that cannot succeed)."""
    wrong_state: bool = False
    """``/authorize`` answers with another state than the one asked."""
    forbid_calls: bool = False
    """A tools/call gets a plain 403 whose body quotes the caller's token (a careless server)."""
    prm_path: str = "/.well-known/oauth-protected-resource/mcp"
    """Where the resource metadata is (another path: only the 401's challenge names it)."""
    login_page: bool = False
    """``/authorize`` answers a login page (200) instead of redirecting: a person is needed."""
    mcp_host: str = "127.0.0.1"
    """Where the MCP server listens (``127.0.0.2``: loopback, yet not an address OAuth trusts
    with plain http)."""
    token_suffix: str = ""
    """Appended to every access token issued (``\\r\\n``: a token no header can carry)."""


@dataclass(slots=True)
class Seen:
    """One request a server saw."""

    method: str
    path: str
    params: dict[str, str]
    """The query's, or the form's."""
    headers: dict[str, str]


@dataclass(slots=True)
class _Token:
    client_id: str
    scopes: tuple[str, ...]
    expires_at: float
    resource: str


class OAuthServers:
    """Start with ``with OAuthServers(options) as servers``: ``servers.mcp_url`` and
    ``servers.issuer`` are set; ``seen_by_as`` / ``seen_by_mcp`` list the requests."""

    def __init__(self, options: OAuthOptions | None = None) -> None:
        self.options = options or OAuthOptions()
        self._lock = threading.Lock()
        self.seen_by_as: list[Seen] = []
        self.seen_by_mcp: list[Seen] = []
        self.clients: dict[str, dict[str, Any]] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.tokens: dict[str, _Token] = {}
        self.refresh_tokens: dict[str, _Token] = {}
        self._spent: list[str] = []
        self.authorizations: list[dict[str, str]] = []
        """The parameters of every authorization request."""
        host = self.options.mcp_host
        endpoint = McpEndpoint(EchoService(), AccessPolicy.build(host, None, ()), 1 << 20, None)
        self._endpoint = endpoint
        self._as = ServerThread(self._authorization_server, max_body_bytes=1 << 16, name="test-oauth-as")
        self._mcp = ServerThread(self._protected, max_body_bytes=1 << 20, name="test-oauth-mcp")
        self.as_origin = self.mcp_url = self.issuer = ""

    def __enter__(self) -> OAuthServers:
        self.as_origin = f"http://127.0.0.1:{self._as.start('127.0.0.1', 0)}"
        self.issuer = self.as_origin + self.options.issuer_path
        host = self.options.mcp_host
        self.mcp_url = f"http://{host}:{self._mcp.start(host, 0)}/mcp"
        return self

    def __exit__(self, *exc: object) -> None:
        self._mcp.stop()
        self._as.stop()

    # -- what a test changes ------------------------------------------------------------

    def expire_tokens(self) -> None:
        """Every access token issued so far has expired (refresh tokens stay good)."""
        with self._lock:
            for token in self.tokens.values():
                token.expires_at = 0.0

    def revoke_access(self) -> None:
        """Every access token issued so far is revoked (before it expires); refresh tokens stay good."""
        with self._lock:
            self.tokens.clear()

    def revoke_all(self) -> None:
        """Every access and refresh token issued so far is revoked."""
        with self._lock:
            self.tokens.clear()
            self.refresh_tokens.clear()

    def preregister(self, client_id: str, secret: str | None, method: str) -> None:
        """A client known beforehand (any loopback redirect URI, as RFC 8252 allows)."""
        with self._lock:
            self.clients[client_id] = {"client_id": client_id, "client_secret": secret,
                                       "token_endpoint_auth_method": method, "redirect_uris": None}

    def stop_authorization_server(self) -> None:
        """The authorization server goes down (its port refuses connections from now on)."""
        self._as.stop()

    def issued_secrets(self) -> list[str]:
        """Every token and client secret handed out: none may show in any record."""
        with self._lock:
            found = [*self.tokens, *self.refresh_tokens, *self._spent]
            found += [c["client_secret"] for c in self.clients.values() if c.get("client_secret")]
            return found

    # -- the authorization server ---------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        o = self.options
        document: dict[str, Any] = {
            "issuer": o.metadata_issuer or self.issuer,
            "authorization_endpoint": f"{self.as_origin}/authorize",
            "token_endpoint": f"{self.as_origin}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"] if o.s256 else ["plain"],
            "token_endpoint_auth_methods_supported": o.auth_methods,
        }
        if o.registration:
            document["registration_endpoint"] = f"{self.as_origin}/register"
        return document

    async def _authorization_server(self, request: HttpRequest, http: HttpResponder) -> None:
        params = dict(parse_qsl(request.query if request.method == "GET" else request.body.decode()))
        if request.path == "/register":
            params = {}
        with self._lock:
            self.seen_by_as.append(Seen(request.method, request.path, params, dict(request.headers)))
        path = request.path
        if path == f"/.well-known/oauth-authorization-server{self.options.issuer_path}":
            await _send_json(http, 200, self.metadata())
        elif path == "/register" and request.method == "POST" and self.options.registration:
            await self._register(request, http)
        elif path == "/authorize" and request.method == "GET":
            await self._authorize(params, http)
        elif path == "/token" and request.method == "POST":
            status, answer = self._token(request, params)
            await _send_json(http, status, answer)
        else:
            await _send_json(http, 404, {"error": "not_found"})

    async def _register(self, request: HttpRequest, http: HttpResponder) -> None:
        asked = json.loads(request.body)
        method = asked.get("token_endpoint_auth_method", "client_secret_basic")
        client = {"client_id": f"client-{secrets.token_hex(4)}", "redirect_uris": asked["redirect_uris"],
                  "token_endpoint_auth_method": method}
        if method != "none":
            client["client_secret"] = secrets.token_urlsafe(24)
        with self._lock:
            self.clients[client["client_id"]] = client
        await _send_json(http, 201, client)

    async def _authorize(self, params: dict[str, str], http: HttpResponder) -> None:
        with self._lock:
            self.authorizations.append(params)
            client = self.clients.get(params.get("client_id", ""))
        redirect = params.get("redirect_uri", "")
        uris = client["redirect_uris"] if client is not None else []
        if client is None or (uris is not None and redirect not in uris):
            await _send_json(http, 400, {"error": "invalid_request", "error_description": "unknown client"})
            return
        if self.options.login_page:
            await http.send(200, [("content-type", "text/html")], b"<form>password?</form>")
            return
        if params.get("code_challenge_method") != "S256" or not params.get("code_challenge"):
            answer = {"error": "invalid_request", "state": params.get("state", "")}
        else:
            code = secrets.token_urlsafe(16)
            with self._lock:
                self.codes[code] = params
            state = "forged-state" if self.options.wrong_state else params.get("state", "")
            answer = {"code": code, "state": state, "iss": self.issuer}
        await http.send(302, [("location", f"{redirect}?{urlencode(answer)}")])

    def _token(self, request: HttpRequest, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        client_id = self._authenticated(request, form)
        if client_id is None:
            return 401, {"error": "invalid_client"}
        with self._lock:
            if form.get("grant_type") == "authorization_code":
                asked = self.codes.pop(form.get("code", ""), None)
                if asked is None or asked["client_id"] != client_id or asked["redirect_uri"] != form.get(
                        "redirect_uri") or _s256(form.get("code_verifier", "")) != asked["code_challenge"]:
                    return 400, {"error": "invalid_grant"}
                if form.get("resource") != asked.get("resource"):
                    return 400, {"error": "invalid_target"}
                granted = tuple(s for s in asked.get("scope", "").split() if s != self.options.withhold_scope)
                return 200, self._issue(client_id, granted, asked["resource"])
            if form.get("grant_type") == "refresh_token":
                old = self.refresh_tokens.pop(form.get("refresh_token", ""), None)
                if old is None or old.client_id != client_id or form.get("resource") != old.resource:
                    return 400, {"error": "invalid_grant"}
                return 200, self._issue(client_id, old.scopes, old.resource)
        return 400, {"error": "unsupported_grant_type"}

    def _authenticated(self, request: HttpRequest, form: dict[str, str]) -> str | None:
        """The client the token request authenticates as, by its registered method."""
        basic = request.header("authorization") or ""
        with self._lock:
            if basic.lower().startswith("basic "):
                pair = base64.b64decode(basic[6:]).decode()
                client_id, _, secret = (unquote_plus(part) for part in pair.partition(":"))
                client = self.clients.get(client_id)
                ok = client is not None and client["token_endpoint_auth_method"] == "client_secret_basic" \
                    and client.get("client_secret") == secret
                return client_id if ok else None
            client = self.clients.get(form.get("client_id", ""))
            if client is None:
                return None
            method = client["token_endpoint_auth_method"]
            if method == "client_secret_post" and form.get("client_secret") == client.get("client_secret"):
                return str(client["client_id"])
            return str(client["client_id"]) if method == "none" and "client_secret" not in form else None

    def _issue(self, client_id: str, scopes: tuple[str, ...], resource: str) -> dict[str, Any]:
        """New tokens (under the lock)."""
        access = f"at-{secrets.token_urlsafe(24)}{self.options.token_suffix}"
        lifetime = self.options.token_lifetime
        self.tokens[access] = _Token(client_id, scopes, time.time() + lifetime, resource)
        answer: dict[str, Any] = {"access_token": access, "token_type": "Bearer", "expires_in": lifetime,
                                  "scope": " ".join(scopes)}
        if self.options.refresh_tokens:
            refresh = f"rt-{secrets.token_urlsafe(24)}"
            self.refresh_tokens[refresh] = _Token(client_id, scopes, 0.0, resource)
            answer["refresh_token"] = refresh
        self._spent.extend(answer[k] for k in ("access_token", "refresh_token") if k in answer)
        return answer

    # -- the protected MCP server ---------------------------------------------------------

    def resource_metadata(self) -> dict[str, Any]:
        document: dict[str, Any] = {"resource": self.options.resource or self.mcp_url,
                                    "authorization_servers": [self.issuer]}
        if self.options.scopes_supported is not None:
            document["scopes_supported"] = self.options.scopes_supported
        return document

    async def _protected(self, request: HttpRequest, http: HttpResponder) -> None:
        with self._lock:
            self.seen_by_mcp.append(Seen(request.method, request.path, {}, dict(request.headers)))
        if request.path == self.options.prm_path:
            await _send_json(http, 200, self.resource_metadata())
            return
        if request.path.startswith("/.well-known/"):
            await _send_json(http, 404, {"error": "not_found"})
            return
        token = self._valid_token(request.header("authorization"))
        prm = f"{self.mcp_url.rsplit('/mcp', 1)[0]}{self.options.prm_path}"
        if token is None:
            challenge = f'Bearer resource_metadata="{prm}"'
            if self.options.challenge_scope:
                challenge += f', scope="{self.options.challenge_scope}"'
            if request.header("authorization"):
                challenge += ', error="invalid_token"'
            await http.send(401, [("www-authenticate", challenge), ("content-type", "text/plain")],
                            b"sign in first")
            return
        if self.options.forbid_calls and b'"tools/call"' in request.body:
            said = f"token {request.header('authorization')} may not call tools".encode()
            await http.send(403, [("content-type", "text/plain")], said)
            return
        need = self.options.call_scope
        if need and need not in token.scopes and b'"tools/call"' in request.body:
            challenge = f'Bearer error="insufficient_scope", scope="{need}", resource_metadata="{prm}"'
            await http.send(403, [("www-authenticate", challenge)], b"")
            return
        await self._endpoint.handle(request, http)

    def _valid_token(self, header: str | None) -> _Token | None:
        if not header or not header.lower().startswith("bearer "):
            return None
        with self._lock:
            token = self.tokens.get(header[7:].strip())
        if token is None or token.expires_at <= time.time() or token.resource != self.mcp_url:
            return None
        return token


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


async def _send_json(http: HttpResponder, status: int, value: Any) -> None:
    await http.send(status, _JSON, json.dumps(value).encode())
