"""What toolrelay offers MCP servers as their client: roots, sampling, elicitation, and
client-side tasks for the last two (revisions 2025-06-18 and 2025-11-25).

Sans-terminal: a server's request is checked and parsed here, and answered through
callbacks the caller injects (``Host``): the model that answers a sampling request
(``Sampler``), who approves it (``SamplingApprover``), who fills an elicitation form or
consents to a URL (``Elicitor``). The terminal prompts are the CLI's; the model is reached
through a callback the runner builds.

Layering: like the rest of client/, this package imports only protocol/ and the bottom
modules (errors, events, ...); never relay/, model/, the offline stand-in, runner or cli/.
"""

from __future__ import annotations

from .capabilities import client_capabilities
from .elicitation import (
    ElicitationAnswer,
    ElicitationRequest,
    Elicitor,
    accept_defaults,
    declining,
)
from .forms import FormField, form_fields, schema_defaults
from .requests import Host, ServerRequests
from .roots import Root, roots_from_paths
from .sampling import (
    Sampler,
    SamplingApprover,
    SamplingRefused,
    SamplingRequest,
    refusing_approval,
    refusing_sampler,
)

__all__ = [
    "ElicitationAnswer",
    "ElicitationRequest",
    "Elicitor",
    "FormField",
    "Host",
    "Root",
    "Sampler",
    "SamplingApprover",
    "SamplingRefused",
    "SamplingRequest",
    "ServerRequests",
    "accept_defaults",
    "client_capabilities",
    "declining",
    "form_fields",
    "refusing_approval",
    "refusing_sampler",
    "roots_from_paths",
    "schema_defaults",
]
