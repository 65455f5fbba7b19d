"""Sampling (``sampling/createMessage``): a server asks the client's model for a message.

The request is checked here (``parse_sampling``) as the spec asks of a client: messages
with a role and content, a positive ``maxTokens``; tools or a toolChoice only when the
connection declared ``sampling.tools`` (2025-11-25), and then every ``tool_use`` answered
by its ``tool_result`` before anything else, in a user message of results only — all
-32602 otherwise.

Then it needs approval, like a tool that is not read-only (a ``SamplingApprover``: the
CLI's terminal prompt, ``--yes``, or the library caller's), and a ``Sampler`` to answer
it (the model the runner or CLI injects; client/ never imports model/). Refused, or with
no sampler, the server gets the spec's user-rejected error, -1, with a message naming the
option that would allow it (``SamplingRefused``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ...errors import RpcError, SamplingRefused
from ...protocol.jsonrpc import INVALID_PARAMS, JSONObject, RequestId

__all__ = [
    "Sampler",
    "SamplingApprover",
    "SamplingRefused",
    "SamplingRequest",
    "check_sampling_result",
    "parse_sampling",
    "refusing_approval",
    "refusing_sampler",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class SamplingRequest:
    """One ``sampling/createMessage``, checked, and who asks."""

    server: str
    call_id: str | None
    """The model's call during which the server asked, when known."""
    messages: list[JSONObject]
    """``{role, content}``; content is one block or (2025-11-25) a list of blocks."""
    max_tokens: int
    system_prompt: str | None = None
    temperature: float | None = None
    stop_sequences: list[str] = field(default_factory=list)
    model_hints: list[str] = field(default_factory=list)
    """``modelPreferences.hints[].name``: the server's wishes, logged, not obeyed."""
    tools: list[JSONObject] | None = None
    """2025-11-25: tools the model may use (``{name, description?, inputSchema}``)."""
    tool_choice: JSONObject | None = None
    params: JSONObject = field(default_factory=dict)
    """The request's params exactly as received."""
    request_id: RequestId | None = None
    """The server's JSON-RPC id of the request (2026-07-28: the key of the input request)."""

    def prompt_text(self, limit: int = 2000) -> str:
        """The conversation as text, for a person to approve (system prompt first)."""
        lines = [f"[system] {self.system_prompt}"] if self.system_prompt else []
        for message in self.messages:
            lines.extend(f"[{message.get('role')}] {text}" for text in _texts(message.get("content")))
        text = "\n".join(lines)
        return text if len(text) <= limit else text[: limit - 1] + "…"


Sampler = Callable[[SamplingRequest], Awaitable[JSONObject]]
"""Answers an approved request with a ``CreateMessageResult`` (``role``, ``content``,
``model``, ``stopReason``); may raise ``SamplingRefused`` or ``RpcError``."""

SamplingApprover = Callable[[SamplingRequest], Awaitable[str | None]]
"""Asked before a sampling request is answered: None approves, a string is the refusal."""


def refusing_sampler(hint: str) -> Sampler:
    """No model to answer with: every request is refused (-1), saying ``hint``."""

    async def refuse(request: SamplingRequest) -> JSONObject:
        raise SamplingRefused(f"toolrelay has no model to answer sampling requests: {hint}")

    return refuse


def refusing_approval(hint: str) -> SamplingApprover:
    """Nobody can approve: every sampling request is refused (-1), saying ``hint``."""

    async def refuse(request: SamplingRequest) -> str | None:
        return f"not approved ({hint})"

    return refuse


def parse_sampling(params: JSONObject | None, *, server: str, call_id: str | None,
                   tools_allowed: bool) -> SamplingRequest:
    """The request, checked; RpcError -32602 for what a client must refuse."""
    params = params or {}
    messages = params.get("messages")
    if not isinstance(messages, list) or not all(_is_message(m) for m in messages):
        raise _invalid('"messages" must be an array of {role: user|assistant, content}')
    max_tokens = params.get("maxTokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise _invalid('"maxTokens" must be a positive integer')
    tools, choice = params.get("tools"), params.get("toolChoice")
    if (tools is not None or choice is not None) and not tools_allowed:
        raise _invalid("tools in sampling need the sampling.tools capability, which this "
                       "connection did not declare (protocol revision 2025-11-25)")
    if tools is not None and not (isinstance(tools, list) and all(_is_tool(t) for t in tools)):
        raise _invalid('"tools" must be an array of {name, inputSchema}')
    if choice is not None and not isinstance(choice, dict):
        raise _invalid('"toolChoice" must be an object')
    _check_tool_results(messages)
    return SamplingRequest(
        server=server, call_id=call_id, messages=messages, max_tokens=max_tokens,
        system_prompt=_optional(params, "systemPrompt", str), temperature=_temperature(params),
        stop_sequences=[s for s in params.get("stopSequences") or [] if isinstance(s, str)],
        model_hints=_hints(params.get("modelPreferences")), tools=tools, tool_choice=choice, params=params,
    )


def check_sampling_result(result: Any) -> JSONObject:
    """A sampler's answer, checked before it is sent (a broken one is our internal error)."""
    if not isinstance(result, dict) or result.get("role") != "assistant" or "content" not in result:
        raise RpcError(-32603, "Internal error: the sampler's answer is not an assistant message")
    if not isinstance(result.get("model"), str):
        raise RpcError(-32603, "Internal error: the sampler's answer does not name its model")
    return result


# -- checks -------------------------------------------------------------------------------


def _invalid(what: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params: {what}")


def _is_message(message: Any) -> bool:
    return isinstance(message, dict) and message.get("role") in ("user", "assistant") and (
        isinstance(message.get("content"), (dict, list)))


def _is_tool(tool: Any) -> bool:
    return (isinstance(tool, dict) and isinstance(tool.get("name"), str)
            and isinstance(tool.get("inputSchema"), dict))


def _blocks(content: Any) -> list[Any]:
    return content if isinstance(content, list) else [content]


def _check_tool_results(messages: list[JSONObject]) -> None:
    """Each assistant tool_use answered, by id, in the very next message, which holds tool
    results only; no tool result without its tool_use."""
    waiting: set[Any] = set()
    for message in messages:
        kinds = [b.get("type") if isinstance(b, dict) else None for b in _blocks(message["content"])]
        results = {b.get("toolUseId") for b in _blocks(message["content"])
                   if isinstance(b, dict) and b.get("type") == "tool_result"}
        if results and (message["role"] != "user" or any(k != "tool_result" for k in kinds)):
            raise _invalid("a message with tool_result blocks must be a user message of tool results only")
        if results != waiting:
            missing = waiting - results
            raise _invalid(f"tool_use {sorted(map(str, missing))[0]} has no tool_result in the next message"
                           if missing else "a tool_result answers no tool_use of the message before it")
        waiting = {b.get("id") for b in _blocks(message["content"])
                   if isinstance(b, dict) and b.get("type") == "tool_use" and message["role"] == "assistant"}
    if waiting:
        raise _invalid(f"tool_use {sorted(map(str, waiting))[0]} has no tool_result in the next message")


def _optional(params: JSONObject, key: str, kind: type) -> Any:
    value = params.get(key)
    return value if isinstance(value, kind) else None


def _temperature(params: JSONObject) -> float | None:
    value = params.get("temperature")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _hints(preferences: Any) -> list[str]:
    hints = preferences.get("hints") if isinstance(preferences, dict) else None
    if not isinstance(hints, list):
        return []
    return [h["name"] for h in hints if isinstance(h, dict) and isinstance(h.get("name"), str)]


def _texts(content: Any) -> list[str]:
    texts = []
    for block in _blocks(content):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            texts.append(f"(calls tool {block.get('name')})")
        else:
            texts.append(f"({kind} block)")
    return texts
