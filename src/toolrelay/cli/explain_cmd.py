"""``toolrelay explain PATH``: a run's call chain for a person, stage by stage.

Each turn, each call, each link in the order a fault is traced (model response → parse →
routing → server checks → feedback → correlation → next input) with its ids and values,
ok or broken; a broken link says what to check next. Exit codes as ``verify``.
"""

from __future__ import annotations

import argparse
import sys

from ..verify import load_run, verify
from ..verify.explain import COMPACT_AFTER, explain
from .process_exit import keep_until_exit

__all__ = ["configure", "run"]

EXAMPLES = """examples:
  toolrelay explain run.jsonl
  toolrelay explain toolrelay-demo
  toolrelay explain run.jsonl --all       every call in full, even in turns with many calls"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="a transcript .jsonl or a demo folder")
    parser.add_argument(
        "--all",
        action="store_true",
        help=f"show every call in full (turns with more than {COMPACT_AFTER} calls are "
        "otherwise one line per call, broken calls expanded)",
    )
    parser.epilog = EXAMPLES + "\n\n" + (parser.epilog or "")


def run(args: argparse.Namespace) -> int:
    record = load_run(args.path)
    verdict = verify(record)
    keep_until_exit(record, verdict)  # freed by the process's end, not one by one (process_exit)
    sys.stdout.write(explain(record, verdict, expand_all=args.all))
    return 0 if verdict.ok else 1
