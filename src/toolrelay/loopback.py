"""Is a host this machine only? One answer for the HTTP server's bind warning and the
model client's "never proxy loopback" and "key over plain http" rules. And how a host is
written in a URL or message (an IPv6 address in brackets)."""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback", "url_host"]


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1; IPv6 brackets allowed)."""
    bare = host.strip().lower()
    if bare.startswith("[") and bare.endswith("]"):
        bare = bare[1:-1]
    if bare == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def url_host(host: str) -> str:
    """``host`` as written before ``:PORT`` in a URL: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
