"""``toolrelay verify PATH``: check a transcript or a demo folder link by link.

Exit 0 when every recorded link holds (an unfinished run included: it is reported, not
failed, unless ``--require-finished``); 1 naming the first broken link in the order below,
with the ids involved, or (``--require-finished``) a run that did not end normally; 2 when
PATH cannot be read as a transcript or demo folder.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..verify import LINKS, Finding, Verdict, load_run, verify
from .process_exit import keep_until_exit

__all__ = ["configure", "run"]

EXAMPLES = """examples:
  toolrelay verify run.jsonl              a transcript (toolrelay run --transcript run.jsonl)
  toolrelay verify toolrelay-demo         a demo folder: its message files themselves are checked
  toolrelay verify run.jsonl --all        every check, not only the broken ones
  toolrelay verify run.jsonl --json
  toolrelay verify run.jsonl --require-finished   in CI: a run cut short or stopped early fails
  toolrelay verify run.jsonl --otel spans.jsonl   the run's trace (run --otel-file) agrees, call by call

links, in the order a fault is traced: """ + " → ".join(LINKS)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="a transcript .jsonl or a demo folder")
    parser.add_argument("--all", action="store_true", help="list every check that holds, too")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    parser.add_argument("--require-finished", action="store_true",
                        help="exit 1 unless the run ended normally (run_end recorded with status completed), "
                             "saying why on stderr")
    parser.add_argument("--otel", metavar="FILE",
                        help="also hold the run's OpenTelemetry trace (OTLP JSON lines, e.g. from "
                             "--otel-file) to the transcript, call by call")
    parser.epilog = EXAMPLES + "\n\n" + (parser.epilog or "")


def run(args: argparse.Namespace) -> int:
    record = load_run(args.path)
    verdict = verify(record)
    keep_until_exit(record, verdict)  # freed by the process's end, not one by one (process_exit)
    if args.otel is not None:
        from ..verify.otel_trace import check_trace, read_spans, with_trace

        verdict = with_trace(verdict, check_trace(record, read_spans(args.otel), args.otel))
    if args.json:
        sys.stdout.write(json.dumps(verdict.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(report(verdict, every=args.all))
    if not verdict.ok:
        return 1
    if args.require_finished and verdict.run_status != "completed":
        sys.stderr.write(f"toolrelay verify: the run did not end normally: {_not_ended(verdict)}\n")
        return 1
    return 0


def _not_ended(verdict: Verdict) -> str:
    """The first reason: no run_end, or the status it ended with (unfinished lists it first)."""
    return verdict.unfinished[0] if verdict.unfinished else f"it ended {verdict.run_status}"


def _ids(finding: Finding) -> str:
    parts = [
        f"turn {finding.turn}" if finding.turn is not None else "",
        f"call_id {finding.call_id}" if finding.call_id else "",
        f"mcp id {finding.mcp_id}" if finding.mcp_id is not None else "",
        f"server {finding.server}" if finding.server else "",
        f"seq {','.join(map(str, finding.seqs))}" if finding.seqs else "",
    ]
    shown = ", ".join(p for p in parts if p)
    return f" ({shown})" if shown else ""


def report(verdict: Verdict, *, every: bool = False) -> str:
    """The verdict as text: the first broken link first, then the other problems."""
    lines = [f"verify {verdict.source}: run {verdict.run_id}, {verdict.run_status or 'no run_end'}"]
    if every:
        lines += [f"  {'ok' if f.ok else 'BROKEN':<6} {f.link:<14} {f.message}" for f in verdict.findings]
    if verdict.broken is not None:
        lines.append(f"BROKEN link: {verdict.broken.link}{_ids(verdict.broken)}")
        lines.append(f"  {verdict.broken.message}")
        others = [f for f in verdict.broken_findings() if f is not verdict.broken]
        lines += [f"  also broken: {f.link}: {f.message}" for f in others[:10]]
        if len(others) > 10:
            lines.append(f"  … and {len(others) - 10} more (see --all)")
    else:
        held = sum(1 for f in verdict.findings if f.ok)
        lines.append(f"ok: {held} checks hold across {' → '.join(LINKS)}")
    if verdict.inconsistencies():
        lines.append("the model endpoint contradicted itself (recorded, not a broken link):")
        lines += [f"  {f.message}" for f in verdict.inconsistencies()]
    if verdict.unfinished:
        lines.append("unfinished run (not a broken link):")
        lines += [f"  {reason}" for reason in verdict.unfinished]
    return "\n".join(lines) + "\n"
