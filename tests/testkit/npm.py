"""npm packages the tests drive (the Node reference file server, the MCP conformance suite),
installed once into ``.toolrelay-cache/<name>`` so that no run can leave a broken folder.

``npm install`` into a shared folder breaks when it is interrupted or runs twice at once
(npm ENOTEMPTY), and every later run then skipped or errored until the folder was
deleted by hand. Here each install goes into a fresh staging folder beside the target
and is renamed into place only when complete (a rename is atomic), under a lock so that
parallel test processes install once. A folder without the completion mark (left by an
older scheme, or by hand) is removed and installed again.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["install"]

_DONE = ".toolrelay-installed"
"""Written last into the staging folder: its presence means the install is whole."""


def install(prefix: Path, packages: Sequence[str], needed: Sequence[str]) -> Path | str:
    """``npm install PACKAGES`` into ``prefix`` (once); ``prefix``, or why it cannot be had.

    ``needed`` are paths under ``prefix`` that a whole install has (checked before use)."""
    if _complete(prefix, packages, needed):
        return prefix
    npm = shutil.which("npm")
    if npm is None:
        return f"npm not found on PATH: cannot install {' '.join(packages)}"
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with (prefix.parent / f".{prefix.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test process may be installing it now
        if _complete(prefix, packages, needed):
            return prefix
        for stale in prefix.parent.glob(f".{prefix.name}-staging-*"):  # an interrupted install
            shutil.rmtree(stale, ignore_errors=True)
        if prefix.exists():
            shutil.rmtree(prefix)  # half-written or from an older version: install afresh
        staging = Path(tempfile.mkdtemp(prefix=f".{prefix.name}-staging-", dir=prefix.parent))
        staging.chmod(0o755)  # mkdtemp's 0700 would follow the folder into place
        try:
            why = _npm_install(npm, staging, packages, needed)
            if why is not None:
                return why
            staging.rename(prefix)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return prefix


def _complete(prefix: Path, packages: Sequence[str], needed: Sequence[str]) -> bool:
    mark = prefix / _DONE
    return (mark.exists() and mark.read_text() == "\n".join(packages)
            and all((prefix / path).exists() for path in needed))


def _npm_install(npm: str, staging: Path, packages: Sequence[str], needed: Sequence[str]) -> str | None:
    """Install into ``staging`` and mark it complete; None, or why it failed."""
    proc = subprocess.run(
        [npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund", "--loglevel=error", *packages],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    missing = [path for path in needed if not (staging / path).exists()]
    if proc.returncode != 0 or missing:
        return f"npm install {' '.join(packages)} failed: {proc.stderr.strip()[-500:] or f'no {missing}'}"
    (staging / _DONE).write_text("\n".join(packages))
    return None
