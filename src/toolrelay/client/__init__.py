"""The MCP client side: config files, stdio and Streamable HTTP transports, one ``Connection``
per server (``client.connection``). The catalog of tools is built on top of these.

Layering: client/ imports only protocol/ and the bottom modules (errors, events, redaction,
loopback, _version); never relay/, model/, the offline stand-in, server/, files/, runner,
cli/, transcript/, verify/ or view/. What a call means to a run (parse, route, validate,
consent) is relay/'s; client/ only carries MCP messages.
"""
