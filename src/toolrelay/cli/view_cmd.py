"""``toolrelay view PATH``: draw a run as one self-contained HTML sequence diagram.

PATH is a transcript (``--transcript FILE`` of ``run``) or a demo folder. The page shows
the lanes User · App · Model · one per MCP server, every model and JSON-RPC message as an
arrow, calls framed by call_id, and verify's findings on the arrows they name.

Exit codes: 0 when the page was written — also for a run whose links are broken, since
drawing it is this command's job (the broken link is named on stderr and highlighted in
the page; ``toolrelay verify`` is the command whose exit code judges the run); 2 when PATH
cannot be read as a run or the page cannot be written.
"""

from __future__ import annotations

import argparse
import sys
import webbrowser
from pathlib import Path

from ..verify import Verdict, load_run, verify
from ..view.build import build_trace
from ..view.model import Trace
from ..view.render import write_html
from .process_exit import keep_until_exit

__all__ = ["configure", "default_output", "run"]

EXAMPLES = """examples:
  toolrelay run "Read the first 20 lines of notes.txt" --model offline --transcript run.jsonl
  toolrelay view run.jsonl                  # writes run.html
  toolrelay view demo-out/ -o trace.html --open

The page is one file with no network access: open it anywhere, attach it to an issue.
Click an arrow to see the exact recorded JSON of that message."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="a transcript .jsonl or a demo folder")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="where to write the page (default: PATH with .html)")
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")
    parser.epilog = EXAMPLES + "\n\n" + (parser.epilog or "")


def default_output(path: Path) -> Path:
    """``run.jsonl`` → ``run.html``; a folder ``demo/`` → ``demo.html`` beside it."""
    return path.parent / (path.name + ".html") if path.is_dir() else path.with_suffix(".html")


def run(args: argparse.Namespace) -> int:
    source = Path(args.path)
    record = load_run(source)
    verdict = verify(record)
    trace = build_trace(record.events, verdict, source=str(source))
    keep_until_exit(record, verdict, trace)  # freed by the process's end, not one by one (process_exit)
    output = Path(args.output) if args.output else default_output(source)
    write_html(trace, output)
    _report(trace, verdict, output)
    if args.open and not webbrowser.open(output.resolve().as_uri()):
        sys.stderr.write(f"toolrelay view: could not open a browser; open {output.resolve().as_uri()}\n")
    return 0


def _report(trace: Trace, verdict: Verdict, output: Path) -> None:
    summary = trace.run
    sys.stderr.write(
        f"toolrelay view: wrote {output} ({summary.events} events: {summary.messages} messages, "
        f"{summary.turns} turn(s), {summary.calls} call(s))\n"
    )
    if verdict.broken is not None:
        sys.stderr.write(
            f"toolrelay view: verify found a broken link: {verdict.broken.link}: {verdict.broken.message} "
            "(highlighted in the page)\n"
        )
