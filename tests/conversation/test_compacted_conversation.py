"""A conversation whose answers compact (``compact_at``): the next user turn goes on from
the compaction item, and the whole conversation verifies as one run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import toolrelay
from testkit.transcripts import transcript_events
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.verify import load_run, verify

READ = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt"}}


def test_a_user_turn_after_a_compacted_answer_goes_on_from_the_item(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("line 1\nline 2\n", encoding="utf-8")
    script = {"turns": [{"calls": [READ]}, {"message": "one", "compact": True}, {"calls": [READ]},
                        {"message": "two"}, {"calls": [READ], "compact": True}, {"message": "three"}]}
    (tmp_path / "script.json").write_text(json.dumps(script), encoding="utf-8")

    async def talk() -> list[str | None]:
        async with toolrelay.Conversation(model="offline", script=tmp_path / "script.json",
                                          config=[in_process_file_server(tmp_path)],
                                          transcript=tmp_path / "chat.jsonl", compact_at=1_000_000) as conv:
            return [(await conv.send(text)).final_text for text in ("first", "second", "third")]

    assert asyncio.run(talk()) == ["one", "two", "three"]
    verdict = verify(load_run(tmp_path / "chat.jsonl"))
    assert verdict.ok, verdict.broken
    said = [f.message for f in verdict.findings if f.check == "user_turn_context"]
    assert said[0].startswith("request 3 (user turn 2) goes on from the item of the compaction of turn 2 "
                              "(3 earlier item(s) left out), then the user's 1 new item(s)")
    requests = {e["turn"]: e["body"]["input"] for e in transcript_events(tmp_path / "chat.jsonl")
                if e["kind"] == "model_request"}
    # the compaction item, the answer "one", the user's second message
    assert [item.get("type") or item.get("role") for item in requests[3]] == ["compaction", "message", "user"]
    assert requests[6][0]["type"] == "compaction" and len(requests[6]) == 3  # compacted again at turn 5
    records = [(e["turn"], e["dropped"]) for e in transcript_events(tmp_path / "chat.jsonl")
               if e["kind"] == "compaction"]
    assert records == [(2, 3), (5, 7)]
