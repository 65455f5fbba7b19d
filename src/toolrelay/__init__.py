"""toolrelay: connect a model's function calls (OpenAI Responses API) to MCP tool servers.

The public names are imported lazily, so ``import toolrelay`` stays cheap for the CLI.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

# public name → module that defines it
_EXPORTS: dict[str, str] = {
    "BatchOptions": "toolrelay.batches",
    "CallContext": "toolrelay.relay.stages.context",
    "CallFinished": "toolrelay.relay.run_events",
    "CallHook": "toolrelay.relay.stages.context",
    "CallOutcome": "toolrelay.relay.stages.result",
    "CallStarted": "toolrelay.relay.run_events",
    "Catalog": "toolrelay.relay.catalog",
    "EventStream": "toolrelay.events",
    "ReasoningDelta": "toolrelay.relay.run_events",
    "Refusal": "toolrelay.relay.stages.context",
    "Relay": "toolrelay.relay.loop",
    "RunLimits": "toolrelay.relay.loop",
    "RunOptions": "toolrelay.runner",
    "RunFinished": "toolrelay.relay.run_events",
    "RunResult": "toolrelay.relay.stages.run_result",
    "ServerConfig": "toolrelay.client.config",
    "FunctionCall": "toolrelay.relay.stages.parse",
    "ServerListing": "toolrelay.relay.offer",
    "TextDelta": "toolrelay.relay.run_events",
    "TextDone": "toolrelay.relay.run_events",
    "Content": "toolrelay.functions.results",
    "ToolContext": "toolrelay.functions.context",
    "ToolError": "toolrelay.functions.results",
    "ToolFilter": "toolrelay.relay.offer",
    "ToolrelayError": "toolrelay.errors",
    "Withheld": "toolrelay.relay.offer",
    "TaskResult": "toolrelay.batches",
    "TurnFinished": "toolrelay.relay.run_events",
    "batch": "toolrelay.batches",
    "batch_async": "toolrelay.batches",
    "connect": "toolrelay.assembly.catalogs",
    "load_run": "toolrelay.verify",
    "run": "toolrelay.runner",
    "run_async": "toolrelay.runner",
    "run_stream": "toolrelay.runner",
    "tool": "toolrelay.functions.tool",
    "tools_server": "toolrelay.functions.tool",
    "verify": "toolrelay.verify",
}

# conversations (toolrelay.conversation), the typed keywords of run(), the model seam a
# Relay is built with, and the branches of the exception tree a caller catches
_EXPORTS.update({
    "Conversation": "toolrelay.conversation",
    "ModelClient": "toolrelay.model.reply",
    "ModelError": "toolrelay.errors",
    "ModelReply": "toolrelay.model.reply",
    "ProtocolError": "toolrelay.errors",
    "RunKeywords": "toolrelay.assembly.options",
    "SyncConversation": "toolrelay.conversation",
    "TransportError": "toolrelay.errors",
    "UsageError": "toolrelay.errors",
})

__all__ = sorted([*_EXPORTS, "__version__"])

if TYPE_CHECKING:
    from .assembly.catalogs import connect as connect
    from .assembly.options import RunKeywords as RunKeywords
    from .batches import BatchOptions as BatchOptions
    from .batches import TaskResult as TaskResult
    from .batches import batch as batch
    from .batches import batch_async as batch_async
    from .client.config import ServerConfig as ServerConfig
    from .conversation import Conversation as Conversation
    from .conversation import SyncConversation as SyncConversation
    from .errors import ModelError as ModelError
    from .errors import ProtocolError as ProtocolError
    from .errors import ToolrelayError as ToolrelayError
    from .errors import TransportError as TransportError
    from .errors import UsageError as UsageError
    from .events import EventStream as EventStream
    from .functions.context import ToolContext as ToolContext
    from .functions.results import Content as Content
    from .functions.results import ToolError as ToolError
    from .functions.tool import tool as tool
    from .functions.tool import tools_server as tools_server
    from .model.reply import ModelClient as ModelClient
    from .model.reply import ModelReply as ModelReply
    from .relay.catalog import Catalog as Catalog
    from .relay.loop import Relay as Relay
    from .relay.loop import RunLimits as RunLimits
    from .relay.offer import ServerListing as ServerListing
    from .relay.offer import ToolFilter as ToolFilter
    from .relay.offer import Withheld as Withheld
    from .relay.run_events import CallFinished as CallFinished
    from .relay.run_events import CallStarted as CallStarted
    from .relay.run_events import ReasoningDelta as ReasoningDelta
    from .relay.run_events import RunFinished as RunFinished
    from .relay.run_events import TextDelta as TextDelta
    from .relay.run_events import TextDone as TextDone
    from .relay.run_events import TurnFinished as TurnFinished
    from .relay.stages.context import CallContext as CallContext
    from .relay.stages.context import CallHook as CallHook
    from .relay.stages.context import Refusal as Refusal
    from .relay.stages.parse import FunctionCall as FunctionCall
    from .relay.stages.result import CallOutcome as CallOutcome
    from .relay.stages.run_result import RunResult as RunResult
    from .runner import RunOptions as RunOptions
    from .runner import run as run
    from .runner import run_async as run_async
    from .runner import run_stream as run_stream
    from .verify import load_run as load_run
    from .verify import verify as verify


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolrelay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    # REPL and IDE completion read dir(): the public names (the lazy ones are not in
    # globals() until first used), not this module's helpers (Any, importlib, ...) nor the
    # submodules imported meanwhile.
    return sorted(__all__)


class _Package(types.ModuleType):
    """``toolrelay`` itself: a public name that is also a subpackage's (``verify``, the
    function, and ``toolrelay.verify``, the package) stays the public one when the import
    system binds the subpackage on its parent, so ``toolrelay.verify(run)`` works whatever
    was imported first (``from toolrelay.verify import …`` reads ``sys.modules`` and is
    unaffected)."""

    def __setattr__(self, name: str, value: Any) -> None:
        submodule = isinstance(value, types.ModuleType) and value.__name__ == f"{__name__}.{name}"
        if submodule and name in _EXPORTS:
            return  # the subpackage is in sys.modules; the name is left to __getattr__'s public value
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
