"""Requests keep a stable prefix for the endpoint's prompt cache: two consecutive requests
of a run with the same tools are byte-identical (as sent: the recorded digests prove the
bytes) up to the first new input item: model, instructions, declarations, then the input.
``prompt_cache_key`` and ``prompt_cache_options`` are sent as asked, in valid bodies."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from testkit.openai_wire import check_body
from toolrelay.client.config import builtin_file_server
from toolrelay.relay.loop import RunLimits
from toolrelay.runner import RunOptions, run_async
from toolrelay.transcript.delta import wire_bytes, wire_digest
from toolrelay.transcript.reader import read_transcript

PREFIX_FIELDS = ["model", "instructions", "tools", "tool_choice", "parallel_tool_calls"]


def _run(root: Path, **options: Any) -> list[dict[str, Any]]:
    (root / "notes.txt").write_text("line 1\nline 2\n", encoding="utf-8")
    read = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 1}}
    turns = [{"calls": [read, read]}, {"calls": [read]}, {"message": "done"}]
    (root / "script.json").write_text(json.dumps({"turns": turns}), encoding="utf-8")
    opts = RunOptions(model="offline", script=root / "script.json", config=[builtin_file_server(root)],
                      transcript=root / "run.jsonl", instructions="Answer briefly.",
                      limits=RunLimits(max_turns=5), **options)
    assert asyncio.run(run_async("Read notes.txt", opts)).status == "completed"
    return [event for event in read_transcript(root / "run.jsonl").events if event["kind"] == "model_request"]


def _prefix(body: dict[str, Any], items: int) -> bytes:
    """The wire bytes of ``body`` up to its input item number ``items`` (the first new one)."""
    fields = list(body)
    head = {key: body[key] for key in fields[: fields.index("input")]}
    before = wire_bytes(head)[:-1]  # without the closing brace
    return before + b',"input":[' + b",".join(wire_bytes(item) for item in body["input"][:items])


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_consecutive_requests_share_a_byte_identical_prefix_up_to_the_first_new_item(
    tmp_path: Path, stream: bool
) -> None:
    requests = _run(tmp_path, stream=stream)
    assert len(requests) == 3
    for earlier, later in itertools.pairwise(requests):
        sent = [wire_bytes(event["body"]) for event in (earlier, later)]
        assert [wire_digest(content) for content in sent] == [earlier["body_sha256"], later["body_sha256"]]
        assert list(later["body"])[: len(PREFIX_FIELDS) + 1] == [*PREFIX_FIELDS, "input"]
        carried = len(earlier["body"]["input"])
        prefix = _prefix(later["body"], carried)
        assert sent[0].startswith(prefix) and sent[1].startswith(prefix)
        assert len(prefix) > len(wire_bytes({"tools": later["body"]["tools"]}))  # the declarations are in it
        new = wire_bytes(later["body"]["input"][carried])
        assert sent[1][len(prefix) + 1 :].startswith(new)  # after the comma: the first new item


def test_prompt_cache_key_and_options_are_sent_with_every_request(tmp_path: Path) -> None:
    options = {"mode": "implicit", "ttl": "12h"}
    requests = _run(tmp_path, prompt_cache_key="nightly/docs",
                    extra_body={"prompt_cache_options": options})
    for event in requests:
        body = event["body"]
        assert body["prompt_cache_key"] == "nightly/docs" and body["prompt_cache_options"] == options
        check_body(body)


def test_a_batch_tasks_default_key_is_the_batch_name_and_the_tasks_family() -> None:
    from toolrelay.batches.session import family_cache_key

    same = family_cache_key("nightly", RunOptions(model="gpt-4.1", instructions="Be brief."))
    assert same == family_cache_key("nightly", RunOptions(model="gpt-4.1", instructions="Be brief."))
    assert same.startswith("nightly/gpt-4.1-")
    assert same != family_cache_key("nightly", RunOptions(model="gpt-4.1", instructions="Be thorough."))
    assert same != family_cache_key("weekly", RunOptions(model="gpt-4.1", instructions="Be brief."))
