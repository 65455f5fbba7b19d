"""``toolrelay.Conversation``: user turns that continue with the full context, servers kept
open, one transcript that ``verify`` judges as one run (in both model dialects: ``api="chat"``
replays the context as chat messages), and its misuse."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conversation_helpers import (
    ANSWERS,
    QUESTIONS,
    conversation_folder,
    events_of,
    options,
    requests,
    verdict_of,
)

import toolrelay
from testkit.dialect import Dialect
from toolrelay.errors import UsageError


async def _talk(folder: Path, *, chain: bool = False, api: str = "responses") -> list[toolrelay.RunResult]:
    async with toolrelay.Conversation(options(folder, chain=chain, api=api)) as conv:
        replies = [await conv.send(question) for question in QUESTIONS]
        assert (conv.turns, conv.user_turns) == (5, 3)
        assert conv.usage == toolrelay_sum([reply.usage for reply in replies])
        assert conv.results == replies
    return replies


def toolrelay_sum(counts: list[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for one in counts:
        for key, value in one.items():
            total[key] = total.get(key, 0) + value
    return total


@pytest.mark.parametrize(("chain", "dialect"), [(False, "responses"), (True, "responses"), (False, "chat")],
                         ids=["replay", "chain", "chat"], indirect=["dialect"])
def test_three_user_turns_continue_and_verify_as_one_run(
    tmp_path: Path, chain: bool, dialect: Dialect
) -> None:
    folder = conversation_folder(tmp_path)
    replies = asyncio.run(_talk(folder, chain=chain, api=dialect.api))
    assert [(r.status, r.final_text, r.turns) for r in replies] == [
        ("completed", ANSWERS[0], 2), ("completed", ANSWERS[1], 2), ("completed", ANSWERS[2], 1)]
    assert [[c.status for c in r.calls] for r in replies] == [["ok"], ["ok"], []]
    assert all(r.usage.get("total_tokens", 0) > 0 for r in replies)
    assert (replies[0].calls[0].result or {})["content"][0]["text"] == "alpha\nbeta\ngamma\n"
    events = events_of(folder / "chat.jsonl")
    assert [e["kind"] for e in events].count("run_start") == 1
    starts = [(e["number"], e["turn"], e["task"]) for e in events if e["kind"] == "user_turn"]
    assert starts == [(2, 3, QUESTIONS[1]), (3, 5, QUESTIONS[2])]
    assert len({e["run"] for e in events}) == 1
    # the servers stayed open: one handshake for the whole conversation
    assert sum(1 for e in events if e["kind"] == "server_ready") == 1
    sent = requests(events)
    for body in sent.values():
        dialect.check(body)
    assert {e["dialect"] for e in events if e["kind"] == "model_request"} == {dialect.api}
    bodies = {turn: dialect.request(body) for turn, body in sent.items()}
    first_of_turn_3 = bodies[5]
    if chain:
        assert first_of_turn_3["previous_response_id"] == next(
            e["body"]["id"] for e in events if e["kind"] == "model_response" and e["turn"] == 4)
        assert first_of_turn_3["input"] == [{"role": "user", "content": QUESTIONS[2]}]
    else:
        said = [item.get("content") for item in first_of_turn_3["input"] if item.get("role") == "user"]
        assert said == list(QUESTIONS)  # every earlier user message, in order
        outputs = [item for item in first_of_turn_3["input"] if item.get("type") == "function_call_output"]
        assert len(outputs) == 2  # both earlier calls' outputs
    verdict = verdict_of(folder / "chat.jsonl")
    assert verdict.ok and verdict.finished, verdict.broken
    held = {f.check for f in verdict.findings if f.ok}
    assert {"user_turn_place", "user_turn_answer", "user_turn_usage", "user_turn_context"} <= held
    context = [f.message for f in verdict.findings if f.check == "user_turn_context"]
    assert len(context) == 2 and all("user turn" in message for message in context)


def test_a_sync_conversation_keeps_its_servers_between_sends(tmp_path: Path) -> None:
    folder = conversation_folder(tmp_path)
    with toolrelay.SyncConversation(options(folder)) as conv:
        first = conv.send(QUESTIONS[0])
        second = conv.send(QUESTIONS[1])
        assert len(conv.conversation.items) == 8  # per user turn: its message, a call, its output, the answer
    assert (first.final_text, second.final_text) == ANSWERS[:2]
    assert verdict_of(folder / "chat.jsonl").ok


def test_stream_yields_each_user_turn_as_it_happens(tmp_path: Path) -> None:
    folder = conversation_folder(tmp_path)

    async def watch() -> list[list[str]]:
        kinds = []
        async with toolrelay.Conversation(options(folder)) as conv:
            for question in QUESTIONS[:2]:
                kinds.append([event.kind async for event in conv.stream(question)])
        return kinds

    for kinds in asyncio.run(watch()):
        assert kinds[-1] == "run_finished" and "call_finished" in kinds and "text_done" in kinds


def test_stream_still_tells_the_options_on_event_each_event(tmp_path: Path) -> None:
    folder = conversation_folder(tmp_path)
    heard: list[object] = []

    async def watch() -> list[object]:
        async with toolrelay.Conversation(options(folder, on_event=heard.append)) as conv:
            return [event async for event in conv.stream(QUESTIONS[0])]

    streamed = asyncio.run(watch())
    assert heard == streamed and isinstance(streamed[-1], toolrelay.RunFinished)  # the same events, in order


def test_a_misspelt_option_names_the_right_one() -> None:
    with pytest.raises(UsageError) as failed:
        toolrelay.Conversation(modle="offline")  # type: ignore[call-arg]
    assert str(failed.value).startswith("Conversation() has no option 'modle': did you mean 'model'? ")


def test_a_closed_conversation_says_how_to_go_on(tmp_path: Path) -> None:
    folder = conversation_folder(tmp_path)

    async def after_close() -> None:
        conv = toolrelay.Conversation(options(folder))
        await conv.send(QUESTIONS[0])
        await conv.close()
        await conv.send(QUESTIONS[1])

    with pytest.raises(UsageError, match=r"^this conversation was closed: save it before closing, then "
                                         r"Conversation.load\(path\) to go on$"):
        asyncio.run(after_close())


def test_the_sync_form_inside_an_event_loop_points_to_the_async_one() -> None:
    async def inside() -> None:
        toolrelay.SyncConversation(model="offline").send("x")

    with pytest.raises(UsageError) as failed:
        asyncio.run(inside())
    assert str(failed.value) == (
        "toolrelay.SyncConversation cannot run inside a running event loop (async code, Jupyter): "
        "use `async with toolrelay.Conversation(...)` there")


def test_the_catalog_is_there_only_while_open() -> None:
    with pytest.raises(UsageError, match=r"not open: `await conv.open\(\)` or `async with` it first$"):
        toolrelay.Conversation(model="offline").catalog  # noqa: B018


def test_the_stand_ins_script_counts_a_later_user_message_as_the_next_turn() -> None:
    from toolrelay.offline.turns import request_turn

    asked = {"role": "user", "content": "q"}
    call = {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "x"}
    answer = {"type": "message", "id": "msg_1", "role": "assistant", "content": []}
    prompt = [asked, {"role": "assistant", "content": "a prompt's"}, asked]  # no ids: input, not answers
    assert request_turn(prompt) == 1
    assert request_turn([asked, call, output]) == 2
    assert request_turn([asked, call, output, answer, asked]) == 3
    assert request_turn([asked, answer, asked, call, output]) == 3
    assert request_turn([asked, call, output, asked]) == 3  # a turn stopped after its calls, then the user
    said = {"role": "assistant", "content": "done"}  # a chat request's replayed answer: no id
    assert request_turn([asked, call, output, said, asked]) == 3
    assert request_turn([asked, said, asked]) == 1  # without the stand-in's ledger: a prompt's


def test_one_message_at_a_time(tmp_path: Path) -> None:
    folder = conversation_folder(tmp_path)

    async def both_at_once() -> None:
        async with toolrelay.Conversation(options(folder)) as conv:
            first = asyncio.ensure_future(conv.send(QUESTIONS[0]))
            await asyncio.sleep(0)  # the first one has begun
            try:
                await conv.send(QUESTIONS[1])
            finally:
                assert (await first).final_text == ANSWERS[0]

    with pytest.raises(UsageError, match=r"^a conversation takes one message at a time: await the previous"):
        asyncio.run(both_at_once())


def test_function_tools_serve_every_user_turn(tmp_path: Path) -> None:
    @toolrelay.tool(read_only=True)
    def shout(text: str) -> str:
        """Say the text louder."""
        return text.upper()

    folder = conversation_folder(tmp_path, [
        {"calls": [{"name": "py__shout", "arguments": {"text": "one"}}]}, {"message": "ONE."},
        {"calls": [{"name": "py__shout", "arguments": {"text": "two"}}]}, {"message": "TWO."},
    ])
    with toolrelay.SyncConversation(options(folder, tools=[shout])) as conv:
        replies = [conv.send("shout one"), conv.send("shout two")]
    assert [(r.final_text, r.calls[0].server, r.calls[0].status) for r in replies] == [
        ("ONE.", "py", "ok"), ("TWO.", "py", "ok")]
    assert verdict_of(folder / "chat.jsonl").ok
