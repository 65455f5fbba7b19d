"""The OpenAI Responses API wire vocabulary, named once (as ``mcp.py`` names MCP's).

Item and content-part type names, the statuses toolrelay reads, and TypedDicts for the
input and output items it reads and writes. Everything that builds or reads a Responses
body (relay/, model/, the offline stand-in, verify/, view/) takes the names from here,
and so does everything that reads or writes a streamed one: the server-sent event types
(``RESPONSE_CREATED``, ``OUTPUT_TEXT_DELTA``, ...; all in ``STREAM_EVENT_TYPES``). Field
lists follow openai-python's ``types/responses`` and ../shared/notes/spec.md §C.
"""

from __future__ import annotations

from typing import Any, Final, Literal, NotRequired, TypedDict

from ..events import DEFAULT_DIALECT

__all__ = [
    "CANCELLED",
    "COMPACTION",
    "COMPLETED",
    "CONTENT_PART_ADDED",
    "CONTENT_PART_DONE",
    "DIALECT",
    "FAILED",
    "FUNCTION_CALL",
    "FUNCTION_CALL_ARGUMENTS_DELTA",
    "FUNCTION_CALL_ARGUMENTS_DONE",
    "FUNCTION_CALL_OUTPUT",
    "INCOMPLETE",
    "INPUT_FILE",
    "INPUT_IMAGE",
    "INPUT_TEXT",
    "IN_PROGRESS",
    "ITEM_TYPES",
    "MESSAGE",
    "OUTPUT_ITEM_ADDED",
    "OUTPUT_ITEM_DONE",
    "OUTPUT_TEXT",
    "OUTPUT_TEXT_DELTA",
    "OUTPUT_TEXT_DONE",
    "PART_TYPES",
    "REASONING",
    "REASONING_SUMMARY_PART_ADDED",
    "REASONING_SUMMARY_PART_DONE",
    "REASONING_SUMMARY_TEXT_DELTA",
    "REASONING_SUMMARY_TEXT_DONE",
    "REASONING_TEXT",
    "REASONING_TEXT_DELTA",
    "REASONING_TEXT_DONE",
    "REFUSAL",
    "REFUSAL_DELTA",
    "REFUSAL_DONE",
    "RESPONSE_COMPLETED",
    "RESPONSE_CREATED",
    "RESPONSE_FAILED",
    "RESPONSE_INCOMPLETE",
    "RESPONSE_IN_PROGRESS",
    "RESPONSE_QUEUED",
    "RETRY_SAFE_STREAM_EVENTS",
    "SAMPLING_METADATA",
    "STREAM_ERROR",
    "STREAM_EVENT_TYPES",
    "SUMMARY_TEXT",
    "TERMINAL_STATUS",
    "TERMINAL_STREAM_EVENTS",
    "CompactionItem",
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
COMPACTION: Final = "compaction"
"""An item the endpoint's compaction made (``encrypted_content``: the context before it, opaque);
replayed as given, and the items before it may then be left out of later inputs."""
ITEM_TYPES: Final = frozenset({MESSAGE, FUNCTION_CALL, FUNCTION_CALL_OUTPUT, REASONING, COMPACTION})
"""Every item type named here (a new one is added to this set, and gets its TypedDict)."""

# -- content part types -----------------------------------------------------------------
OUTPUT_TEXT: Final = "output_text"
REFUSAL: Final = "refusal"
INPUT_TEXT: Final = "input_text"
INPUT_IMAGE: Final = "input_image"
INPUT_FILE: Final = "input_file"
SUMMARY_TEXT: Final = "summary_text"
REASONING_TEXT: Final = "reasoning_text"
"""A part of a reasoning item's ``content``: raw reasoning text (vLLM, gpt-oss)."""
PART_TYPES: Final = frozenset(
    {OUTPUT_TEXT, REFUSAL, INPUT_TEXT, INPUT_IMAGE, INPUT_FILE, SUMMARY_TEXT, REASONING_TEXT}
)
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
IN_PROGRESS: Final = "in_progress"
"""A response (or an item) still being written: what a stream's first events carry."""

# -- server-sent events of a streamed response (``stream: true``) -------------------------
# The SSE ``event:`` field and the data's ``type`` both carry these names.
RESPONSE_CREATED: Final = "response.created"
RESPONSE_IN_PROGRESS: Final = "response.in_progress"
RESPONSE_QUEUED: Final = "response.queued"
OUTPUT_ITEM_ADDED: Final = "response.output_item.added"
OUTPUT_ITEM_DONE: Final = "response.output_item.done"
CONTENT_PART_ADDED: Final = "response.content_part.added"
CONTENT_PART_DONE: Final = "response.content_part.done"
OUTPUT_TEXT_DELTA: Final = "response.output_text.delta"
OUTPUT_TEXT_DONE: Final = "response.output_text.done"
REFUSAL_DELTA: Final = "response.refusal.delta"
REFUSAL_DONE: Final = "response.refusal.done"
FUNCTION_CALL_ARGUMENTS_DELTA: Final = "response.function_call_arguments.delta"
FUNCTION_CALL_ARGUMENTS_DONE: Final = "response.function_call_arguments.done"
"""Its ``name`` is absent on the live API: the name is the item's (openai-python #3472)."""
REASONING_SUMMARY_PART_ADDED: Final = "response.reasoning_summary_part.added"
REASONING_SUMMARY_PART_DONE: Final = "response.reasoning_summary_part.done"
REASONING_SUMMARY_TEXT_DELTA: Final = "response.reasoning_summary_text.delta"
REASONING_SUMMARY_TEXT_DONE: Final = "response.reasoning_summary_text.done"
REASONING_TEXT_DELTA: Final = "response.reasoning_text.delta"
REASONING_TEXT_DONE: Final = "response.reasoning_text.done"
RESPONSE_COMPLETED: Final = "response.completed"
RESPONSE_INCOMPLETE: Final = "response.incomplete"
RESPONSE_FAILED: Final = "response.failed"
STREAM_ERROR: Final = "error"
"""An ``error`` event (``code``, ``message``, ``param``): the stream ends without a Response."""
DIALECT: Final = DEFAULT_DIALECT
"""This API's name among the model dialects, as model events record it (``responses``)."""

SAMPLING_METADATA: Final = {"toolrelay": "sampling"}
"""The ``metadata`` of a request made for a server's sampling request, not for a run's turn
(the offline stand-in answers it with its script's ``sampling`` entry)."""

TERMINAL_STREAM_EVENTS: Final = frozenset({RESPONSE_COMPLETED, RESPONSE_INCOMPLETE, RESPONSE_FAILED})
"""The events that end a response and carry it whole."""
TERMINAL_STATUS: Final = {RESPONSE_COMPLETED: COMPLETED, RESPONSE_INCOMPLETE: INCOMPLETE,
                          RESPONSE_FAILED: FAILED}
"""Each terminal event → the status it ends the response with."""
RETRY_SAFE_STREAM_EVENTS: Final = frozenset({RESPONSE_CREATED, RESPONSE_IN_PROGRESS, RESPONSE_QUEUED})
"""A stream cut after only these said nothing yet: asking again is safe (nothing shown, no call)."""
STREAM_EVENT_TYPES: Final = frozenset({
    RESPONSE_CREATED, RESPONSE_IN_PROGRESS, RESPONSE_QUEUED, OUTPUT_ITEM_ADDED, OUTPUT_ITEM_DONE,
    CONTENT_PART_ADDED, CONTENT_PART_DONE, OUTPUT_TEXT_DELTA, OUTPUT_TEXT_DONE, REFUSAL_DELTA,
    REFUSAL_DONE, FUNCTION_CALL_ARGUMENTS_DELTA, FUNCTION_CALL_ARGUMENTS_DONE,
    REASONING_SUMMARY_PART_ADDED, REASONING_SUMMARY_PART_DONE, REASONING_SUMMARY_TEXT_DELTA,
    REASONING_SUMMARY_TEXT_DONE, REASONING_TEXT_DELTA, REASONING_TEXT_DONE, RESPONSE_COMPLETED,
    RESPONSE_INCOMPLETE, RESPONSE_FAILED, STREAM_ERROR,
})
"""Every stream event type toolrelay reads; others (web search, audio, ...) are kept and ignored."""


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


class CompactionItem(TypedDict):
    """A ``compaction`` output item (``ResponseCompactionItem``), replayed unchanged."""

    id: str
    type: Literal["compaction"]
    encrypted_content: str
    created_by: NotRequired[str | None]


class ReasoningItem(TypedDict):
    """A ``reasoning`` output item, replayed unchanged in the next input."""

    id: str
    type: Literal["reasoning"]
    summary: list[dict[str, Any]]
    encrypted_content: NotRequired[str | None]
    content: NotRequired[list[dict[str, Any]]]
