"""The MCP client side: config files, stdio and Streamable HTTP transports, one ``Connection``
per server (``client.connection``). The catalog of tools is built on top of these."""
