"""OAuth sign-in for remote (Streamable HTTP) MCP servers: MCP authorization, client side.

A server that answers 401 names its Protected Resource Metadata (RFC 9728); from there
the authorization server's metadata (RFC 8414 / OpenID discovery), the client's
registration (pre-registered in the config, a Client ID Metadata Document, or Dynamic
Client Registration, RFC 7591), the authorization code with PKCE S256 and the
``resource`` indicator (RFC 8707), the token, its refresh, and a scope step-up on 403.

    settings.py     the ``"toolrelay": {"oauth": {...}}`` config block
    challenge.py    ``WWW-Authenticate`` read
    metadata.py     where the metadata documents are, and what makes one acceptable
    registration.py which client id to use, and the registration request
    tokens.py       token requests (basic / post / none) and their answers
    flow.py         sign-in and refresh as generators of steps (sans-IO)
    store.py        grants on disk, per server and authorization server, 0600
    policy.py       how a sign-in may happen here: headless, a person, or not at all
    loopback.py     the redirect listener on 127.0.0.1 (the one HTTP server stack)
    session.py      the transport's hook: the Bearer header, and what a 401 / 403 leads to

Layering: imports protocol/, httpserver.py, the bottom modules and client/ siblings;
never relay/, model/, server/, files/, runner or cli/. The browser and the terminal are
the CLI's (``policy.Presenter``); this package only asks through it. Importing the
package itself costs nothing: its modules are imported where they are used.
"""
