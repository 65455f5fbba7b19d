"""Images and files in tool outputs over chat (``protocol.chat_tool_media``): the tool
messages carry text, one user message after them the parts, and the way back is exact."""

from __future__ import annotations

from typing import Any

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
