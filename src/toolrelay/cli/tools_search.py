"""``toolrelay tools --search "QUERY" [--limit N] [--json]``: what a client tool search would
load for that query, best first, from the offered tools only (``relay/stages/tool_search.py``): a
table of alias, server, tool, score and the description's first line, or with ``--json``
the list of hits (alias, server, tool, score, title, description)."""

from __future__ import annotations

import argparse
import sys

from ..errors import UsageError
from ..relay.catalog import Catalog
from ..relay.stages.tool_search import DEFAULT_LIMIT, query_terms
from .common import positive_count, print_json, print_table

__all__ = ["add_search_options", "check_search_args", "print_search"]


def add_search_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--search", metavar="QUERY",
                        help="rank the offered tools for QUERY, as toolrelay's own tool search would "
                             "(with --json: the hits as a list)")
    parser.add_argument("--limit", type=positive_count, metavar="N",
                        help=f"with --search: how many tools to show (default {DEFAULT_LIMIT})")


def check_search_args(args: argparse.Namespace) -> None:
    """Refused before any server starts: a search without words, a limit below 1, flags that clash."""
    if args.search is None:
        if args.limit is not None:
            raise UsageError("--limit goes with --search QUERY")
        return
    if not query_terms(args.search):
        raise UsageError(f"--search needs words to look for (got {args.search!r})")
    clashing = [flag for flag, given in (("--all", args.all), ("--report", args.report)) if given]
    if clashing:
        raise UsageError(f"--search ranks the offered tools; it does not go with {' or '.join(clashing)}")


def print_search(catalog: Catalog, args: argparse.Namespace) -> None:
    index = catalog.search_index()
    hits = index.search(args.search, args.limit or DEFAULT_LIMIT)
    if args.json:
        print_json([hit.to_record() for hit in hits])
        return
    if not hits:
        sys.stdout.write(f"no offered tool matches {args.search!r} ({len(index)} tool(s) searched)\n")
        return
    print_table(("ALIAS", "SERVER", "TOOL", "SCORE", "DESCRIPTION"),
                [(hit.alias, hit.server, hit.tool, f"{hit.score:.2f}", hit.summary) for hit in hits])
    sys.stdout.write(f"\nthe {len(hits)} best of {len(index)} offered tool(s) for {args.search!r}\n")
