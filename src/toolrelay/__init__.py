"""toolrelay: connect a model's function calls (OpenAI Responses API) to MCP tool servers.

The public names are imported lazily, so ``import toolrelay`` stays cheap for the CLI.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name → module that defines it
_EXPORTS: dict[str, str] = {
    "CallOutcome": "toolrelay.relay.result",
    "EventStream": "toolrelay.events",
    "ToolrelayError": "toolrelay.errors",
}

__all__ = sorted([*_EXPORTS, "__version__"])

if TYPE_CHECKING:
    from .errors import ToolrelayError as ToolrelayError
    from .events import EventStream as EventStream
    from .relay.result import CallOutcome as CallOutcome


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolrelay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
