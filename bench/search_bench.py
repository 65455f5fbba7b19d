"""Tool search: toolrelay's own index (``relay/stages/tool_search.py``) over the 500-tool catalog and
over 10,000 tools; per-query latency (p50, p99) and the index's build time.

The catalogs are ``tests/testkit/servers/catalog_server.py``'s: 20 servers × 25 tools (the
catalog the issue's start-up and loop figures use) and 400 servers (its variants) × 25 =
10,000. Each index is built from the listed MCP ``Tool`` objects as the catalog builds it
(``entry_for`` of each tool, then ``ToolIndex.build``), ``--builds`` times; then every one
of ``QUERIES`` (tasks as a user or a model would word them) runs ``--rounds`` times, in a
shuffled order each round, each timed alone (``perf_counter_ns``), with limit 5.
Goals: p99 < 2 ms per query at 500 tools and < 20 ms at 10,000; build < 50 ms at 500.

When ``rank_bm25`` is importable (it is not a pinned peer: ``pip install rank-bm25`` into
the bench venv), its ``BM25Okapi`` runs the same queries over the same words, beside it:
the library a Python project would reach for first.

    python bench/search_bench.py                  5 builds, 50 rounds (500), 10 rounds (10,000)
    BENCH_QUICK=1 python bench/search_bench.py    2 builds, 5 and 2 rounds
    options: --builds N, --rounds N, --json-out FILE
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from common import TEST_SERVERS, append_jsonl, arg_parser, print_table, quick, scaled

sys.path.insert(0, str(TEST_SERVERS))
import catalog_server  # a test server, run by path elsewhere; imported for its data

from toolrelay.relay.stages.alias import assign_aliases
from toolrelay.relay.stages.tool_search import SearchEntry, ToolIndex, entry_for, query_terms, terms

QUERIES = (
    "create a github issue", "open a pull request", "merge the pull request", "search code in the repo",
    "send a slack message to a channel", "react with an emoji", "schedule a meeting tomorrow",
    "find a free time slot for three people", "read the first lines of a file", "move a file",
    "run a SQL query", "explain the query plan", "send an email", "search my inbox for invoices",
    "share a drive file", "export a document to pdf", "transition the jira ticket to done",
    "create a notion page", "query a notion database", "assign a linear issue", "refund a payment",
    "list stripe customers", "get the stack trace of an error", "pod logs", "scale the deployment",
    "stop a docker container", "upload an object to s3", "presigned download url",
    "weather forecast for Paris", "air quality", "driving directions to the airport",
    "restaurants near me", "web search for news", "translate this text", "take a screenshot",
    "click the login button", "add a contact to the crm", "log a call with a customer",
    "delete a branch", "list my calendars",
)
SIZES = {"500": 20, "10,000": 400}
GOALS_MS = {"500": 2.0, "10,000": 20.0}
BUILD_GOAL_MS = 50.0


def listed(servers: int) -> list[tuple[str, str, dict[str, Any]]]:
    """(alias, server, Tool) for every tool of ``servers`` catalog servers, as listed."""
    tools = catalog_server.catalog(servers)
    aliases = assign_aliases([(server, tool["name"]) for server, found in tools.items() for tool in found])
    pairs = [(server, tool) for server, found in tools.items() for tool in found]
    return [(aliases[(server, tool["name"])], server, tool) for server, tool in pairs]


def build(tools: list[tuple[str, str, dict[str, Any]]]) -> ToolIndex:
    return ToolIndex.build(entry_for(alias, server, tool) for alias, server, tool in tools)


def timed_builds(tools: list[tuple[str, str, dict[str, Any]]], builds: int) -> list[float]:
    walls = []
    for _ in range(builds):
        started = time.perf_counter_ns()
        build(tools)
        walls.append((time.perf_counter_ns() - started) / 1e6)
    return walls


def timed_queries(search: Callable[[str], object], rounds: int) -> list[float]:
    """Milliseconds per query, every query ``rounds`` times in a shuffled order."""
    order = list(QUERIES)
    shuffle = random.Random(7).shuffle
    samples = []
    for _ in range(rounds):
        shuffle(order)
        for query in order:
            started = time.perf_counter_ns()
            search(query)
            samples.append((time.perf_counter_ns() - started) / 1e6)
    return samples


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def rank_bm25_search(entries: tuple[SearchEntry, ...]) -> Callable[[str], object] | None:
    """rank_bm25's BM25Okapi over the same words (its top 5 per query), if it is installed."""
    try:
        from rank_bm25 import BM25Okapi
    except ImportError:
        return None
    texts = (" ".join([e.server, e.tool, e.title, e.description, *e.parameters]) for e in entries)
    words = [terms(text) for text in texts]
    model = BM25Okapi(words)
    return lambda query: model.get_top_n(query_terms(query), entries, n=5)


def measure(label: str, servers: int, builds: int, rounds: int) -> dict[str, dict[str, float | None]]:
    tools = listed(servers)
    walls = timed_builds(tools, builds)
    index = build(tools)
    samples = timed_queries(lambda query: index.search(query, 5), rounds)
    found = sum(1 for query in QUERIES if index.search(query, 5))
    print(f"# {label} tools: {len(index)} indexed; {found} of {len(QUERIES)} queries found something",
          file=sys.stderr)
    table: dict[str, dict[str, float | None]] = {f"toolrelay @{label}": {
        "build_median_ms": statistics.median(walls), "query_p50_ms": percentile(samples, 0.5),
        "query_p99_ms": percentile(samples, 0.99), "query_max_ms": max(samples),
    }}
    peer = rank_bm25_search(index.entries)
    if peer is not None:
        started = time.perf_counter_ns()
        peer = rank_bm25_search(index.entries)
        built = (time.perf_counter_ns() - started) / 1e6
        assert peer is not None
        theirs = timed_queries(peer, max(1, rounds // 5))
        table[f"rank_bm25 @{label}"] = {"build_median_ms": built, "query_p50_ms": percentile(theirs, 0.5),
                                        "query_p99_ms": percentile(theirs, 0.99), "query_max_ms": max(theirs)}
    return table


def main() -> None:
    parser = arg_parser(__doc__)
    parser.add_argument("--builds", type=int, default=scaled(5, 2))
    parser.add_argument("--rounds", type=int, default=None,
                        help="rounds of every query (default 50 at 500 tools, 10 at 10,000)")
    parser.add_argument("--json-out", help="append the summary as one JSON line")
    args = parser.parse_args()
    table: dict[str, dict[str, float | None]] = {}
    for label, servers in SIZES.items():
        rounds = args.rounds or (scaled(50, 5) if servers == 20 else scaled(10, 2))
        table.update(measure(label, servers, args.builds, rounds))
    print_table(table, title="tool search (ms)")
    p99 = {label: table[f"toolrelay @{label}"]["query_p99_ms"] or 0.0 for label in GOALS_MS}
    verdicts = {f"p99 at {label} tools < {goal} ms": p99[label] < goal for label, goal in GOALS_MS.items()}
    verdicts[f"build at 500 tools < {BUILD_GOAL_MS} ms"] = (table["toolrelay @500"]["build_median_ms"]
                                                           or 0) < BUILD_GOAL_MS
    print()
    for goal, met in verdicts.items():
        print(f"{goal}: {'met' if met else 'MISSED'}")
    append_jsonl(args.json_out, {"bench": "search", "quick": quick(), "builds": args.builds, "ms": table,
                                 "goals_met": verdicts})


if __name__ == "__main__":
    main()
