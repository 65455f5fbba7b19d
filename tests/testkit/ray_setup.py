"""Ray for the ``--engine ray`` tests: installed into the test environment when it is
missing (as ``npm.py`` installs npm packages), and a local Ray as toolrelay starts one.

``ensure_ray()`` imports Ray, first running ``pip install RAY_REQUIREMENT`` (the version
range of the ``toolrelay[ray]`` extra) into this interpreter's environment under a lock,
so parallel test processes install once; it returns why when Ray cannot be had (the tests
skip, or fail under TOOLRELAY_REQUIRE_ALL=1). ``start_local_ray`` starts a Ray of the
tests' own: 2 CPUs, on 127.0.0.1 only, usage statistics off, no dashboard.
"""

from __future__ import annotations

import fcntl
import importlib
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .processes import run

__all__ = ["RAY_REQUIREMENT", "ensure_ray", "start_local_ray"]

RAY_REQUIREMENT = "ray>=2.40"
"""As pyproject.toml's ``ray`` extra."""


def _importable() -> bool:
    importlib.invalidate_caches()
    try:
        importlib.import_module("ray")
    except ImportError:
        return False
    return True


def ensure_ray(cache: Path) -> str | None:
    """None when Ray can be imported (installed now if need be), else why not."""
    if _importable():
        return None
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".ray-install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test process may be installing it now
        if _importable():
            return None
        try:
            pip = [sys.executable, "-m", "pip", "install", "-q", RAY_REQUIREMENT]
            proc = run(pip, timeout=900, text=True)
        except subprocess.TimeoutExpired:
            return f"pip install {RAY_REQUIREMENT} took more than 15 minutes"
        if proc.returncode != 0 or not _importable():
            return f"pip install {RAY_REQUIREMENT} failed: {proc.stderr.strip()[-500:]}"
    return None


def start_local_ray() -> Any:
    """A local Ray for this test process (as toolrelay's own: loopback only); the module."""
    from toolrelay.batches.ray_engine import import_ray

    ray = import_ray(local=True)
    # A short root: Ray's socket paths must fit in 107 bytes.
    temp = tempfile.mkdtemp(prefix="tr-ray-", dir="/tmp")
    ray.init(address="local", num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False, _temp_dir=temp, logging_level="WARNING")
    return ray
