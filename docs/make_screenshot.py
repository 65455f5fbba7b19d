"""Regenerate docs/trace.png, the README's picture of ``toolrelay view``, from a real run.

    .venv/bin/python docs/make_screenshot.py            # writes docs/trace.png
    .venv/bin/python docs/make_screenshot.py --out x.png

It runs the seed's scenario for real with ``toolrelay demo`` (offline stand-in model, the
built-in file server reading notes.txt), draws the demo folder with ``toolrelay view``,
opens the page in the
system Chromium (headless, through Playwright), clicks the ``tools/call`` arrow so the
side panel shows that JSON-RPC request, and saves the visible window. It uses the view
tests' helpers (tests/view/helpers.py), so the picture comes from the same set-up the
tests check.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.view.helpers import chromium_context, demo, open_trace, view  # noqa: E402

VIEWPORT = {"width": 1760, "height": 1180}


def make_screenshot(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="toolrelay-screenshot-") as scratch:
        folder = Path(scratch)
        demo(folder)
        html = folder / "trace.html"
        proc = view("demo", "-o", str(html), cwd=folder)
        if proc.returncode != 0:
            raise SystemExit(f"toolrelay view failed: {proc.stderr}")
        with chromium_context(VIEWPORT) as context:
            opened = open_trace(context, html)
            page = opened.page
            page.click('section[data-group="setup"] .group-head')  # the call is the subject
            page.click('.row.msg[data-kind="mcp_request"]:has-text("tools/call")')
            page.wait_for_selector("#panel:not([hidden])")
            page.evaluate("window.scrollTo(0, 0)")
            page.mouse.move(0, 0)  # no hover highlight in the picture
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
            if opened.foreign_requests() or opened.errors:
                problems = [*opened.foreign_requests(), *opened.errors]
                raise SystemExit(f"the page fetched or logged something: {problems}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "trace.png", help="the PNG to write")
    make_screenshot(parser.parse_args().out)


if __name__ == "__main__":
    main()
