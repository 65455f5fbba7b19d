"""The Chat Completions adapter of the model seam, and ``--api auto``'s choice between the two.

``ChatClient`` is ``ResponsesClient`` speaking the chat dialect: it posts to
``{base_url}/chat/completions`` the chat body of the loop's request (``protocol.chat``:
messages, function tools, ``tool_choice``, ``parallel_tool_calls``, ``stream_options``),
records that exact body and the answer (or each chunk of a streamed one) with the dialect
``chat``, assembles streams by ``protocol.chat_stream`` (a tool call closes as the next one
starts or the choice finishes: early execution works as with Responses) and returns the
chat completion as received, for ``relay.stages.chat_reader`` to read. Retries, back-off,
redaction and failures are ``ResponsesClient``'s.

``AutoClient`` (``--api auto``) asks the Responses API first; an endpoint that answers its
first request 404 or 405 at ``/responses`` (``ModelFeatureUnsupported`` ``responses``) is
asked by chat from then on, once decided, with one notice.

``open_client(api, endpoint, events)`` is the one place that picks the adapter.
"""

from __future__ import annotations

from typing import Any, Final, Literal
from urllib.parse import urlsplit, urlunsplit

from .. import redaction
from ..errors import ModelError, ModelFeatureUnsupported, UsageError
from ..events import EventStream, Notice
from ..protocol.chat import CHAT_PATH, DIALECT, ChatUnsupported, chat_request
from ..protocol.chat_stream import ChatStreamAssembler
from .client import ResponsesClient
from .endpoint import ModelEndpoint
from .failures import check_reply
from .reply import ModelReply, OnUpdate
from .streaming import StreamAssembling

__all__ = ["API_CHOICES", "ApiChoice", "AutoClient", "ChatClient", "chat_url", "open_client"]

ApiChoice = Literal["responses", "chat", "auto"]
API_CHOICES: Final[tuple[ApiChoice, ...]] = ("responses", "chat", "auto")
_ANSWERED_200: Final = "the model endpoint answered 200"


def chat_url(endpoint: ModelEndpoint) -> str:
    """``{base_url}/chat/completions``, with the query ``responses_url`` carries."""
    parts = urlsplit(endpoint.responses_url)
    path = parts.path.removesuffix("/responses") + CHAT_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


class ChatClient(ResponsesClient):
    """The Chat Completions adapter (see the module docstring); use as ``async with``."""

    dialect: str = DIALECT

    def _post_url(self, endpoint: ModelEndpoint) -> str:
        return chat_url(endpoint)

    def _shown_url(self, endpoint: ModelEndpoint) -> str:
        return redaction.redact_url(chat_url(endpoint))

    def _wire_body(self, body: dict[str, Any]) -> dict[str, Any]:
        try:
            return chat_request(body)
        except ChatUnsupported as exc:
            raise UsageError(f"--api chat: {exc}") from None

    def _assembler(self) -> StreamAssembling:
        return ChatStreamAssembler()

    def _check_reply(self, answer: Any, body: dict[str, Any]) -> ModelError | None:
        if isinstance(answer, dict) and "output" in answer and "choices" not in answer:
            return ModelError(f"{_ANSWERED_200} with a Responses object ('output'), not a chat completion: "
                              "is the URL a /v1/responses endpoint? (use --api responses)")
        if isinstance(answer, dict) and not isinstance(answer.get("choices"), list):
            if isinstance(answer.get("error"), dict):
                return check_reply(answer, body)
            keys = ", ".join(sorted(str(k) for k in answer)[:10]) or "none"
            return ModelError(f"{_ANSWERED_200} with JSON that is not a chat completion: no 'choices' list "
                              f"(keys: {keys})")
        if not isinstance(answer, dict):
            return check_reply(answer, body)
        return None


class AutoClient(ResponsesClient):
    """``--api auto``: Responses, or chat once the endpoint says it has no Responses API."""

    def __init__(self, endpoint: ModelEndpoint, *, events: EventStream, **options: Any) -> None:
        super().__init__(endpoint, events=events, **options)
        self._chat = ChatClient(endpoint, events=events, **options)
        self._decided: ResponsesClient | None = None
        """The adapter every request goes to, once the first one was answered."""
        self._auto_events = events

    async def create(
        self, body: dict[str, Any], *, turn: int, on_update: OnUpdate | None = None
    ) -> ModelReply:
        if self._decided is self._chat:
            return await self._chat.create(body, turn=turn, on_update=on_update)
        if self._decided is not None:
            return await super().create(body, turn=turn, on_update=on_update)
        try:
            reply = await super().create(body, turn=turn, on_update=on_update)
        except ModelFeatureUnsupported as missing:
            if missing.feature != "responses" or missing.status not in (404, 405):
                raise
            self._decided = self._chat
            self.url = self._chat.url
            text = (f"--api auto: {self.endpoint.shown_url} answered {missing.status}, so the endpoint "
                    f"has no Responses API; asking by Chat Completions at {self._chat.url} from now on")
            self._auto_events.emit(Notice(level="warning", text=text))
            return await self._chat.create(body, turn=turn, on_update=on_update)
        self._decided = self
        return reply

    async def aclose(self) -> None:
        await self._chat.aclose()
        await super().aclose()


def open_client(api: str, endpoint: ModelEndpoint, *, events: EventStream, **options: Any) -> ResponsesClient:
    """The adapter ``api`` names (``responses``, ``chat``, ``auto``), not yet entered."""
    if api == "responses":
        return ResponsesClient(endpoint, events=events, **options)
    if api == "chat":
        return ChatClient(endpoint, events=events, **options)
    if api == "auto":
        return AutoClient(endpoint, events=events, **options)
    raise UsageError(f"--api must be one of {', '.join(API_CHOICES)}, got {api!r}")

