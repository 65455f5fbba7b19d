"""A 429 told to one request holds back every request of the client: a batch's tasks share
one back-off (not one retry schedule each)."""

from __future__ import annotations

import asyncio

from responses_helpers import recorded_stream
from toolrelay.events import Event, ModelRequestEvent, Notice
from toolrelay.model import ModelEndpoint, ResponsesClient
from toolrelay.offline import OfflineModel, parse_script

WAIT = 0.4


def test_a_rate_limit_said_to_one_request_holds_back_the_others() -> None:
    script = parse_script({"turns": [{"http_status": 429, "retry_after": WAIT}, {"message": "ok"}]})
    events, recorder = recorded_stream()
    sent: list[tuple[str, float]] = []
    loop_time: list[float] = []

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        with OfflineModel(script) as model:
            async with ResponsesClient(ModelEndpoint(base_url=model.base_url), events=events) as client:
                second: list[asyncio.Task[object]] = []

                def watch(event: Event) -> None:
                    if isinstance(event, Notice) and "HTTP 429" in event.text and not second:
                        loop_time.append(loop.time())  # the first request has just been told to wait
                        second.append(asyncio.ensure_future(
                            client.create({"model": "offline", "input": "b"}, turn=1)))
                    if isinstance(event, ModelRequestEvent):
                        sent.append((str(event.body["input"]), loop.time()))

                events.subscribe(watch)
                await client.create({"model": "offline", "input": "a"}, turn=1)
                await second[0]

    asyncio.run(scenario())
    told = loop_time[0]
    later = [at for what, at in sent if at > told]
    assert [what for what, at in sent].count("b") == 1 and len(later) == 2
    assert all(at >= told + WAIT * 0.95 for at in later)  # neither the retry nor the new request went early
    assert recorder.records("model_response")[0]["status"] == 429
