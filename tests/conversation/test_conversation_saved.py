"""A conversation saved in one process goes on in another (a real subprocess), appending to
the same transcript, and verifies as one run; tampered copies of its transcript are
rejected at the user-turn boundary; a save that does not fit is refused with a reason."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conversation_helpers import (
    ANSWERS,
    QUESTIONS,
    Event,
    conversation_folder,
    events_of,
    first_broken,
    options,
    tampered,
    verdict_of,
)

import toolrelay
from testkit.dialect import Dialect
from testkit.processes import run
from toolrelay.errors import UsageError

SECOND_PROCESS = """
import asyncio, json, sys
from pathlib import Path
import toolrelay
from toolrelay.client.config import builtin_file_server

folder = Path(sys.argv[1])
api = sys.argv[3] if len(sys.argv) > 3 else "responses"

async def main():
    options = toolrelay.RunOptions(model="offline", script=folder / "script.json", stream=False,
                                   config=[builtin_file_server(folder)], api=api)
    async with toolrelay.Conversation.load(folder / "chat.json", options) as conv:
        reply = await conv.send(sys.argv[2])
        conv.save(folder / "chat.json")
        print(json.dumps({"answer": reply.final_text, "turns": conv.turns, "user_turns": conv.user_turns}))

asyncio.run(main())
"""


async def _first_two(folder: Path, **more: Any) -> None:
    async with toolrelay.Conversation(options(folder, **more)) as conv:
        for question in QUESTIONS[:2]:
            await conv.send(question)
        conv.save(folder / "chat.json")


@pytest.fixture(scope="module")
def saved_and_continued(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two user turns in this process, saved; the third in a second process, appended."""
    folder = conversation_folder(tmp_path_factory.mktemp("conversation"))
    asyncio.run(_first_two(folder))
    program = folder / "second.py"
    program.write_text(SECOND_PROCESS, encoding="utf-8")
    done = run([sys.executable, str(program), str(folder), QUESTIONS[2]], timeout=60, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"answer": ANSWERS[2], "turns": 5, "user_turns": 3}
    return folder


def test_a_conversation_saved_and_loaded_in_a_second_process_verifies_as_one_run(
    saved_and_continued: Path,
) -> None:
    events = events_of(saved_and_continued / "chat.jsonl")
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))  # numbered on, one file
    starts = [e for e in events if e["kind"] in ("run_start", "user_turn")]
    assert [(e["kind"], e.get("turn")) for e in starts] == [
        ("run_start", None), ("user_turn", 3), ("user_turn", 5)]
    handshakes = [e["connection"] for e in events if e["kind"] == "server_ready"]
    assert len(handshakes) == 2 and handshakes[1] > handshakes[0]  # the second process: a new connection
    verdict = verdict_of(saved_and_continued / "chat.jsonl")
    assert verdict.ok and verdict.finished, verdict.broken
    assert [f.message for f in verdict.findings if f.check == "user_turn_place"] == [
        f"user turn 2 (user_turn, seq {starts[1]['seq']}) starts at turn 3, after user turn 1 ended",
        f"user turn 3 (user_turn, seq {starts[2]['seq']}) starts at turn 5, after user turn 2 ended",
    ]
    saved = json.loads((saved_and_continued / "chat.json").read_text())
    assert (saved["turns"], saved["user_turns"], saved["transcript"]) == (5, 3, "chat.jsonl")


def test_a_chat_conversation_saved_and_loaded_in_a_second_process_verifies_as_one_run(tmp_path: Path) -> None:
    """The same, in the chat dialect (``api="chat"``): the saved context goes on as chat messages."""
    folder = conversation_folder(tmp_path / "chat")
    asyncio.run(_first_two(folder, api="chat"))
    program = folder / "second.py"
    program.write_text(SECOND_PROCESS, encoding="utf-8")
    done = run([sys.executable, str(program), str(folder), QUESTIONS[2], "chat"], timeout=60, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"answer": ANSWERS[2], "turns": 5, "user_turns": 3}
    events = events_of(folder / "chat.jsonl")
    sent = [e for e in events if e["kind"] == "model_request"]
    assert {e["dialect"] for e in sent} == {"chat"} and len(sent) == 5
    for event in sent:
        Dialect("chat").check(event["body"])
    said = [m["content"] for m in sent[-1]["body"]["messages"] if m["role"] == "user"]
    assert said == list(QUESTIONS)  # the second process replayed the first one's turns
    verdict = verdict_of(folder / "chat.jsonl")
    assert verdict.ok and verdict.finished, verdict.broken


def _turn_request(events: list[Event], turn: int) -> dict[str, Any]:
    body: dict[str, Any] = next(e["body"] for e in events
                                if e["kind"] == "model_request" and e["turn"] == turn)
    return body


def earlier_output_dropped(events: list[Event]) -> None:
    """The first call's output is left out of user turn 3's request (turn 5)."""
    items = _turn_request(events, 5)["input"]
    items.remove(next(i for i in items if i.get("type") == "function_call_output"))


def earlier_user_message_changed(events: list[Event]) -> None:
    _turn_request(events, 3)["input"][0]["content"] = "Delete notes.txt"


def user_message_not_the_recorded_one(events: list[Event]) -> None:
    """The user_turn record claims the user said something else than what was sent."""
    next(e for e in events if e["kind"] == "user_turn")["input"][0]["content"] = "something else"


def stray_item_before_the_message(events: list[Event]) -> None:
    items = _turn_request(events, 5)["input"]
    items.insert(len(items) - 1, {"role": "user", "content": "an injected message"})


def user_turn_renumbered(events: list[Event]) -> None:
    next(e for e in events if e["kind"] == "user_turn")["number"] = 4


def intermediate_answer_changed(events: list[Event]) -> None:
    next(e for e in events if e["kind"] == "run_end")["final_text"] = "Everything is fine."


def intermediate_usage_inflated(events: list[Event]) -> None:
    next(e for e in events if e["kind"] == "run_end")["usage"]["output_tokens"] += 100


def previous_turn_end_removed(events: list[Event]) -> None:
    """User turn 1 never ended, yet user turn 2 started (the lines numbered again)."""
    events.remove(next(e for e in events if e["kind"] == "run_end"))
    for seq, event in enumerate(events, start=1):
        event["seq"] = seq


CASES = [
    (earlier_output_dropped, "next_input", "user_turn_context",
     "request 5 (user turn 3) dropped function_call_output call_offline_0001 (input[2] of request 4): "
     "a later user turn must carry every earlier turn's items unchanged"),
    (earlier_user_message_changed, "next_input", "context", "request 4 changed message user"),
    (user_message_not_the_recorded_one, "next_input", "user_turn_context",
     "request 3 (user turn 2) does not end with the 1 item(s) its user_turn record adds"),
    (stray_item_before_the_message, "next_input", "user_turn_context",
     "request 5 (user turn 3) adds message user between the carried context and the user's message: "
     "only outputs of response 4's calls may come there"),
    (user_turn_renumbered, "correlation", "user_turn_place",
     "is numbered 4, but it is user turn 2 of the conversation"),
    (intermediate_answer_changed, "model_response", "user_turn_answer",
     "user turn 1's answer, \"Everything is fine.\", is not the text of its last response (turn 2)"),
    (intermediate_usage_inflated, "model_response", "user_turn_usage",
     "user turn 1's run_end claims the tokens"),
    (previous_turn_end_removed, "correlation", "user_turn_place", "starts before user turn 1 ended"),
]


@pytest.mark.parametrize(("change", "link", "check", "said"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_tampered_conversation_is_rejected(
    saved_and_continued: Path, tmp_path: Path, change: Any, link: str, check: str, said: str
) -> None:
    copy = tampered(saved_and_continued / "chat.jsonl", tmp_path / "chat.jsonl", change)
    broken_link, broken_check, message = first_broken(verdict_of(copy))
    assert (broken_link, broken_check) == (link, check), message
    assert said in message


def test_the_untouched_copy_passes(saved_and_continued: Path, tmp_path: Path) -> None:
    copy = tampered(saved_and_continued / "chat.jsonl", tmp_path / "chat.jsonl", lambda events: None)
    assert verdict_of(copy).ok


def test_loading_in_the_other_context_mode_is_refused(saved_and_continued: Path) -> None:
    with pytest.raises(UsageError) as failed:
        toolrelay.Conversation.load(saved_and_continued / "chat.json", model="offline", chain=True)
    assert str(failed.value) == (f"{saved_and_continued / 'chat.json'} was saved in replay mode and these "
                                 "options are chain mode: load it with chain=False")


def test_a_transcript_that_went_on_after_the_save_is_refused(tmp_path: Path) -> None:
    folder = conversation_folder(tmp_path)

    async def save_then_go_on() -> None:
        async with toolrelay.Conversation(options(folder)) as conv:
            await conv.send(QUESTIONS[0])
            conv.save(folder / "chat.json")
            await conv.send(QUESTIONS[1])

    asyncio.run(save_then_go_on())
    with pytest.raises(UsageError) as failed:
        toolrelay.Conversation.load(folder / "chat.json", model="offline")
    assert str(failed.value) == (
        f"{folder / 'chat.jsonl'} went on after {folder / 'chat.json'} was saved (it records 4 model turn(s) "
        "ended, the save 2): save the conversation after its last turn")


def test_another_runs_transcript_is_refused(saved_and_continued: Path, tmp_path: Path) -> None:
    other = conversation_folder(tmp_path)
    toolrelay.run("x", model="offline", transcript=other / "other.jsonl", config=options(other).config)
    with pytest.raises(UsageError, match=r"records run \w+, but .* saved run \w+: pass the conversation's "
                                         r"own transcript$"):
        toolrelay.Conversation.load(saved_and_continued / "chat.json", model="offline",
                                    transcript=other / "other.jsonl")


@pytest.mark.parametrize(("text", "said"), [
    ("not json", "is not a saved conversation: it is not JSON"),
    ('{"turns": 2}', 'is not a saved conversation (conv.save writes one, with "format": '
                     '"toolrelay.conversation/1")'),
    ('{"format": "toolrelay.conversation/1", "run_id": "x"}', "is not a saved conversation toolrelay wrote: "
                                                             "KeyError('history')"),
])
def test_a_file_that_is_no_saved_conversation_is_refused(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "chat.json"
    path.write_text(text)
    with pytest.raises(UsageError) as failed:
        toolrelay.Conversation.load(path, model="offline")
    assert str(failed.value).startswith(f"{path} {said}")


def test_a_missing_save_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^cannot read the saved conversation .*missing\.json: "):
        toolrelay.Conversation.load(tmp_path / "missing.json")


def test_view_draws_each_user_turn_as_a_task_row(saved_and_continued: Path) -> None:
    from toolrelay.view.build import build_trace

    record = toolrelay.load_run(saved_and_continued / "chat.jsonl")
    trace = build_trace(record.events, toolrelay.verify(record), source="chat.jsonl")
    tasks = [(row.label, row.detail) for row in trace.rows() if row.stage == "task"]
    assert tasks == [
        (QUESTIONS[0], "model offline · context replay"),
        (QUESTIONS[1], "user turn 2 of the conversation, at turn 3"),
        (QUESTIONS[2], "user turn 3 of the conversation, at turn 5"),
    ]
    turns = [group.title for group in trace.groups if group.kind == "turn"]
    assert turns == [f"Turn {n}" for n in range(1, 6)]
