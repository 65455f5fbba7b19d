"""The model side: the Responses API HTTP client and the offline stand-in model.

``ResponsesClient`` posts toolrelay's own request bodies to any Responses endpoint
(OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio, llama-server) and keeps the exact bytes;
``OfflineModel`` is a deterministic stand-in served on loopback HTTP that speaks the same
wire format, for tests, demos and benchmarks without a hosted model.

Layering: model/ imports only protocol/ and the bottom modules (errors, events, loopback,
redaction, _version); never relay/, client/, server/, files/, runner, cli/, transcript/,
verify/ or view/. The loop drives it through relay's ``ModelClient`` protocol.
"""

from __future__ import annotations

from .client import ModelReply, ResponsesClient
from .endpoint import ModelEndpoint
from .failures import check_reply, classify_failure
from .offline import OfflineModel
from .script import Script, load_script

__all__ = [
    "ModelEndpoint",
    "ModelReply",
    "OfflineModel",
    "ResponsesClient",
    "Script",
    "check_reply",
    "classify_failure",
    "load_script",
]
