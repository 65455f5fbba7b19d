"""``loopback_only()``: the command prefix that runs a program in a private network namespace
that has only loopback, for servers that listen on every interface (the conformance
suite's, server-everything's HTTP mode); none where the machine does not allow one."""

from __future__ import annotations

import functools
import shutil
import subprocess

__all__ = ["loopback_only"]


@functools.cache
def loopback_only() -> list[str]:
    """The prefix (``unshare -rn`` bringing ``lo`` up), or [] when unavailable: the servers
    then listen briefly on every interface."""
    unshare = shutil.which("unshare")
    if unshare is None or shutil.which("ip") is None:
        return []
    prefix = [unshare, "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=30)
    return prefix if probe.returncode == 0 else []
