"""Elicitation (``elicitation/create``): a server asks the user for input, as a form or (from
2025-11-25) by sending them to a URL.

The request is parsed and checked here (``parse_elicitation``): a request without
``mode`` is a form; a mode the connection did not declare, or a schema outside the
spec's restricted set, is -32602. Who answers is an ``Elicitor`` callback: the CLI's
terminal prompt, one of the policies below, or the library caller's own.

Policies: ``accept_defaults`` accepts a form with its schema's defaults without asking
(SEP-1034; optional fields without a default are left out), declines a form with a required
field that has no (fitting) default, since no content could satisfy the schema, and declines
URL mode, for scripts and the conformance driver; ``declining(note)`` declines everything,
telling the user why.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ...errors import RpcError
from ...protocol.jsonrpc import INVALID_PARAMS, JSONObject, RequestId
from .forms import FormField, form_fields, schema_defaults

__all__ = [
    "ElicitationAnswer",
    "ElicitationRequest",
    "Elicitor",
    "accept_defaults",
    "declining",
    "parse_elicitation",
]

FORM: Final = "form"
URL: Final = "url"
Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ElicitationRequest:
    """One ``elicitation/create``, checked, and who asks."""

    server: str
    call_id: str | None
    """The model's call during which the server asked, when known."""
    mode: str
    """``form`` or ``url``."""
    message: str
    fields: list[FormField] = field(default_factory=list)
    """The form's fields (form mode)."""
    url: str | None = None
    """The URL to open (URL mode): shown in full, never fetched, opened only after consent."""
    elicitation_id: str | None = None
    params: JSONObject = field(default_factory=dict)
    """The request's params exactly as received."""
    request_id: RequestId | None = None
    """The server's JSON-RPC id of the request (2026-07-28: the key of the input request)."""

    def defaults(self) -> dict[str, Any]:
        """SEP-1034: the schema's defaults (the form pre-filled)."""
        return schema_defaults(self.fields)


@dataclass(frozen=True, slots=True)
class ElicitationAnswer:
    """The user's answer: accept (with the form's content), decline or cancel."""

    action: Action
    content: dict[str, Any] | None = None
    """The form's values (accept in form mode only; URL mode sends none)."""
    note: str | None = None
    """Told to the user (a notice) when the answer was given without asking them; never sent."""

    def result(self) -> JSONObject:
        """The ``ElicitResult``."""
        result: JSONObject = {"action": self.action}
        if self.action == "accept" and self.content is not None:
            result["content"] = self.content
        return result


Elicitor = Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]]
"""Answers an elicitation: a terminal prompt, a policy, or the library caller's own."""


def parse_elicitation(
    params: JSONObject | None, *, server: str, call_id: str | None, url_mode: bool
) -> ElicitationRequest:
    """The request, checked; RpcError -32602 for what a client must refuse."""
    params = params or {}
    mode = params.get("mode", FORM)
    message = params.get("message")
    if not isinstance(message, str):
        raise RpcError(INVALID_PARAMS, 'Invalid params: "message" must be a string')
    if mode == URL and url_mode:
        url, elicitation_id = params.get("url"), params.get("elicitationId")
        if not isinstance(url, str) or not isinstance(elicitation_id, str):
            raise RpcError(INVALID_PARAMS, 'Invalid params: URL mode needs "url" and "elicitationId" strings')
        return ElicitationRequest(server=server, call_id=call_id, mode=URL, message=message, url=url,
                                  elicitation_id=elicitation_id, params=params)
    if mode != FORM:
        declared = "form and url" if url_mode else "form"
        raise RpcError(INVALID_PARAMS, f"Invalid params: elicitation mode {mode!r} was not declared "
                                       f"(toolrelay declared {declared})")
    try:
        fields = form_fields(params.get("requestedSchema"))
    except ValueError as exc:
        raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from None
    return ElicitationRequest(server=server, call_id=call_id, mode=FORM, message=message, fields=fields,
                              params=params)


async def accept_defaults(request: ElicitationRequest) -> ElicitationAnswer:
    """``--elicit defaults``: a form is accepted with its defaults, unasked; URL mode declined."""
    if request.mode == URL:
        return ElicitationAnswer("decline", note=(
            f"server {request.server} asked you to open {request.url} (URL elicitation); declined: "
            "--elicit defaults accepts forms only"))
    content = request.defaults()
    asked = f"server {request.server} asked for input ({request.message!r})"
    needed = [f.name for f in request.fields if f.required and f.name not in content]
    if needed:
        return ElicitationAnswer("decline", note=(
            f"{asked}; declined: --elicit defaults has no default for the required field(s) "
            f"{', '.join(needed)}"))
    left = [f.name for f in request.fields if f.name not in content]
    unset = f"; without a default, left out: {', '.join(left)}" if left else ""
    return ElicitationAnswer("accept", content, note=(
        f"{asked}; accepted with the form's defaults (--elicit defaults){unset}"))


def declining(hint: str) -> Elicitor:
    """Every elicitation is declined, and the user told so, with ``hint`` (which option
    would let them answer)."""

    async def decline(request: ElicitationRequest) -> ElicitationAnswer:
        what = f"to open {request.url}" if request.mode == URL else f"for input ({request.message!r})"
        return ElicitationAnswer("decline", note=f"server {request.server} asked {what}; declined: {hint}")

    return decline
