"""The MCP server runtime: ``app.ServerSession`` answers the lifecycle, ``tools/list`` and
``tools/call`` for a ``ToolService``; ``stdio.serve_stdio`` and ``http.serve_http``
(Streamable HTTP, on the asyncio + h11 server of ``http11``) carry it. ``modern.ModernServer``
answers the same service in MCP 2026-07-28 (no handshake, no session), on stdio through
the session and on HTTP through ``http_modern``'s single exchange.

Layering: server/ imports only protocol/ and the bottom modules (errors, loopback, ...);
never client/, relay/, model/, files/, the offline stand-in, runner, cli/, transcript/,
verify/ or view/. Services import server/, not the reverse.
"""
