"""Which MCP era toolrelay's client speaks with a server, and the 2026-07-28 envelope on
its requests.

Asked for ``auto`` (the default), the client probes with ``server/discover`` (the newest revision's
first request). A discover result naming a revision we speak means the server is modern:
no handshake, and every later request carries the envelope (``enveloped``). Any other
answer (an error, an HTTP refusal) means a 2025 server, which then gets the handshake
asking 2025-11-25. A server that does not answer the probe at all costs ``PROBE_WAIT``:
the handshake is then sent beside it, and whichever answer decides first wins (a modern
server that was merely slow to start answers the probe first, and refuses the late
``initialize``: that refusal is waited for, up to ``SETTLE_WAIT``, since an ``initialize``
may not be cancelled and the transcript must show it answered). While the probe is pending its
answer decides: a refusal of the ``initialize`` sent beside it (a 2026-07-28-only server's
400, a 401) never does. A probe refused ``-32022`` with the revisions the server
``supported`` is sent once more at one of them that we speak. Pinned to 2026-07-28,
the client only probes, and a server that is not modern is an error; pinned to a 2025
revision, it never probes. Probing, the handshake's request id is 2 whether it is sent or
not, so the ids of what follows are the same however fast the server answered.

On HTTP a modern request repeats its revision, method and name in headers
(``modern_headers``), and a modern server's error comes with a 4xx status whose body is
the JSON-RPC error (``rpc_error_body``): that body is the answer, not a transport failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..errors import ProtocolError, RpcError, ToolrelayError
from ..protocol import mcp as m
from ..protocol import request_envelope
from ..protocol.jsonrpc import JSONObject
from ..protocol.param_headers import Annotations, mirrored
from ..protocol.peer import Peer
from ..protocol.versions import AUTO, LATEST_MODERN_VERSION, LATEST_VERSION, MODERN_VERSIONS

__all__ = [
    "AUTO", "PROBE_WAIT", "Discovered", "enveloped", "error_body_expected", "handshake_version",
    "liveness_check", "modern_headers", "negotiate", "rpc_error_body",
]

PROBE_WAIT: Final = 0.15
"""Seconds the probe waits alone before the handshake is sent beside it."""
SETTLE_WAIT: Final = 5.0
"""Seconds a modern server's refusal of the late ``initialize`` is waited for, and the probe
after the handshake was refused."""
_ERROR_BODY_LIMIT: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class Discovered:
    """A modern server, as its ``server/discover`` result describes it."""

    version: str
    server_info: dict[str, Any]
    capabilities: dict[str, Any]
    instructions: str | None


def handshake_version(asked: str) -> str:
    """The revision ``initialize`` asks for: the asked one, or (probing) the newest 2025 one."""
    return LATEST_VERSION if asked == AUTO or asked in MODERN_VERSIONS else asked


def enveloped(
    params: JSONObject | None, version: str | None, client: tuple[str, str],
    capabilities: JSONObject | None = None,
) -> JSONObject | None:
    """``params`` with the modern ``_meta`` when ``version`` is a 2026-07-28 one, declaring
    ``capabilities`` (the connection's, ``ServerRequests.capabilities``; none when not
    given); unchanged otherwise. ``client``: (name, version)."""
    if version not in MODERN_VERSIONS:
        return params
    assert version is not None
    meta = (params or {}).get("_meta")
    envelope = request_envelope.request_meta(version, capabilities or {}, *client)
    return {**(params or {}), "_meta": {**(meta if isinstance(meta, dict) else {}), **envelope}}


async def negotiate(
    peer: Peer, asked: str, init_params: JSONObject, timeout: float, client: tuple[str, str], server: str,
    capabilities: Callable[[str], JSONObject] | None = None,
) -> Discovered | JSONObject:
    """The server's era: ``Discovered`` for a modern one, else its ``initialize`` result.

    ``capabilities(version)``: what the probe declares. Raises what ``initialize`` raises;
    pinned to a modern revision, ``ProtocolError`` when the server does not speak it."""
    if asked != AUTO and asked not in MODERN_VERSIONS:
        return await peer.request(m.INITIALIZE, init_params, timeout=timeout)
    version = asked if asked in MODERN_VERSIONS else LATEST_MODERN_VERSION
    probe = asyncio.ensure_future(_discover(peer, version, timeout, client, capabilities))
    if asked != AUTO:
        return _pinned(await _outcome(probe), version, server)
    done, _ = await asyncio.wait({probe}, timeout=PROBE_WAIT)
    if done:
        found = await _outcome(probe)
        if isinstance(found, Discovered):
            peer.next_id()  # the handshake's id, unsent: later ids do not depend on how fast it was
            return found
        return await peer.request(m.INITIALIZE, init_params, timeout=timeout)
    return await _race(probe, asyncio.ensure_future(peer.request(m.INITIALIZE, init_params, timeout=timeout)))


async def _race(
    probe: asyncio.Future[Discovered], handshake: asyncio.Future[JSONObject]
) -> Discovered | JSONObject:
    """The probe and the handshake both in flight: a modern probe answer or an initialize
    result naming its revision wins; any other handshake answer (a refusal, a result that
    names no revision) is final only once the probe has failed too, or has still not
    answered ``SETTLE_WAIT`` later (a server that ignores it)."""
    waiting: set[asyncio.Future[Any]] = {probe, handshake}
    undecided = False  # the handshake was answered, but not decisively: the probe decides
    try:
        while waiting:
            done, waiting = await asyncio.wait(waiting, timeout=SETTLE_WAIT if undecided else None,
                                               return_when=asyncio.FIRST_COMPLETED)
            if probe in done and isinstance(found := await _outcome(probe), Discovered):
                if handshake in waiting:  # never cancelled: its refusal belongs in the record
                    await asyncio.wait({handshake}, timeout=SETTLE_WAIT)
                return found
            if handshake in done or undecided:
                if _decisive(handshake) or probe not in waiting or not done:  # (not done: timed out)
                    return handshake.result()  # a refusal raises
                undecided = True
        raise ProtocolError("neither server/discover nor initialize was answered")  # not reached
    finally:
        for pending in (probe, handshake):
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending  # retrieve: the loser's outcome is of no interest


def _decisive(handshake: asyncio.Future[JSONObject]) -> bool:
    """Whether an answered ``initialize`` settles the era while the probe is pending: a
    result naming its revision (a 2026-07-28-only server refuses it; a mock may answer it
    with an empty result)."""
    return handshake.exception() is None and isinstance(handshake.result().get("protocolVersion"), str)


async def _discover(
    peer: Peer, version: str, timeout: float, client: tuple[str, str],
    capabilities: Callable[[str], JSONObject] | None,
) -> Discovered:
    """``server/discover``; refused -32022 naming revisions we speak, once more at one."""
    try:
        return await _discover_at(peer, version, timeout, client, capabilities)
    except RpcError as exc:
        listed = _listed_version(exc)
        if listed is None:
            raise
        return await _discover_at(peer, listed, timeout, client, capabilities)


def _listed_version(refusal: RpcError) -> str | None:
    """The newest revision we speak among those a -32022 refusal lists as ``supported``."""
    data = refusal.data if isinstance(refusal.data, dict) else {}
    listed = data.get("supported") if refusal.code == request_envelope.UNSUPPORTED_VERSION else None
    spoken = [v for v in MODERN_VERSIONS if isinstance(listed, list) and v in listed]
    return spoken[0] if spoken else None  # MODERN_VERSIONS lists the newest first


async def _discover_at(
    peer: Peer, version: str, timeout: float, client: tuple[str, str],
    capabilities: Callable[[str], JSONObject] | None,
) -> Discovered:
    declared = capabilities(version) if capabilities is not None else None
    result = await peer.request(request_envelope.DISCOVER, enveloped(None, version, client, declared),
                                timeout=timeout)
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or version not in versions:
        raise ProtocolError(f"server/discover lists {versions!r}, not {version}")
    meta = result.get("_meta")
    info = meta.get(request_envelope.SERVER_INFO_KEY) if isinstance(meta, dict) else None
    instructions = result.get("instructions")
    return Discovered(
        version, info if isinstance(info, dict) else {}, _object(result.get("capabilities")),
        instructions if isinstance(instructions, str) else None,
    )


async def _outcome(probe: Awaitable[Discovered]) -> Discovered | ToolrelayError:
    try:
        return await probe
    except ToolrelayError as exc:  # an error, an HTTP refusal, a timeout: not modern evidence
        return exc


def _pinned(found: Discovered | ToolrelayError, version: str, server: str) -> Discovered:
    if isinstance(found, Discovered):
        return found
    reason = found.rpc_message if isinstance(found, RpcError) else str(found)
    raise ProtocolError(
        f"server {server} does not speak MCP {version}: server/discover failed ({reason}); "
        "choose a 2025 revision with --protocol-version, or auto"
    )


def liveness_check(
    version: str | None, client: tuple[str, str], capabilities: JSONObject | None = None,
) -> tuple[str, JSONObject | None]:
    """The request that checks a server answers: ``ping``, or in 2026-07-28 (which has
    none) ``server/discover`` (declaring ``capabilities``)."""
    if version in MODERN_VERSIONS:
        return request_envelope.DISCOVER, enveloped(None, version, client, capabilities)
    return m.PING, None


def modern_headers(message: JSONObject, marked: Mapping[str, Annotations] | None = None) -> dict[str, str]:
    """HTTP: the headers a 2026-07-28 request repeats from its body (none for others); for
    a ``tools/call``, its arguments that ``marked[tool]`` names (SEP-2243 ``Mcp-Param-*``)."""
    params = message.get("params")
    method = message.get("method")
    if (not isinstance(params, dict) or not isinstance(method, str)
            or not request_envelope.has_envelope(params)):
        return {}
    headers = {"mcp-protocol-version": str(params["_meta"][request_envelope.PROTOCOL_VERSION_KEY]),
               "mcp-method": method}
    name_key = request_envelope.NAME_BEARING.get(method)
    named = params.get(name_key) if name_key is not None else None
    if isinstance(named, str):
        headers["mcp-name"] = request_envelope.encode_header_value(named)
        if method == m.CALL_TOOL and marked and named in marked:
            headers.update(mirrored(marked[named], params.get("arguments")))
    return headers


def error_body_expected(message: JSONObject, content_length: str | None) -> bool:
    """Whether a 4xx answer to ``message`` may carry its JSON-RPC error: a modern request,
    and a body that says it is small enough to read whole, or says no length (chunked: the
    caller reads it up to the limit)."""
    small = content_length is None or (content_length.isdigit() and int(content_length) <= _ERROR_BODY_LIMIT)
    return small and bool(modern_headers(message))


def rpc_error_body(message: JSONObject, body: bytes) -> bool:
    """Whether ``body`` (of a 4xx answer to the modern request ``message``) is that
    request's JSON-RPC error, to be delivered as its answer."""
    try:
        answer = json.loads(body)
    except ValueError:
        return False
    return isinstance(answer, dict) and "error" in answer and answer.get("id") == message.get("id")


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
