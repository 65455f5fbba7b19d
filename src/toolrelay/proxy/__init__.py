"""``toolrelay proxy``: one MCP server that a host points at, fronting every server of a config.

Hosts (Claude Desktop, Cursor, VS Code, Claude Code, an SDK client) see every upstream
tool as ``server__tool`` (``offered.py``); each ``tools/call`` goes to the right server
with the host's arguments and comes back unchanged (``forward.py``), unless the pins or
the policy refuse it, which the host reads as a tool error naming the rule. Either MCP
era on the host side (the server stack's), whatever each upstream speaks (the client's).
Both legs are recorded, the host's JSON-RPC id paired with the upstream one
(``records.py``), so ``toolrelay verify`` can judge what the proxy passed on. A 2025-11-25
host that declares tasks has its own tasks passed through, under task ids of the proxy's
(``tasks.py``).

Layering: proxy/ sits beside runner/: it uses relay/ (the catalog, pins, policy),
client/ through it, server/ for the host side and transcript/; cli/ uses it.
It never imports runner/, assembly/ or the model client: a proxy has no model side.
"""

from __future__ import annotations

from .forward import Forwarder
from .serve import ProxySettings, run_proxy
from .service import ProxyService

__all__ = ["Forwarder", "ProxyService", "ProxySettings", "run_proxy"]
