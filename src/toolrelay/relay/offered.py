"""Resources and prompts of the catalog's servers, ready for a run or a command.

Which server a resource URI belongs to (the one that lists it, else one whose template
matches it, else the only server with resources), a prompt's messages as Responses input
items, and resource contents as input parts. Everything the servers send goes through
the same content rendering as tool results (``feedback``), so an image is an image and a
text blob is text here too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..client.connection import Connection
from ..client.offers import (
    get_prompt,
    list_prompts,
    list_resource_templates,
    list_resources,
    offers,
    read_resource,
    subscribe_resource,
    subscribes,
)
from ..errors import RpcError, UsageError
from ..events import Notice
from ..protocol.jsonrpc import JSONObject
from ..protocol.responses import INPUT_TEXT, MESSAGE, OUTPUT_TEXT, InputPart
from .stages.feedback import DEFAULT_MEDIA_BUDGET, content_parts

__all__ = [
    "Listed",
    "PromptInput",
    "list_offered",
    "prompt_input",
    "read_contents",
    "resource_parts",
    "server_for_uri",
    "split_prompt_name",
    "starting_input",
]

_TEMPLATE_VARIABLE: Final = re.compile(r"\{([+#./;?&]?)([^}]*)\}")


@dataclass(frozen=True, slots=True)
class Listed:
    """One server's resources, templates or prompts (``items``), as it listed them."""

    server: str
    items: list[JSONObject]


async def list_offered(connections: dict[str, Connection], what: str) -> list[Listed]:
    """``what`` (``resources``, ``templates`` or ``prompts``) of every server that offers it."""
    feature = "prompts" if what == "prompts" else "resources"
    listers = {"resources": list_resources, "templates": list_resource_templates, "prompts": list_prompts}
    lister = listers[what]
    return [Listed(name, await lister(connection))
            for name, connection in connections.items() if offers(connection, feature)]


def _template_pattern(template: str) -> re.Pattern[str]:
    """An RFC 6570 template as a regex: ``{var}`` matches one path segment, ``{+var}`` more."""
    pattern, last = "", 0
    for match in _TEMPLATE_VARIABLE.finditer(template):
        pattern += re.escape(template[last:match.start()])
        pattern += ".*" if match.group(1) in ("+", "#") else "[^/?#]*"
        last = match.end()
    return re.compile(pattern + re.escape(template[last:]))


async def server_for_uri(connections: dict[str, Connection], uri: str, server: str | None = None) -> str:
    """The server to read ``uri`` from: ``server`` when given, else the one that lists it,
    else one whose template matches it, else the only server with resources."""
    with_resources = {name: c for name, c in connections.items() if offers(c, "resources")}
    if server is not None:
        if server not in with_resources:
            offering = ", ".join(with_resources) or "none"
            raise UsageError(f"server {server!r} offers no resources (servers with resources: {offering})")
        return server
    if not with_resources:
        raise UsageError("no connected server offers resources")
    listed = await list_offered(with_resources, "resources")
    owners = [entry.server for entry in listed if any(item.get("uri") == uri for item in entry.items)]
    if not owners:
        templates = await list_offered(with_resources, "templates")
        owners = [entry.server for entry in templates if any(
            isinstance(t.get("uriTemplate"), str) and _template_pattern(t["uriTemplate"]).fullmatch(uri)
            for t in entry.items)]
    if not owners and len(with_resources) == 1:
        owners = list(with_resources)
    if len(owners) != 1:
        why = "none of them lists it" if not owners else f"{', '.join(owners)} all offer it"
        raise UsageError(f"which server's resource is {uri}? {why}: name one with --server "
                         f"({', '.join(with_resources)})")
    return owners[0]


async def read_contents(connection: Connection, uri: str) -> list[JSONObject]:
    """``resources/read`` of ``uri``; a refusal says which server and which URI."""
    try:
        return await read_resource(connection, uri)
    except RpcError as exc:
        raise RpcError(exc.code, f"server {connection.name} could not read {uri}: {exc.rpc_message}",
                       exc.data) from None


def resource_parts(
    contents: list[JSONObject], *, media_budget: int = DEFAULT_MEDIA_BUDGET
) -> list[InputPart]:
    """A resource's contents as input parts (text as text, images and files as parts)."""
    blocks = [{"type": "resource", "resource": item} for item in contents]
    return content_parts(blocks, media_budget=media_budget)


def split_prompt_name(given: str) -> tuple[str, str]:
    """``SERVER/NAME`` → (server, name); a usage error otherwise."""
    server, slash, name = given.partition("/")
    if not slash or not server or not name:
        raise UsageError(f"--prompt takes SERVER/NAME (as `toolrelay prompts` lists them), got {given!r}")
    return server, name


@dataclass(frozen=True, slots=True)
class PromptInput:
    """A prompt's messages as the run's first input items, and a line saying what it was."""

    items: list[dict[str, Any]]
    label: str


async def prompt_input(
    connections: dict[str, Connection], given: str, arguments: dict[str, str]
) -> PromptInput:
    """``prompts/get`` of ``SERVER/NAME`` with ``arguments``, as Responses input items."""
    server, name = split_prompt_name(given)
    connection = connections.get(server)
    if connection is None or not offers(connection, "prompts"):
        offering = ", ".join(n for n, c in connections.items() if offers(c, "prompts")) or "none"
        raise UsageError(
            f"--prompt {given}: server {server!r} offers no prompts (servers with prompts: {offering})"
        )
    try:
        result = await get_prompt(connection, name, arguments)
    except RpcError as exc:
        raise RpcError(exc.code, f"server {server} could not give prompt {name!r}: {exc.rpc_message}",
                       exc.data) from None
    items = [_message_item(message) for message in result["messages"]]
    shown = " ".join(f"{key}={value}" for key, value in arguments.items())
    return PromptInput(items, f"prompt {server}/{name}" + (f" ({shown})" if shown else ""))


async def starting_input(
    task: str,
    connections: dict[str, Connection],
    *,
    prompt: str | None = None,
    arguments: dict[str, str] | None = None,
    resources: Sequence[str] = (),
    media_budget: int = DEFAULT_MEDIA_BUDGET,
) -> tuple[str, list[dict[str, Any]] | None]:
    """The run's name and first input items: the task alone (None: one user message), or a
    server prompt's messages, then the task, with the ``resources`` attached to it."""
    if prompt is None and not resources:
        return task, None
    items: list[dict[str, Any]] = []
    name = task
    if prompt is not None:
        given = await prompt_input(connections, prompt, dict(arguments or {}))
        items.extend(given.items)
        name = task or given.label
    parts: list[InputPart] = [{"type": INPUT_TEXT, "text": task}] if task else []
    for uri in resources:
        server = await server_for_uri(connections, uri)
        parts.extend(resource_parts(await read_contents(connections[server], uri), media_budget=media_budget))
        await _subscribe(connections[server], uri)
    if parts:
        items.append({"type": MESSAGE, "role": "user", "content": parts})
    return name, items


async def _subscribe(connection: Connection, uri: str) -> None:
    """Follow an attached resource when its server allows it: an update is a notice
    (``client.link``); a refusal is only said, the run goes on without it."""
    if not subscribes(connection):
        return
    try:
        await subscribe_resource(connection, uri)
    except RpcError as exc:
        said = f"server {connection.name} will not tell updates of {uri}: {exc.rpc_message}"
        connection.events.emit(Notice(level="warning", text=said, server=connection.name))


def _message_item(message: JSONObject) -> dict[str, Any]:
    """One PromptMessage as an input message: the user's parts as input parts, the
    assistant's as its text (a Responses assistant message holds output text only)."""
    role = "assistant" if message.get("role") == "assistant" else "user"
    parts = content_parts([message.get("content")])
    if role == "user":
        return {"type": MESSAGE, "role": "user", "content": parts}
    text = "\n".join(
        part["text"] if part["type"] == INPUT_TEXT else "[media not replayable as the assistant's]"
        for part in parts
    )
    return {"type": MESSAGE, "role": "assistant", "content": [{"type": OUTPUT_TEXT, "text": text}]}
