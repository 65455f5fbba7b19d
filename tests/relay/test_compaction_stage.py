"""The pure stage of compaction: where a context may start after a response's compaction
item, and the one case it may not (a call of the same response before the item)."""

from __future__ import annotations

from typing import Any

from toolrelay.relay.stages.compaction import compact_point, context_management
from toolrelay.relay.stages.request import Conversation, RequestSettings, build_body

USER = {"role": "user", "content": "go"}
COMPACTION = {"id": "cmp_1", "type": "compaction", "encrypted_content": "opaque"}


def _call(n: int) -> dict[str, Any]:
    return {"id": f"fc_{n}", "type": "function_call", "call_id": f"call_{n}", "name": "fs__read",
            "arguments": "{}"}


def _output(n: int) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": f"call_{n}", "output": "text"}


def test_the_request_asks_for_compaction_as_the_types_say() -> None:
    assert context_management(5000) == [{"type": "compaction", "compact_threshold": 5000}]
    conversation = Conversation()
    conversation.start([USER])
    body = build_body(RequestSettings(model="m", compact_at=5000), [], conversation)
    assert body["context_management"] == [{"type": "compaction", "compact_threshold": 5000}]
    assert "context_management" not in build_body(RequestSettings(model="m"), [], conversation)


def test_a_compaction_item_makes_the_history_start_from_it() -> None:
    conversation = Conversation()
    conversation.start([USER])
    conversation.add_response("resp_1", [_call(1)])
    conversation.add_outputs([_output(1)])
    conversation.add_response("resp_2", [COMPACTION, _call(2)])
    assert conversation.history == [COMPACTION, _call(2)]
    assert conversation.compactions == [("resp_2", 3)]
    conversation.add_outputs([_output(2)])
    conversation.add_response("resp_3", [_call(3)])  # no compaction: it only grows
    assert conversation.history == [COMPACTION, _call(2), _output(2), _call(3)]


def test_nothing_is_dropped_when_a_call_of_the_response_comes_before_its_item() -> None:
    context = [USER, _call(1), _output(1), _call(2), COMPACTION]
    assert compact_point(context, [_call(2), COMPACTION]) is None  # call_2's output still has to go back
    conversation = Conversation()
    conversation.start([USER])
    conversation.add_response("resp_1", [_call(1), COMPACTION])
    assert conversation.history == [USER, _call(1), COMPACTION] and conversation.compactions == []


def test_chain_mode_prunes_nothing_and_a_response_without_the_item_changes_nothing() -> None:
    conversation = Conversation()
    conversation.start([USER])
    conversation.add_response("resp_1", [COMPACTION, _call(1)], prune=False)
    assert conversation.history == [USER, COMPACTION, _call(1)]
    assert compact_point([USER, _call(1)], [_call(1)]) is None
    point = compact_point([USER, COMPACTION, _call(1)], [COMPACTION, _call(1)])
    assert point is not None and (point.start, point.dropped) == (1, 1)
