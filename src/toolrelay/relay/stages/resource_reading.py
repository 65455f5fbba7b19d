"""The pure half of ``--expose-resources``: the reader tool's route and declaration, and
what a ``resources/read`` answer means.

``outcome_from_read`` is the one classification of a ``resources/read`` exchange; ``verify``
calls it on the recorded messages as the live path (``resource_tool.py``) does.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final

from ...protocol import mcp as m
from ...protocol.exchange import Exchange
from .alias import MAX_ALIAS_LENGTH, SEPARATOR, server_prefix
from .parse import FunctionCall
from .result import CallExchange, CallOutcome, CallRoute, Verdict
from .route import Route

__all__ = [
    "READ_TOOL", "contents_result", "declaration", "describe", "free_alias", "outcome_from_read",
    "plain_alias", "reader_route",
]

READ_TOOL: Final = "read_resource"
"""The synthetic tool's name after its server's prefix."""
_SHOWN_RESOURCES: Final = 5
_SHOWN_TEMPLATES: Final = 3
_SHOWN_CHARS: Final = 160
_RULE: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"uri": {"type": "string", "description": "the resource's URI, e.g. from a resource_link"}},
    "required": ["uri"],
    "additionalProperties": False,
}


def reader_route(
    alias: str, server: str, resources: list[dict[str, Any]], templates: list[dict[str, Any]]
) -> Route:
    """The route of ``server``'s reader, described from its listed resources and templates."""
    return Route(alias=alias, server=server, tool=m.READ_RESOURCE, rule=_RULE,
                 description=describe(server, resources, templates), annotations={"readOnlyHint": True},
                 reads_resources=True)


def describe(server: str, resources: list[dict[str, Any]], templates: list[dict[str, Any]]) -> str:
    """The reader's description: what it does, and a few of the server's resources."""
    shown = [_resource_line(r) for r in resources[:_SHOWN_RESOURCES]]
    if len(resources) > _SHOWN_RESOURCES:
        shown.append(f"... and {len(resources) - _SHOWN_RESOURCES} more")
    shown += [_clip(f"{t.get('uriTemplate')} (template)") for t in templates[:_SHOWN_TEMPLATES]]
    return (f"Read a resource of server {server} by its URI (for example one a resource_link in a "
            f"tool result points at). Its resources include: {'; '.join(shown)}.")


def declaration(route: Route, *, strict: bool) -> dict[str, Any]:
    """The Responses ``tools`` entry of a read route."""
    return {"type": "function", "name": route.alias, "description": route.description,
            "parameters": route.rule, "strict": strict}


def free_alias(server: str, used: set[str]) -> str:
    """``<server>__read_resource``, the server's part cut to fit 64 characters, suffixed
    ``_2``, ``_3``... while the name is taken."""
    for suffix in ("", *(f"_{n}" for n in range(2, 100))):
        alias = _cut_alias(server, suffix)
        if alias not in used:
            return alias
    raise ValueError(f"no free alias for the resource reader of server {server}")


def _cut_alias(server: str, suffix: str) -> str:
    tail = SEPARATOR + READ_TOOL + suffix
    return server_prefix(server).removesuffix(SEPARATOR)[: MAX_ALIAS_LENGTH - len(tail)] + tail


def _resource_line(resource: dict[str, Any]) -> str:
    label = resource.get("title") or resource.get("name")
    return _clip(f"{resource.get('uri')} ({label})" if label else str(resource.get("uri")))


def _clip(line: str) -> str:
    """A server's names are its own words: each line of the description is kept short."""
    return line if len(line) <= _SHOWN_CHARS else line[: _SHOWN_CHARS - 1] + "…"


def outcome_from_read(
    exchange: Exchange, *, call: FunctionCall, route: CallRoute, arguments: dict[str, Any] | None = None,
) -> CallOutcome:
    """Classify a completed ``resources/read``: the server's refusal (protocol error, in its
    words), a malformed answer, or the contents as a result (ok)."""
    return CallOutcome(
        call=call, route=route, arguments=arguments, verdict=_read_verdict(exchange),
        elapsed=exchange.elapsed,
        exchange=CallExchange(mcp_id=exchange.mcp_id, request=exchange.request, response=exchange.response),
    )


def _read_verdict(exchange: Exchange) -> Verdict:
    if exchange.error is not None:
        error = exchange.error
        return Verdict(status="protocol_error", error_code=error.code, error_data=error.data,
                       message=error.message)
    contents = (exchange.result or {}).get("contents")
    if not isinstance(contents, list) or not all(isinstance(item, dict) for item in contents):
        return Verdict(status="protocol_error", message='server returned a malformed resources/read result: '
                                                        '"contents" must be an array of objects')
    return Verdict(status="ok", result=contents_result(contents))


def contents_result(contents: list[dict[str, Any]]) -> dict[str, Any]:
    """Resource contents as a tool result the feedback renders: text as text, a blob as a
    line naming its URI, MIME type and size."""
    blocks = [_content_block(item) for item in contents]
    return {"content": blocks or [{"type": "text", "text": "(the resource has no contents)"}]}


def _content_block(item: dict[str, Any]) -> dict[str, Any]:
    text = item.get("text")
    if isinstance(text, str):
        return {"type": "text", "text": text}
    mime = item.get("mimeType") if isinstance(item.get("mimeType"), str) else "unknown type"
    size = _blob_size(item.get("blob"))
    return {"type": "text", "text": f"[binary resource {item.get('uri')}: {mime}, {size}]"}


def _blob_size(blob: Any) -> str:
    if not isinstance(blob, str):
        return "no data"
    try:
        return f"{len(base64.b64decode(blob, validate=True))} bytes"
    except (binascii.Error, ValueError):
        return f"{len(blob)} characters of data that is not base64"


def plain_alias(server: str) -> str:
    """``<server>__read_resource`` cut to fit, unsuffixed."""
    return _cut_alias(server, "")
