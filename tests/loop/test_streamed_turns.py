"""Early execution in the loop: a call starts as its item closes, while the model still writes.

The model is ``ScriptedStream`` at the loop's seam (its stream waits on the tool server
where a test needs a call to have started first: a loop that waited for the whole
response would hang there, and ``WAIT`` turns the hang into a failure); the tools are
served in process by ``Box``, through the real catalog and dispatch.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from stream_helpers import (
    Box,
    ScriptedStream,
    Told,
    Turn,
    call_item,
    done,
    ended,
    message_item,
    response,
    run_relay,
    text,
)

from toolrelay.assembly.catalogs import connect
from toolrelay.errors import ModelFeatureUnsupported, ModelStreamCut
from toolrelay.events import EventStream
from toolrelay.inprocess_servers import in_process_server
from toolrelay.relay.loop import Relay, RunLimits
from toolrelay.relay.run_events import (
    CallFinished,
    CallStarted,
    RunFinished,
    TextDelta,
    TextDone,
    TurnFinished,
)
from toolrelay.relay.stages.namespaces import DeclareMode
from toolrelay.relay.stages.request import RequestSettings

LOOK = call_item("call_look", "box__look", {"n": 1})
POKE = call_item("call_poke", "box__poke", {"n": 2})
ANSWER = message_item("all done", "msg_2")


def answer_turn() -> Turn:
    body = response(ANSWER, rid="resp_2")
    return Turn([text("all ", item_id="msg_2"), text("done", item_id="msg_2"), done(0, ANSWER), ended(body)],
                body)


def outputs(model: ScriptedStream, request: int) -> list[dict[str, Any]]:
    return [i for i in model.bodies[request]["input"] if i.get("type") == "function_call_output"]


# the same under --declare namespaces: the call names box's look inside namespace box
MODES = pytest.mark.parametrize(("declare", "look", "poke"), [
    ("flat", LOOK, POKE),
    ("namespaces", call_item("call_look", "box.look", {"n": 1}),
     call_item("call_poke", "box.poke", {"n": 2})),
])


@MODES
def test_a_read_only_call_runs_while_the_response_is_still_streaming(
    declare: DeclareMode, look: dict[str, Any], poke: dict[str, Any]
) -> None:
    box_log: list[str] = []
    box = Box(box_log)
    first = response(look, message_item("looking", "msg_1"))
    model = ScriptedStream([
        Turn([done(0, look), lambda: box.seen("look").wait(),  # held until the server has the call
              text("looking"), done(1, first["output"][1]), ended(first)], first),
        answer_turn(),
    ], log=box_log)
    run = run_relay(model, box, declare=declare)
    assert run.result is not None and run.result.status == "completed", run.result
    assert box_log[:2] == ["call look", "stream 1 ended"]
    assert [o["output"] for o in outputs(model, 1)] == ["look 1"]
    started = next(e for e in run.told if isinstance(e, CallStarted))
    assert started.early and started.call_id == "call_look"


@MODES
def test_a_tool_not_marked_read_only_waits_for_the_whole_response(
    declare: DeclareMode, look: dict[str, Any], poke: dict[str, Any]
) -> None:
    log: list[str] = []
    first = response(poke)
    model = ScriptedStream([Turn([done(0, poke), ended(first)], first), answer_turn()], log=log)
    run = run_relay(model, Box(log), declare=declare)
    assert log[:2] == ["stream 1 ended", "call poke"]
    assert [e.early for e in run.told if isinstance(e, CallStarted)] == [False]
    assert run.result is not None and run.result.completed


def test_early_all_starts_every_call_and_its_consent_question_does_not_hold_the_stream() -> None:
    log: list[str] = []
    box = Box(log)
    stream_over = asyncio.Event()
    asked = asyncio.Event()

    async def approve(route: Any, arguments: dict[str, Any]) -> str | None:
        asked.set()
        await stream_over.wait()  # a slow human: answers only once the stream has ended
        return None

    async def finish_stream() -> None:
        stream_over.set()

    first = response(POKE)
    model = ScriptedStream([
        Turn([done(0, POKE), asked.wait, finish_stream, ended(first)], first),
        answer_turn(),
    ], log=log)
    run = run_relay(model, box, limits=RunLimits(early="all"), approve=approve)
    assert run.result is not None and run.result.completed
    assert log[:2] == ["stream 1 ended", "call poke"]  # asked while streaming, run after the answer


def test_early_none_starts_nothing_before_the_response_is_complete() -> None:
    log: list[str] = []
    first = response(LOOK)
    model = ScriptedStream([Turn([done(0, LOOK), ended(first)], first), answer_turn()], log=log)
    run_relay(model, Box(log), limits=RunLimits(early="none"))
    assert log[:2] == ["stream 1 ended", "call look"]


def test_a_limit_on_tool_calls_keeps_every_call_waiting_for_the_whole_response() -> None:
    log: list[str] = []
    first = response(LOOK)
    model = ScriptedStream([Turn([done(0, LOOK), ended(first)], first), answer_turn()], log=log)
    run_relay(model, Box(log), limits=RunLimits(max_tool_calls=5))
    assert log[:2] == ["stream 1 ended", "call look"]


def test_outputs_go_back_in_the_calls_order_whatever_order_they_started_in() -> None:
    log: list[str] = []
    box = Box(log)
    look = call_item("call_b", "box__look", {"n": 2})
    poke = call_item("call_a", "box__poke", {"n": 1})
    first = response(poke, look)
    model = ScriptedStream([
        Turn([done(0, poke), done(1, look), lambda: box.seen("look").wait(), ended(first)], first),
        answer_turn(),
    ], log=log)
    run = run_relay(model, box)
    assert log[:3] == ["call look", "stream 1 ended", "call poke"]  # the second call started first
    assert [o["call_id"] for o in outputs(model, 1)] == ["call_a", "call_b"]
    assert run.result is not None and [c.call_id for c in run.result.calls] == ["call_a", "call_b"]


def test_a_call_id_streamed_twice_runs_once_and_its_output_carries_the_refusal() -> None:
    log: list[str] = []
    again = call_item("call_look", "box__look", {"n": 9})
    first = response(LOOK, again)
    model = ScriptedStream([Turn([done(0, LOOK), done(1, again), ended(first)], first), answer_turn()],
                           log=log)
    run = run_relay(model, Box(log))
    assert log.count("call look") == 1
    [output] = outputs(model, 1)
    assert output["call_id"] == "call_look" and "refused as a duplicate" in str(output["output"])
    assert run.result is not None
    assert [c.status for c in run.result.calls] == ["ok", "duplicate_call_id"]


def test_a_response_failing_after_a_call_started_cancels_it_and_feeds_nothing_back() -> None:
    log: list[str] = []
    box = Box(log, held=True)  # the tool never answers on its own
    failed = response(LOOK, status="failed")
    model = ScriptedStream([Turn([done(0, LOOK), lambda: box.seen("look").wait(), ended(failed)], failed)],
                           log=log)
    run = run_relay(model, box)
    assert run.result is not None and run.result.status == "failed"
    assert "the model broke down" in run.result.reason
    [cancelled] = run.result.calls
    assert cancelled.status == "cancelled" and cancelled.call_id == "call_look"
    assert cancelled.message == "the model response ended failed before the call ended"
    assert len(model.bodies) == 1  # nothing was fed back
    notices = [m for m in run.kinds("mcp_notification") if m["method"] == "notifications/cancelled"]
    assert [m["message"]["params"]["requestId"] for m in notices] == [cancelled.mcp_id]
    outcome = run.kinds("call_outcome")[-1]["outcome"]
    assert outcome["status"] == "cancelled" and not run.kinds("feedback")


def test_a_call_that_ended_before_the_response_failed_is_kept_but_not_fed_back() -> None:
    told = Told()
    failed = response(LOOK, status="incomplete")
    finished = told.seen(CallFinished.kind).wait
    model = ScriptedStream([Turn([done(0, LOOK), finished, ended(failed)], failed)])
    run = run_relay(model, told=told)
    assert run.result is not None and run.result.status == "incomplete"
    assert [c.status for c in run.result.calls] == ["ok"]
    assert len(model.bodies) == 1 and not run.kinds("feedback")
    assert [e.kind for e in told][-2:] == ["turn_finished", "run_finished"]


def test_a_stream_cut_after_a_call_ran_names_the_call() -> None:
    told = Told()
    cut = ModelStreamCut("the model endpoint's stream broke off after 3 events")
    finished = told.seen(CallFinished.kind).wait
    model = ScriptedStream([Turn([done(0, LOOK), finished], response(LOOK), raises=cut)])
    run = run_relay(model, told=told)
    assert run.error is cut and run.error.exit_code == 3
    assert run.error.__notes__ == ["calls that had started: call_look (box__look: ok)"]
    assert run.result is not None and run.result.status == "error"
    assert run.result.reason.endswith("; calls that had started: call_look (box__look: ok)")
    assert isinstance(told[-1], RunFinished)


def test_a_stream_cut_while_a_call_runs_cancels_it() -> None:
    log: list[str] = []
    box = Box(log, held=True)
    cut = ModelStreamCut("the model endpoint's stream broke off after 3 events")
    steps = [done(0, LOOK), lambda: box.seen("look").wait()]
    model = ScriptedStream([Turn(steps, response(LOOK), raises=cut)], log=log)
    run = run_relay(model, box)
    assert run.error is cut
    assert run.error.__notes__ == ["calls that had started: call_look (box__look: cancelled)"]
    assert run.result is not None
    [cancelled] = run.result.calls
    assert cancelled.message == "the model's answer broke off before the call ended"


def test_an_endpoint_answering_json_turns_streaming_off_for_the_rest_of_the_run_with_one_notice() -> None:
    first = response(LOOK, message_item("whole", "msg_1"))
    model = ScriptedStream([Turn([], first, json_answer=True), answer_turn()])
    run = run_relay(model)
    assert run.result is not None and run.result.completed
    assert model.bodies[0].get("stream") is True and "stream" not in model.bodies[1]
    notices = [n["text"] for n in run.kinds("notice") if "stream" in n["text"]]
    assert len(notices) == 1 and "--no-stream" in notices[0]
    texts = [e.text for e in run.told if isinstance(e, TextDelta)]
    assert texts == ["whole", "all done"]  # a turn not streamed gives each message whole


def test_an_endpoint_refusing_to_stream_is_asked_again_without_it() -> None:
    refusal = ModelFeatureUnsupported("stream is not supported", 400, feature="stream")
    model = ScriptedStream([answer_turn()], refuse_stream=refusal)
    run = run_relay(model)
    assert run.result is not None and run.result.completed and run.result.final_text == "all done"
    assert [b.get("stream") for b in model.bodies] == [True, None]
    assert len([n for n in run.kinds("notice") if "--no-stream" in n["text"]]) == 1


def test_no_stream_asks_for_whole_responses() -> None:
    model = ScriptedStream([answer_turn()])
    run = run_relay(model, stream_answers=False)
    assert "stream" not in model.bodies[0]
    assert run.result is not None and run.result.final_text == "all done"
    assert not [n for n in run.kinds("notice") if "stream" in n["text"]]


def test_the_run_events_come_in_order_and_end_with_the_result() -> None:
    log: list[str] = []
    box = Box(log)
    first = response(LOOK, message_item("looking", "msg_1"))
    model = ScriptedStream([
        Turn([done(0, LOOK), lambda: box.seen("look").wait(), text("look"), text("ing"),
              done(1, first["output"][1]), ended(first)], first),
        answer_turn(),
    ], log=log)
    run = run_relay(model, box)
    kinds = [type(e).__name__ for e in run.told]
    assert kinds[0] == "CallStarted" and kinds[-1] == "RunFinished"
    assert kinds.index("TextDone") < kinds.index("TurnFinished")
    assert [e.text for e in run.told if isinstance(e, TextDelta)] == ["look", "ing", "all ", "done"]
    assert [e.text for e in run.told if isinstance(e, TextDone)] == ["looking", "all done"]
    turns = [e for e in run.told if isinstance(e, TurnFinished)]
    assert [(t.turn, t.streamed, len(t.calls)) for t in turns] == [(1, True, 1), (2, True, 0)]
    finished = run.told[-1]
    assert isinstance(finished, RunFinished) and finished.result is run.result



def test_relay_stream_yields_the_same_run_and_leaving_early_cancels_it() -> None:
    log: list[str] = []
    box = Box(log)
    first = response(LOOK, message_item("looking", "msg_1"))

    def turns() -> list[Turn]:
        return [Turn([done(0, LOOK), text("looking"), done(1, first["output"][1]), ended(first)], first),
                answer_turn()]

    async def scenario() -> tuple[list[str], list[str]]:
        events = EventStream()
        async with connect([in_process_server(box, name="box")], events=events) as catalog:
            relay = Relay(catalog, ScriptedStream(turns()), RequestSettings(model="m"), events=events)
            whole = [type(e).__name__ async for e in relay.stream("task")]
            relay.model = ScriptedStream(turns())
            cut: list[str] = []
            async with contextlib.aclosing(relay.stream("task")) as watched:
                async for event in watched:
                    cut.append(type(event).__name__)
                    if isinstance(event, TextDone):
                        break  # closing the iterator cancels the run
            assert relay.result is not None and relay.result.status == "aborted"
            return whole, cut

    whole, cut = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert whole[-1] == "RunFinished" and whole.count("TurnFinished") == 2
    assert cut[-1] == "TextDone" and "RunFinished" not in cut


def test_a_message_streamed_without_deltas_is_still_told_once() -> None:
    whole = message_item("no deltas here", "msg_2")
    body = response(whole, rid="resp_2")
    run = run_relay(ScriptedStream([Turn([done(0, whole), ended(body)], body)]))
    assert [e.text for e in run.told if isinstance(e, TextDelta)] == ["no deltas here"]
    assert run.result is not None and run.result.final_text == "no deltas here"


def test_a_reply_in_a_dialect_without_a_reader_ends_the_run_failed_naming_it() -> None:
    body = response(POKE)
    model = ScriptedStream([Turn([], body, json_answer=True, dialect="chat_completions")])
    run = run_relay(model, stream_answers=False)
    assert run.result is not None and run.result.status == "failed"
    assert run.result.reason == ("the model client's reply cannot be read: the model dialect "
                                 "'chat_completions' has no reader in this toolrelay "
                                 "(it reads: chat, responses)")
    assert run.result.calls == [] and "call poke" not in model.log
