"""``toolrelay export TRANSCRIPT|BATCH_DIR --format chat|responses|evals [--only-verified]``:
one JSON line per run, for evaluation and training (``toolrelay.export``).

Exit 0 when rows were written (runs skipped by ``--only-verified`` are counted on stderr,
each with why), 2 when a path cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import UsageError

__all__ = ["configure", "run"]

EXAMPLES = """examples:
  toolrelay export run.jsonl --format chat                  one run as chat messages and tools
  toolrelay export out/ --format evals --only-verified -o evals.jsonl   a batch, verified runs only
  toolrelay export out/ --format responses                  input items and output items per run"""


def configure(parser: argparse.ArgumentParser) -> None:
    from ..export import FORMATS

    parser.add_argument("path", metavar="PATH", help="a transcript .jsonl or a batch folder")
    parser.add_argument("--format", choices=FORMATS, default="chat",
                        help="chat (default): messages and tools; responses: input and output items; "
                             "evals: OpenAI Evals item/sample rows")
    parser.add_argument("--only-verified", action="store_true",
                        help="leave out the runs whose transcript does not verify (counted on stderr)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the rows here (default stdout)")
    parser.epilog = EXAMPLES + "\n\n" + (parser.epilog or "")


def run(args: argparse.Namespace) -> int:
    from ..export import export_rows, transcripts_of

    path = Path(args.path)
    if not path.exists():
        raise UsageError(f"{path}: no such transcript or batch folder")
    paths = transcripts_of(path)
    exported = export_rows(paths, args.format, only_verified=args.only_verified, task_ids=path.is_dir())
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in exported.rows)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if exported.skipped:
        sys.stderr.write(f"toolrelay export: skipped {len(exported.skipped)} of {len(paths)} run(s) that do "
                         "not verify:\n")
        for skipped in exported.skipped:
            sys.stderr.write(f"  {skipped.path.name}: {skipped.why}\n")
    return 0
