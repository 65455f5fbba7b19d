"""The offline stand-in model: a deterministic Responses endpoint served on loopback HTTP.

``OfflineModel`` (``--model offline``) answers ``POST /v1/responses`` exactly as the
hosted API would — the full ``Response`` object, the API's 400 error bodies, SSE when
``stream`` is true — following a script (``Script``, ``load_script``) or the seed's
scenario. It is a separate program from the model client: it serves on toolrelay's one
HTTP server (``httpserver``) on 127.0.0.1, so the client takes the real HTTP path.

Layering: it imports only bottom modules (``protocol``, ``httpserver``, ``errors``,
``loopback``); never ``model``, ``relay``, ``client``, ``server`` or ``runner``.
"""

from __future__ import annotations

from .script import Script, ScriptedCall, ScriptTurn, load_script, parse_script
from .standin import OfflineModel

__all__ = ["OfflineModel", "Script", "ScriptTurn", "ScriptedCall", "load_script", "parse_script"]
