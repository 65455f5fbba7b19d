"""Images and files in tool outputs over chat (``protocol.chat_tool_media``): the tool
messages carry text, one user message after them the parts, and the way back is exact."""

from __future__ import annotations

import copy
import operator
from typing import Any, Final

from testkit.dialect import Dialect
from toolrelay.protocol.chat import chat_request, responses_request
from toolrelay.protocol.chat_tool_media import MEDIA_HEADER

IMAGE = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"}
FILE = {"type": "input_file", "filename": "report.pdf", "file_data": "data:application/pdf;base64,JVBERi0="}


def body(*outputs: Any) -> dict[str, Any]:
    calls = [{"type": "function_call", "call_id": f"call_{n}", "name": "box__look", "arguments": "{}",
              "status": "completed"}
             for n, _ in enumerate(outputs, 1)]
    fed = [{"type": "function_call_output", "call_id": f"call_{n}", "output": output}
           for n, output in enumerate(outputs, 1)]
    return {"model": "m", "input": [{"role": "user", "content": "look"}, *calls, *fed,
                                    {"role": "user", "content": "and now?"}],
            "tools": [{"type": "function", "name": "box__look", "parameters": {"type": "object"}}]}


def test_images_and_files_follow_the_tool_messages_and_read_back_exactly() -> None:
    sent = body([{"type": "input_text", "text": "two things"}, IMAGE, FILE], "plain text")
    chat = chat_request(sent)
    Dialect("chat").check(chat)
    roles = [m["role"] for m in chat["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "user", "user"]
    first = chat["messages"][2]["content"]
    assert [p["type"] for p in first] == ["text"] * 3
    where = " of call call_1 is in the user message after the tool messages]"
    assert [p["text"] for p in first[1:]] == ["[toolrelay: image 1" + where, "[toolrelay: file 2" + where]
    media = chat["messages"][4]["content"]
    assert media[0] == {"type": "text", "text": MEDIA_HEADER}
    assert [p["type"] for p in media[1:]] == ["text", "image_url", "text", "file"]
    assert media[4] == {"type": "file", "file": {"file_data": FILE["file_data"], "filename": "report.pdf"}}
    assert responses_request(chat) == sent


def test_a_user_message_that_does_not_fit_the_outputs_stays_a_user_message() -> None:
    chat = chat_request(body([IMAGE]))
    # a label naming no call before it: the message is the user's, the placeholder stays
    chat["messages"][3]["content"][1]["text"] = "[toolrelay: image 1 of call call_9]"
    read = responses_request(chat)["input"]
    assert [i.get("role", i.get("type")) for i in read] == [
        "user", "function_call", "function_call_output", "user", "user"]
    assert read[2]["output"][0]["text"].endswith("is in the user message after the tool messages]")


def _replayed(first: dict[str, Any], *added: dict[str, Any]) -> dict[str, Any]:
    """The next request of a replayed run: the first's very messages, then ``added``."""
    return {**first, "messages": [*first["messages"], *added]}


ANSWERED: Final = [
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_3", "type": "function", "function": {"name": "box__look", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_3", "content": "more"},
]
"""What a replayed request adds after the one before: the answer's call, and its output."""


def test_a_replayed_request_is_read_from_the_one_before_as_a_whole_reading_reads_it() -> None:
    """verify reads a long chat run request by request: the items of the messages a request
    repeats are taken from the request before (the very objects), the rest read, and the
    body is the one a whole reading gives: with tool media, a system message, or neither."""
    for first in (chat_request(body([{"type": "input_text", "text": "two things"}, IMAGE, FILE], "plain")),
                  chat_request({**body("plain"), "instructions": "be brief"})):
        before = responses_request(first)
        second = _replayed(first, *ANSWERED)
        read = responses_request(second, (first, before))
        assert read == responses_request(second)
        assert all(map(operator.is_, before["input"], read["input"]))  # taken, not read again
        third = _replayed(second, *ANSWERED)
        assert responses_request(third, (second, read)) == responses_request(third)


def test_a_replayed_request_is_read_whole_where_its_new_messages_could_change_the_old_ones() -> None:
    """A request whose new messages begin otherwise than with an answer (a media message may
    give parts to the tool messages before it), or whose messages are copies, is read whole:
    the same body, and the request before's reading left as it was."""
    first = chat_request(body([IMAGE]))
    first["messages"] = first["messages"][:3]  # ends with the tool message, its image not sent yet
    before = responses_request(first)
    kept = copy.deepcopy(before)
    media = chat_request(body([IMAGE]))["messages"][3]
    for second in (_replayed(first, media), {**first, "messages": copy.deepcopy(first["messages"])}):
        read = responses_request(second, (first, before))
        assert read == responses_request(second)
        assert before == kept
    assert responses_request(_replayed(first, media), (first, before))["input"][2]["output"][0] == {
        "type": "input_image", "image_url": IMAGE["image_url"], "detail": "auto"}
