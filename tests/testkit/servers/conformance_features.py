"""The conformance suite's tool fixtures, and its resources, prompts and completion besides.

``ConformanceService`` has the tools the suite's server scenarios call; this one adds
what its ``resources-*``, ``prompts-*`` and ``completion-complete`` scenarios read, as
the scenarios' descriptions ask (``test://static-text``, ``test://template/{id}/data``,
``test_prompt_with_arguments``, ...), through the server stack's method table
(``toolrelay.server.features``). It is the server ``tests/proxy/test_proxy_conformance.py``
runs the suite against directly and through ``toolrelay proxy``. Run as a program, it
serves itself over stdio (``python conformance_features.py [--prompt-prefix P] [--fail-lists]``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping
from typing import Any, Final

from toolrelay.errors import RpcError
from toolrelay.protocol import mcp as m
from toolrelay.protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS
from toolrelay.server.app import CallContext
from toolrelay.server.features import FeatureHandler

try:
    from .conformance_service import PNG, ConformanceService
except ImportError:  # run as a program
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    from testkit.servers.conformance_service import PNG, ConformanceService

CRASH_URI: Final = "test://crash"
"""Reading it ends the server's process before it answers (unlisted)."""
RESOURCE_NOT_FOUND: Final = -32002
"""The code the 2025 revisions' servers give an unknown resource (SEP-2164 makes it -32602)."""

_RESOURCES: Final = {
    "test://static-text": ("Static text", "text/plain",
                           {"text": "This is the content of the static text resource."}),
    "test://static-binary": ("Static binary", "image/png", {"blob": PNG}),
    "test://watched-resource": ("Watched", "text/plain", {"text": "Watched resource content."}),
}
_TEMPLATE: Final = "test://template/{id}/data"
_PROMPTS: Final[list[dict[str, Any]]] = [
    {"name": "test_simple_prompt", "description": "A simple prompt without arguments"},
    {"name": "test_prompt_with_arguments", "description": "A prompt with two arguments",
     "arguments": [{"name": "arg1", "description": "First test argument", "required": True},
                   {"name": "arg2", "description": "Second test argument", "required": True}]},
    {"name": "test_prompt_with_embedded_resource", "description": "A prompt with an embedded resource",
     "arguments": [{"name": "resourceUri", "description": "URI of the resource to embed", "required": True}]},
    {"name": "test_prompt_with_image", "description": "A prompt with an image"},
]


def _user(content: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": content}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


class ConformanceFeatures(ConformanceService):
    """The fixtures, with resources (one template, subscriptions), prompts and completion."""

    name = "conformance-everything"

    def __init__(self, reconnection_seconds: float = 0.3, prompt_prefix: str = "",
                 fail_lists: bool = False) -> None:
        super().__init__(reconnection_seconds)
        self.fail_lists = fail_lists
        """Answer ``resources/list`` with a JSON-RPC error (a server whose list fails)."""
        self.subscribed: set[str] = set()
        self.prompt_prefix = prompt_prefix
        self.added = 0
        """How many prompts ``test_add_prompt`` added (``added_1``, ...)."""
        """Put before every prompt name (a test makes two servers' prompts clash with it)."""

    def tools(self) -> list[dict[str, Any]]:
        adder = {"name": "test_add_prompt", "description": "Adds a prompt and a resource, and says so",
                 "inputSchema": {"type": "object", "properties": {}}}
        return [*super().tools(), adder]

    def call(self, name: str, arguments: dict[str, Any], context: CallContext) -> Any:
        if name != "test_add_prompt":
            return super().call(name, arguments, context)
        self.added += 1
        if context.peer is not None:  # the lists changed: told before the answer
            context.peer.notify(m.PROMPTS_CHANGED)
            context.peer.notify(m.RESOURCES_CHANGED)
        return {"content": [_text(f"added prompt added_{self.added}")]}

    def feature_capabilities(self) -> dict[str, Any]:
        return {"resources": {"subscribe": True, "listChanged": True}, "prompts": {"listChanged": True},
                "completions": {}}

    def feature_methods(self) -> Mapping[str, FeatureHandler]:
        return {
            m.LIST_RESOURCES: self._list_resources, m.LIST_RESOURCE_TEMPLATES: self._list_templates,
            m.READ_RESOURCE: self._read, m.SUBSCRIBE_RESOURCE: self._subscribe,
            m.UNSUBSCRIBE_RESOURCE: self._unsubscribe, m.LIST_PROMPTS: self._list_prompts,
            m.GET_PROMPT: self._get_prompt, m.COMPLETE: self._complete,
        }

    def _list_resources(self, params: dict[str, Any] | None, context: CallContext) -> dict[str, Any]:
        if self.fail_lists:
            raise RpcError(INTERNAL_ERROR, "Internal error: the resource list is out of order")
        return {"resources": [{"uri": uri, "name": name, "description": f"{name} resource", "mimeType": mime}
                              for uri, (name, mime, _) in _RESOURCES.items()]}

    def _list_templates(self, params: dict[str, Any] | None, context: CallContext) -> dict[str, Any]:
        return {"resourceTemplates": [{"uriTemplate": _TEMPLATE, "name": "Template",
                                       "description": "Data for an id", "mimeType": "application/json"}]}

    async def _read(self, params: dict[str, Any] | None, context: CallContext) -> dict[str, Any]:
        await asyncio.sleep(0)
        uri = m.require_str(params, "uri")
        if uri == CRASH_URI:  # a server that dies mid-request
            os._exit(7)
        if uri in _RESOURCES:
            _, mime, body = _RESOURCES[uri]
            return {"contents": [{"uri": uri, "mimeType": mime, **body}]}
        prefix, suffix = _TEMPLATE.split("{id}")
        if uri.startswith(prefix) and uri.endswith(suffix) and len(uri) > len(prefix) + len(suffix):
            ident = uri[len(prefix):-len(suffix)]
            data = {"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"}
            return {"contents": [{"uri": uri, "mimeType": "application/json", "text": json.dumps(data)}]}
        code = INVALID_PARAMS if context.protocol_version and context.protocol_version > "2025-11-25" \
            else RESOURCE_NOT_FOUND
        raise RpcError(code, f"Resource not found: {uri}", {"uri": uri})

    def _subscribe(self, params: dict[str, Any] | None, context: CallContext) -> dict[str, Any]:
        uri = m.require_str(params, "uri")
        self.subscribed.add(uri)
        if context.peer is not None:  # "it changed" at once, so that a test sees an update arrive
            context.peer.notify(m.RESOURCE_UPDATED, {"uri": uri})
        return {}

    def _unsubscribe(self, params: dict[str, Any] | None, context: CallContext) -> dict[str, Any]:
        self.subscribed.discard(m.require_str(params, "uri"))
        return {}

    def _list_prompts(self, params: dict[str, Any] | None, context: CallContext) -> dict[str, Any]:
        added = [{"name": f"added_{n}", "description": "An added prompt"} for n in range(1, self.added + 1)]
        return {"prompts": [{**prompt, "name": self.prompt_prefix + prompt["name"]}
                            for prompt in [*_PROMPTS, *added]]}

    def _get_prompt(self, params: dict[str, Any] | None, context: CallContext) -> dict[str, Any]:
        name = m.require_str(params, "name").removeprefix(self.prompt_prefix)
        args = m.require_object(params, "arguments", optional=True)
        if name == "test_simple_prompt":
            return {"messages": [_user(_text("This is a simple prompt for testing."))]}
        if name == "test_prompt_with_arguments":
            said = f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'"
            return {"messages": [_user(_text(said))]}
        if name == "test_prompt_with_embedded_resource":
            uri = str(args.get("resourceUri", "test://example-resource"))
            resource = {"uri": uri, "mimeType": "text/plain",
                        "text": "Embedded resource content for testing."}
            return {"messages": [_user({"type": "resource", "resource": resource}),
                                 _user(_text("Please process the embedded resource above."))]}
        if name == "test_prompt_with_image":
            return {"messages": [_user({"type": "image", "data": PNG, "mimeType": "image/png"}),
                                 _user(_text("Please analyze the image above."))]}
        raise RpcError(INVALID_PARAMS, f"Unknown prompt: {name}")

    def _complete(self, params: dict[str, Any] | None, context: CallContext) -> dict[str, Any]:
        argument = m.require_object(params, "argument")
        value = str(argument.get("value", ""))
        values = [v for v in ("testValue1", "testValue2", "other") if v.startswith(value)]
        return {"completion": {"values": values, "total": len(values), "hasMore": False}}


if __name__ == "__main__":
    from toolrelay.server.stdio import serve_stdio

    prefix = sys.argv[sys.argv.index("--prompt-prefix") + 1] if "--prompt-prefix" in sys.argv else ""
    asyncio.run(serve_stdio(ConformanceFeatures(prompt_prefix=prefix, fail_lists="--fail-lists" in sys.argv)))
