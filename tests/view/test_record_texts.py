"""What the page shares between records (view/record_texts.py): the head and tail two
texts have in common, counted as JavaScript counts them, and the records written so."""

from __future__ import annotations

import random

import pytest

from toolrelay.view.record_texts import SHARED_AT_LEAST, page_records, shared_ends

from .helpers import read_as_the_page_does

_LETTERS = "ab\"{é😀\ud800"
"""ASCII, a quote, an accent, a character beyond the BMP, a lone surrogate (JSON can hold one)."""


def _shared_ends_slowly(before: str, after: str) -> tuple[int, int]:
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail, room = 0, min(len(before), len(after)) - head
    while tail < room and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    return head, tail


def test_shared_ends_agree_with_a_character_by_character_walk() -> None:
    chance = random.Random(29)
    for _ in range(5000):
        before = "".join(chance.choice(_LETTERS) for _ in range(chance.randint(0, 14)))
        middle = "".join(chance.choice(_LETTERS) for _ in range(chance.randint(0, 6)))
        cut, keep = chance.randint(0, len(before)), chance.randint(0, len(before))
        after = before[:cut] + middle + before[keep:] if chance.random() < 0.7 else middle
        assert shared_ends(before, after) == _shared_ends_slowly(before, after), (before, after)


def test_long_texts_are_compared_block_by_block_to_the_same_answer() -> None:
    chance = random.Random(2029)
    for _ in range(200):
        before = "".join(chance.choice("ab😀") for _ in range(chance.randint(0, 9000)))
        cut = chance.randint(0, len(before))
        keep = chance.randint(cut, len(before))
        middle = "".join(chance.choice("ab😀") for _ in range(chance.randint(0, 5)))
        after = before[:cut] + middle + before[keep:]
        assert shared_ends(before, after) == _shared_ends_slowly(before, after)
        assert shared_ends(after, before) == _shared_ends_slowly(after, before)


@pytest.mark.parametrize(("before", "after", "ends"), [
    ("", "", (0, 0)), ("abc", "abc", (3, 0)), ("abc", "abcd", (3, 0)), ("abcd", "abc", (3, 0)),
    ("xabc", "abc", (0, 3)), ("aXa", "aa", (1, 1)), ("aa", "aXa", (1, 1)),  # never overlapping
])
def test_shared_ends_never_overlap(before: str, after: str, ends: tuple[int, int]) -> None:
    assert shared_ends(before, after) == ends


def test_records_are_shared_by_key_and_join_back_in_javascripts_units() -> None:
    context = '{"input":[' + ",".join(f'{{"text":"turn {n} 😀 é"}}' for n in range(12))
    records = {1: context + "]}", 2: "unrelated", 3: context + ',{"text":"more 𝄞"}]}', 4: "short"}
    keys = {1: "model_request", 2: "other", 3: "model_request"}  # 4 has no key: its own
    page = page_records(records, keys)
    assert page[1] == records[1] and page[2] == "unrelated" and page[4] == "short"
    base, head, tail, middle = page[3]  # type: ignore[misc]
    assert (base, middle) == (1, ',{"text":"more 𝄞"}')
    assert head == len(context.encode("utf-16-le")) // 2 and tail == 2  # 😀 counts two
    joined = read_as_the_page_does({"groups": [], "defaults": {}, "records": page})["records"]
    assert joined == records


def test_a_text_sharing_little_is_written_whole() -> None:
    shared = "x" * (SHARED_AT_LEAST - 2)
    texts = [shared + "a", shared + "b", shared + "bz", shared + "bzq"]
    page = page_records(dict(enumerate(texts, 1)), dict.fromkeys(range(1, 5), "key"))
    assert page[2] == texts[1] and page[3] == texts[2]  # 62, then 63 shared: too few for a reference
    assert page[4] == [3, SHARED_AT_LEAST, 0, "q"]
