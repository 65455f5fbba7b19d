"""toolrelay's own tool search: a ranked text search over the tools the offer chain offers.

Pure (no I/O, no network, no model): ``ToolIndex.build(entries)`` indexes each offered
tool's server name, tool name, title, description and parameter names; ``search(query,
limit)`` returns the best ``SearchHit``s (alias, server, tool, score), best first. The
catalog builds its index from the offered tools only (``Catalog.search_index``), so a
tool the chain withholds (the config's ``deny``, a filter, ...) can never be found.

Ranking is BM25 (k1 1.2, b 0.75) over one bag of words per tool, each field's words
counted with a weight (a tool's own name says more than its description). Words are split
at snake_case, camelCase, kebab-case, dots and slashes, lower-cased, common English
function words dropped, and reduced by a few suffix rules (``issues``, ``listing``,
``created`` → ``issu``, ``list``, ``creat``), the same for the query and the tools.

Why our own: every (word, tool) weight is computed once at build time into an inverted
index, so a query only adds up the postings of its words; rank-bm25 scores every document
per query (bench/search_bench.py, 10,000 tools: p99 22 ms against 1.4 ms here) and needs
numpy, and a search engine library would be a dependency for ~200 lines.
"""

from __future__ import annotations

import functools
import heapq
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "DEFAULT_LIMIT",
    "SearchEntry",
    "SearchHit",
    "ToolIndex",
    "entry_for",
    "query_terms",
    "terms",
]

DEFAULT_LIMIT: Final = 5
"""How many tools a search returns when no limit is given."""

_K1: Final = 1.2
_B: Final = 0.75
_FIELD_WEIGHTS: Final = {"tool": 3.0, "title": 2.0, "server": 2.0, "parameters": 1.0, "description": 1.0}
_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W\d_a-zA-Z]+")
"""Runs of capitals (``HTTP``), capitalised or lower-case words (``Server``, ``file``),
numbers, and runs of other letters (non-ASCII scripts): camelCase splits, separators drop."""
_STOPWORDS: Final = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "i", "in",
    "into", "is", "it", "its", "me", "my", "of", "on", "or", "that", "the", "this", "to", "was",
    "what", "when", "which", "with", "you", "your"
})
_MAX_PARAMETER_DEPTH: Final = 3
"""How deep nested object parameters are read for their names."""


def _stem(word: str) -> str:
    """A few suffix rules, enough to meet plurals and verb forms halfway (not Porter)."""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) >= 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


@functools.lru_cache(maxsize=8192)
def _term(word: str) -> str:
    """A word as indexed ("" for a function word); cached: a catalog repeats its words."""
    lowered = word.lower()
    if lowered in _STOPWORDS or (len(lowered) == 1 and not lowered.isdigit()):  # the s of "what's"
        return ""
    return _stem(lowered)


def terms(text: str) -> list[str]:
    """The indexed words of a text, in order, repeats kept."""
    return [term for term in map(_term, _WORDS.findall(text)) if term]


def query_terms(query: str) -> list[str]:
    """The distinct words a query searches for (empty: nothing to search for)."""
    return list(dict.fromkeys(terms(query)))


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchEntry:
    """What the index knows of one offered tool."""

    alias: str
    server: str
    tool: str
    """The original MCP tool name."""
    title: str = ""
    description: str = ""
    parameters: tuple[str, ...] = ()
    """Its input schema's property names (nested objects' too)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchHit:
    """One tool a search found: where it lives, how well it matched."""

    alias: str
    server: str
    tool: str
    score: float
    title: str = ""
    description: str = ""

    @property
    def summary(self) -> str:
        """The description's first line."""
        return self.description.strip().split("\n", 1)[0]

    def to_record(self) -> dict[str, Any]:
        """One entry of ``toolrelay tools --search ... --json``."""
        return {"alias": self.alias, "server": self.server, "tool": self.tool, "score": round(self.score, 3),
                "title": self.title, "description": self.description}


def entry_for(alias: str, server: str, tool: Mapping[str, Any]) -> SearchEntry:
    """The entry of an MCP ``Tool`` as listed (title from ``title`` or ``annotations.title``)."""
    annotations = tool.get("annotations")
    title = tool.get("title") or (annotations.get("title") if isinstance(annotations, Mapping) else None)
    description = tool.get("description")
    return SearchEntry(
        alias=alias, server=server, tool=str(tool.get("name", "")),
        title=title if isinstance(title, str) else "",
        description=description if isinstance(description, str) else "",
        parameters=tuple(dict.fromkeys(_parameter_names(tool.get("inputSchema"), 0))),
    )


def _parameter_names(schema: Any, depth: int) -> Iterator[str]:
    if not isinstance(schema, Mapping) or depth >= _MAX_PARAMETER_DEPTH:
        return
    properties = schema.get("properties")
    for name, inner in properties.items() if isinstance(properties, Mapping) else ():
        yield str(name)
        yield from _parameter_names(inner, depth + 1)
    yield from _parameter_names(schema.get("items"), depth + 1)


def _weighted_terms(entry: SearchEntry) -> dict[str, float]:
    """term → its weighted count over the entry's fields."""
    fields = {"tool": entry.tool, "title": entry.title, "server": entry.server,
              "parameters": " ".join(entry.parameters), "description": entry.description}
    counts: dict[str, float] = {}
    for field, text in fields.items():
        weight = _FIELD_WEIGHTS[field]
        for term in terms(text):
            counts[term] = counts.get(term, 0.0) + weight
    return counts


class ToolIndex:
    """An inverted index of BM25 weights: term → {entry number: weight}."""

    def __init__(self, entries: tuple[SearchEntry, ...], postings: dict[str, dict[int, float]]) -> None:
        self._entries = entries
        self._postings = postings

    @classmethod
    def build(cls, entries: Iterable[SearchEntry]) -> ToolIndex:
        listed = tuple(entries)
        bags = [_weighted_terms(entry) for entry in listed]
        lengths = [sum(bag.values()) for bag in bags]
        average = (sum(lengths) / len(lengths)) if lengths and sum(lengths) else 1.0
        frequencies: dict[str, int] = {}
        for bag in bags:
            for term in bag:
                frequencies[term] = frequencies.get(term, 0) + 1
        count = len(listed)
        idf = {term: math.log(1.0 + (count - df + 0.5) / (df + 0.5)) for term, df in frequencies.items()}
        postings: dict[str, dict[int, float]] = {}
        for number, (bag, length) in enumerate(zip(bags, lengths, strict=True)):
            norm = _K1 * (1.0 - _B + _B * length / average)
            for term, tf in bag.items():
                postings.setdefault(term, {})[number] = idf[term] * tf * (_K1 + 1.0) / (tf + norm)
        return cls(listed, postings)

    @property
    def entries(self) -> tuple[SearchEntry, ...]:
        return self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def search(self, query: str, limit: int = DEFAULT_LIMIT) -> list[SearchHit]:
        """The ``limit`` best matches for ``query``, best first (ties: offer order); a tool
        that matches no word of the query is never returned."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1 (got {limit})")
        scores: dict[int, float] = {}
        for term in query_terms(query):
            found = self._postings.get(term)
            if found is None:
                continue
            if not scores:
                scores = dict(found)
                continue
            for number, weight in found.items():
                scores[number] = scores.get(number, 0.0) + weight
        best = heapq.nsmallest(limit, scores.items(), key=lambda item: (-item[1], item[0]))
        return [self._hit(number, score) for number, score in best]

    def _hit(self, number: int, score: float) -> SearchHit:
        entry = self._entries[number]
        return SearchHit(alias=entry.alias, server=entry.server, tool=entry.tool, score=score,
                         title=entry.title, description=entry.description)
