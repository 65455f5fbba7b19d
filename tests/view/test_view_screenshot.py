"""docs/make_screenshot.py regenerates the README's picture from a real run."""

from __future__ import annotations

import struct
import subprocess
import sys

from conftest import require_or_skip

from .helpers import ARTIFACTS, REPO, chromium_path


def test_the_screenshot_script_draws_a_real_run() -> None:
    if chromium_path() is None:
        require_or_skip("chromium is not installed: cannot draw the README screenshot")
    out = ARTIFACTS / "trace-readme.png"
    out.unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, str(REPO / "docs" / "make_screenshot.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    header = out.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", header[16:24]) == (1760, 1180)  # the script's viewport
