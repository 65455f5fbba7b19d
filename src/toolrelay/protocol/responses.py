"""The OpenAI Responses API wire vocabulary, named once (as ``mcp.py`` names MCP's).

Item and content-part type names, the statuses toolrelay reads, and TypedDicts for the
input and output items it reads and writes. Everything that builds or reads a Responses
body (relay/, model/, the offline stand-in, verify/, view/) takes the names from here;
streaming adds its server-sent event names here too. Field lists follow openai-python's
``types/responses`` and ../shared/notes/spec.md §C.
"""

from __future__ import annotations

from typing import Any, Final, Literal, NotRequired, TypedDict

__all__ = [
    "CANCELLED",
    "COMPLETED",
    "FAILED",
    "FUNCTION_CALL",
    "FUNCTION_CALL_OUTPUT",
    "INCOMPLETE",
    "INPUT_FILE",
    "INPUT_IMAGE",
    "INPUT_TEXT",
    "ITEM_TYPES",
    "MESSAGE",
    "OUTPUT_TEXT",
    "PART_TYPES",
    "REASONING",
    "REFUSAL",
    "SUMMARY_TEXT",
    "FunctionCallItem",
    "FunctionCallOutputItem",
    "InputFilePart",
    "InputImagePart",
    "InputMessageItem",
    "InputPart",
    "InputTextPart",
    "MessageItem",
    "OutputPart",
    "OutputTextPart",
    "ReasoningItem",
    "RefusalPart",
]

# -- output and input item types (the "type" of an item in output / input) --------------
MESSAGE: Final = "message"
FUNCTION_CALL: Final = "function_call"
FUNCTION_CALL_OUTPUT: Final = "function_call_output"
REASONING: Final = "reasoning"
ITEM_TYPES: Final = frozenset({MESSAGE, FUNCTION_CALL, FUNCTION_CALL_OUTPUT, REASONING})
"""Every item type named here (a new one is added to this set, and gets its TypedDict)."""

# -- content part types -----------------------------------------------------------------
OUTPUT_TEXT: Final = "output_text"
REFUSAL: Final = "refusal"
INPUT_TEXT: Final = "input_text"
INPUT_IMAGE: Final = "input_image"
INPUT_FILE: Final = "input_file"
SUMMARY_TEXT: Final = "summary_text"
PART_TYPES: Final = frozenset({OUTPUT_TEXT, REFUSAL, INPUT_TEXT, INPUT_IMAGE, INPUT_FILE, SUMMARY_TEXT})
"""Every content part type named here."""

# -- statuses ---------------------------------------------------------------------------
COMPLETED: Final = "completed"
"""The status of a whole response, and of an item, that finished normally."""
INCOMPLETE: Final = "incomplete"
"""A response cut short (``incomplete_details.reason`` says why: max_output_tokens, ...)."""
FAILED: Final = "failed"
"""A response the endpoint gave up on (``error`` says why)."""
CANCELLED: Final = "cancelled"
"""A response stopped by a cancel request."""


class InputTextPart(TypedDict):
    """Text in a user message or in a ``function_call_output``'s part list."""

    type: Literal["input_text"]
    text: str


class InputImagePart(TypedDict):
    """An image given to the model (``image_url`` is a URL or a ``data:`` URL)."""

    type: Literal["input_image"]
    image_url: str
    detail: str


class InputFilePart(TypedDict):
    """A file given to the model (``file_data`` is a ``data:`` URL)."""

    type: Literal["input_file"]
    filename: str
    file_data: str


InputPart = InputTextPart | InputImagePart | InputFilePart
"""A content part given to the model: in a user message or a ``function_call_output``."""


class InputMessageItem(TypedDict):
    """A user (or developer) message in ``input``."""

    role: str
    content: str | list[InputPart]
    type: NotRequired[Literal["message"]]


class OutputTextPart(TypedDict):
    """The answer text inside an assistant ``message``."""

    type: Literal["output_text"]
    text: str
    annotations: list[Any]
    logprobs: NotRequired[list[Any]]


class RefusalPart(TypedDict):
    """A refusal inside an assistant ``message``."""

    type: Literal["refusal"]
    refusal: str


OutputPart = OutputTextPart | RefusalPart


class MessageItem(TypedDict):
    """An assistant ``message`` output item."""

    id: str
    type: Literal["message"]
    status: str
    role: Literal["assistant"]
    content: list[OutputPart]


class FunctionCallItem(TypedDict):
    """A ``function_call`` output item: ``arguments`` is JSON *text*, as the model wrote it."""

    type: Literal["function_call"]
    call_id: str
    name: str
    arguments: str
    id: NotRequired[str]
    status: NotRequired[str]


class FunctionCallOutputItem(TypedDict):
    """The feedback for one call, paired to it by ``call_id``; ``output`` is text or parts."""

    type: Literal["function_call_output"]
    call_id: str
    output: str | list[InputPart]


class ReasoningItem(TypedDict):
    """A ``reasoning`` output item, replayed unchanged in the next input."""

    id: str
    type: Literal["reasoning"]
    summary: list[dict[str, Any]]
    encrypted_content: NotRequired[str | None]
    content: NotRequired[list[dict[str, Any]]]
