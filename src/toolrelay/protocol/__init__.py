"""The sans-IO wire core shared by the MCP client and server, and the Responses vocabulary.

``jsonrpc`` (decode, classify, encode), ``framing`` (newline-delimited messages with a size
cap), ``peer`` (requests paired with answers, timeouts, cancellation), ``mcp`` (method names
and param checks), ``versions`` (protocol revisions), ``era`` (the 2026-07-28 per-request
envelope, results and error codes), ``responses`` (Responses item and
part types), ``json_depth`` (JSON from outside with a nesting limit: every reader of
messages, bodies, answers, transcripts and config files uses it). No sockets, no
processes: transports live in client/ and server/.

The bottom layer: protocol/ imports only errors.py (and the standard library), never
another toolrelay package; every package may import it.
"""
