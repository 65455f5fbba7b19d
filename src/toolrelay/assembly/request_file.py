"""Request settings: body fields every model request of a run carries, sent as given
(``--request-settings FILE``, ``RunOptions.extra_body``, a batch task line's
``request_settings``): ``prompt_cache_options``, ``temperature``, ``include``, ``reasoning``,
``text``, ``metadata``, ``service_tier``, a vendor's extras such as vLLM's ``top_k``.

Fields toolrelay sets itself are refused, each naming the option that sets it instead
(``OWNED``): a setting would otherwise replace the task's input, the declarations or the
context mode behind the loop's back. The sampling fields are checked as ``--temperature``
... are (``sampling_fields``); the options of the same names win over the settings.

One file serves both dialects. The loop speaks Responses, so a chat name the chat adapter
renames (``max_completion_tokens``, ``reasoning_effort``) is read as its Responses name;
``dialect_fields`` then gives the fields as the run's API takes them: for ``--api chat``
``text`` becomes ``response_format`` and ``verbosity``, and the Responses-only fields
(``include``, ``truncation``, ``max_tool_calls``, ``prompt``) are refused; for Responses
``response_format`` and ``verbosity`` become ``text``, and ``logprobs`` is refused for
``top_logprobs``. ``protocol.chat.chat_request`` does the rest of the renaming on the way
out, as it does for the sampling options.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ..errors import UsageError
from ..protocol import json_depth
from ..protocol.foreign_names import CHAT_FUNCTION_CALL
from ..relay.stages.sampling_fields import SAMPLING, SEED_NEEDS_CHAT, sampling_problem

__all__ = [
    "OWNED", "RESPONSES_ONLY", "dialect_fields", "load_request_settings", "loop_names", "owned_problem",
]

_CONTEXT: Final = "the task (with --prompt and --resource): toolrelay builds the context"
OWNED: Final[Mapping[str, str]] = {
    "model": "--model (a batch task: its model field)",
    "input": _CONTEXT,
    "messages": _CONTEXT,
    "instructions": "--instructions (a batch task: its instructions field)",
    "tools": "--config (the servers' tools), --declare and --tool-search",
    "functions": "--config (the servers' tools)",
    "tool_choice": "--tool-choice (a batch task: its tool_choice field)",
    CHAT_FUNCTION_CALL: "--tool-choice",
    "parallel_tool_calls": "--no-parallel",
    "stream": "--no-stream",
    "stream_options": "--no-stream (toolrelay asks a chat stream for its usage itself)",
    "previous_response_id": "--chain",
    "conversation": "--chain or a toolrelay.Conversation (toolrelay keeps the context)",
    "context_management": "--compact-at (a batch task: its compact_at field)",
    "prompt_cache_key": "--prompt-cache-key (a batch task: its prompt_cache_key field)",
    "background": "nothing: toolrelay waits for each answer",
    "n": "nothing: toolrelay reads one answer per request",
}
"""The body fields toolrelay sets, and what sets each instead."""
RESPONSES_ONLY: Final = ("include", "truncation", "max_tool_calls", "prompt")
"""Responses fields Chat Completions has no counterpart for."""
_LOOP_NAMES: Final = {"max_completion_tokens": "max_output_tokens"}
"""Chat names the chat adapter gives back under the loop's (Responses) name."""


def load_request_settings(path: str | Path) -> dict[str, Any]:
    """The settings file's fields, checked (``UsageError`` naming the file and the field)."""
    data = json_depth.load_file(path, "request settings")
    if not isinstance(data, dict):
        raise UsageError(f"request settings {path} must hold a JSON object of request body fields "
                         f"(e.g. {{\"temperature\": 0.2}}), not {type(data).__name__}")
    return loop_names(data, f"request settings {path}")


def owned_problem(fields: Mapping[str, Any], source: str) -> str | None:
    """Why ``fields`` may not be request settings (the first owned field), or None."""
    for key in fields:
        if key in OWNED:
            return f"{source}: {key} is set by toolrelay, not a request setting: use {OWNED[key]}"
    return None


def loop_names(fields: Mapping[str, Any], source: str) -> dict[str, Any]:
    """``fields`` checked, in the loop's names (``max_completion_tokens`` →
    ``max_output_tokens``, ``reasoning_effort`` → ``reasoning.effort``)."""
    why = owned_problem(fields, source)
    if why is not None:
        raise UsageError(why)
    named: dict[str, Any] = {}
    for key, value in fields.items():
        key = _LOOP_NAMES.get(key, key)
        if key in named:
            raise UsageError(f"{source}: max_output_tokens and max_completion_tokens say the same: give one")
        named[key] = value
    if "reasoning_effort" in named:
        effort = named.pop("reasoning_effort")
        reasoning = named.get("reasoning", {})
        if not isinstance(reasoning, dict) or "effort" in reasoning:
            raise UsageError(f"{source}: reasoning_effort and reasoning.effort say the same: give one")
        named["reasoning"] = {**reasoning, "effort": effort}
    for key in SAMPLING:
        if key in named and (why := sampling_problem(key, named[key])) is not None:
            raise UsageError(f"{source}: {why}")
    return named


def dialect_fields(fields: Mapping[str, Any], api: str, source: str) -> dict[str, Any]:
    """The settings (in the loop's names) as a request of ``api`` carries them: see the
    module docstring; ``UsageError`` naming ``source`` for what the API cannot say."""
    found = dict(fields)
    if api == "chat":
        return _for_chat(found, source)
    if "seed" in found:
        raise UsageError(f"{source}: {SEED_NEEDS_CHAT}: it needs --api chat (api {api!r})")
    if "logprobs" in found:
        raise UsageError(f"{source}: logprobs is a Chat Completions field: give top_logprobs (0 to 20), "
                         "which asks for logprobs in both APIs")
    if "response_format" in found or "verbosity" in found:
        text = found.get("text", {})
        if not isinstance(text, dict) or ("format" in text and "response_format" in found) \
                or ("verbosity" in text and "verbosity" in found):
            raise UsageError(f"{source}: response_format / verbosity and text say the same: give text")
        if "response_format" in found:
            text = {**text, "format": _text_format(found.pop("response_format"))}
        if "verbosity" in found:
            text = {**text, "verbosity": found.pop("verbosity")}
        found["text"] = text
    return found


def _for_chat(found: dict[str, Any], source: str) -> dict[str, Any]:
    for key in RESPONSES_ONLY:
        if key in found:
            raise UsageError(f"{source}: {key} is a Responses field Chat Completions has not "
                             "(with --api chat leave it out; --top-logprobs asks for logprobs in both APIs)")
    reasoning = found.get("reasoning")
    if reasoning is not None and (not isinstance(reasoning, dict) or set(reasoning) - {"effort"}):
        raise UsageError(f"{source}: Chat Completions takes only reasoning's effort (reasoning_effort), "
                         f"not {reasoning!r}")
    if "logprobs" in found and "top_logprobs" in found:
        if found["logprobs"] is not True:
            raise UsageError(f"{source}: top_logprobs asks for logprobs: logprobs cannot be "
                             f"{found['logprobs']!r}")
        del found["logprobs"]  # implied: the chat adapter sends it with top_logprobs
    text = found.pop("text", None)
    if text is None:
        return found
    if not isinstance(text, dict):
        raise UsageError(f"{source}: text must be an object (format, verbosity), not {text!r}")
    twice = ("format" in text and "response_format" in found) or (
        "verbosity" in text and "verbosity" in found)
    if twice or set(text) - {"format", "verbosity"}:
        raise UsageError(f"{source}: Chat Completions takes text's format (response_format) and verbosity "
                         f"once each, not {text!r}")
    if "format" in text:
        found["response_format"] = _response_format(text["format"])
    if "verbosity" in text:
        found["verbosity"] = text["verbosity"]
    return found


def _response_format(format_: Any) -> Any:
    """A Responses ``text.format`` as a chat ``response_format`` (a JSON schema nested)."""
    if isinstance(format_, dict) and format_.get("type") == "json_schema":
        schema = {key: value for key, value in format_.items() if key != "type"}
        return {"type": "json_schema", "json_schema": schema}
    return format_


def _text_format(response_format: Any) -> Any:
    """A chat ``response_format`` as a Responses ``text.format``."""
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema" \
            and isinstance(response_format.get("json_schema"), dict):
        return {"type": "json_schema", **response_format["json_schema"]}
    return response_format
