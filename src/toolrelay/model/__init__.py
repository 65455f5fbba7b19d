"""The model client: toolrelay's Responses API HTTP client.

``ResponsesClient`` posts toolrelay's own request bodies to any Responses endpoint
(OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio, llama-server, the offline stand-in) and
keeps the exact bytes; every failure it raises is a ``ModelError`` of ``errors.py``.
The offline stand-in model is a separate package (``toolrelay.offline``).

Layering: it imports only bottom modules (``protocol``, ``errors``, ``events``,
``loopback``, ``redaction``, ``_version``); never ``relay``, ``client``, ``offline``,
``server`` or ``runner``.
"""

from __future__ import annotations

from .client import ModelReply, ResponsesClient
from .endpoint import ModelEndpoint
from .failures import check_reply, classify_failure

__all__ = [
    "ModelEndpoint",
    "ModelReply",
    "ResponsesClient",
    "check_reply",
    "classify_failure",
]
