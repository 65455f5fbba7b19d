"""The model client: the model seam and toolrelay's Responses API HTTP client.

``ModelClient`` / ``ModelReply`` (``reply.py``) are the seam the loop and sampling use.
``ResponsesClient``, its Responses adapter, posts toolrelay's own request bodies to any
Responses endpoint (OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio, llama-server, the
offline stand-in) and keeps the exact bytes; every failure it raises is a ``ModelError`` of ``errors.py``.
The offline stand-in model is a separate package (``toolrelay.offline``).

Layering: it imports only bottom modules (``protocol``, ``errors``, ``events``,
``loopback``, ``redaction``, ``_version``); never ``relay``, ``client``, ``offline``,
``server`` or ``runner``.
"""

from __future__ import annotations

from .client import ResponsesClient
from .endpoint import ModelEndpoint
from .failures import check_reply, classify_failure
from .reply import ModelClient, ModelReply

__all__ = [
    "ModelClient",
    "ModelEndpoint",
    "ModelReply",
    "ResponsesClient",
    "check_reply",
    "classify_failure",
]
