"""An HTTP answer that is a web page (``text/html``), where an MCP endpoint answers JSON or
an event stream: the URL is a web server's, not an MCP endpoint's (or a gateway's error
page stands in for the endpoint). The message says so in one line; the page itself, which
may run to hundreds of lines, goes to the server's log file (``stderr_log.py``), secrets
redacted."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from .config import ServerConfig
from .environment import redact
from .stderr_log import ServerLog

__all__ = ["HTML", "PageKeeper"]

HTML: Final = "text/html"
_GATEWAY_OR_AUTH: Final = frozenset({401, 403, 407, 408, 429, 500, 502, 503, 504})
"""Statuses whose page speaks for an endpoint that may well be MCP: signed out, throttled,
down behind a gateway. The rest (200, 404, 405, 501...) say this URL serves no MCP."""


class PageKeeper:
    """Where one server's web pages are kept, and what is said about them."""

    def __init__(self, config: ServerConfig, log_dir: Path | None) -> None:
        self.config = config
        self._log = ServerLog(config.name, log_dir)

    def said(self, status: int, reason: str, what: str, page: bytes) -> str:
        """The one line for ``page``, answered to ``what`` with ``status``; the page is kept."""
        name, target = self.config.name, self.config.target
        where = self._keep(f"HTTP {status} {reason} ({HTML}) to {what} from {target}:", page)
        kept = f"; its answer is kept in {where}" if where is not None else ""
        if status in _GATEWAY_OR_AUTH:
            return f"server {name} answered HTTP {status} {reason} to {what} with a web page{kept}"
        return f"server {name} at {target} is not an MCP endpoint (HTTP {status}, {HTML}){kept}"

    def _keep(self, header: str, page: bytes) -> Path | None:
        """Append ``page`` to the log file; its path, or None when it cannot be written."""
        if self._log.open(header) is not None:
            return None
        text = redact(page.decode("utf-8", "replace"), self.config.secrets)
        self._log.write(text.encode() + (b"" if text.endswith("\n") else b"\n"))
        self._log.close()
        return self._log.path
