"""MCP 2026-07-28 multi-round-trip requests, client side: answering ``input_required``.

A modern server never sends the client requests; a ``tools/call`` that needs the
client's roots, a sampled message or an elicited answer is answered
``{resultType: "input_required", inputRequests: {key: {method, params}}, requestState?}``.
The client fulfils every input request with the same handlers that answer a 2025 server
request (``ServerRequests.answer``, tagged with the model's call), then retries the
original request with a new JSON-RPC id, adding ``inputResponses: {key: result}`` and
echoing ``requestState`` unchanged (never inventing one). At most ``MAX_ROUNDS`` retries:
a server that keeps asking is a protocol error, as is an input request toolrelay cannot
answer (an unknown method, a refused sampling request).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Final

from ...errors import ProtocolError, RpcError
from ...protocol.exchange import Exchange, input_required
from ...protocol.jsonrpc import JSONObject, Request
from .requests import ServerRequests

__all__ = ["INPUT_METHODS", "MAX_ROUNDS", "answer_inputs", "follow_input_required"]

MAX_ROUNDS: Final = 10
"""Retries of one request before toolrelay gives up (the official SDKs' default)."""
INPUT_METHODS: Final = frozenset({"roots/list", "sampling/createMessage", "elicitation/create"})
"""What a modern server may ask for in ``inputRequests``."""
RETRY_KEYS: Final = ("inputResponses", "requestState")
"""What a retry adds to the original request's params (and a first request never has)."""

Send = Callable[[JSONObject], Awaitable[Exchange]]
"""Sends the request with these params (a new id each time), returns its exchange."""


async def follow_input_required(
    send: Send, params: JSONObject, requests: ServerRequests, *, call_id: str | None, what: str,
) -> Exchange:
    """Send ``params``, then answer and retry while the server answers ``input_required``;
    the exchange that ends the chain (a complete result or an error).

    ``what`` names the request in errors (e.g. ``tools/call read_file``). Raises
    ``ProtocolError`` (naming the last request) when the server keeps asking past
    ``MAX_ROUNDS``, or asks for what toolrelay cannot answer."""
    exchange = await send(params)
    for _ in range(MAX_ROUNDS):
        asked = input_required(exchange)
        if asked is None:
            return exchange
        try:
            responses = await _answer_all(asked, requests, call_id, what)
        except ProtocolError as exc:
            raise exc.for_request(exchange.mcp_id, exchange.request) from None
        retry = {key: value for key, value in params.items() if key not in RETRY_KEYS}
        retry["inputResponses"] = responses
        if "requestState" in asked:
            retry["requestState"] = asked["requestState"]  # as given: opaque to the client
        exchange = await send(retry)
    if input_required(exchange) is None:
        return exchange
    raise ProtocolError(
        f"server {requests.server} still answered {what} input_required after {MAX_ROUNDS} rounds; "
        "toolrelay gave up"
    ).for_request(exchange.mcp_id, exchange.request)


async def answer_inputs(
    inputs: JSONObject, requests: ServerRequests, *, call_id: str | None, what: str
) -> JSONObject:
    """The answers to ``inputs`` (``{key: {method, params}}``) by the host's handlers, as for
    ``input_required``: also how a tasks-extension task's input requests are answered
    (``client/ext_tasks.py``). Raises ``ProtocolError`` like ``follow_input_required``."""
    return await _answer_all({"inputRequests": inputs}, requests, call_id, what)


async def _answer_all(
    asked: JSONObject, requests: ServerRequests, call_id: str | None, what: str
) -> JSONObject:
    inputs = asked.get("inputRequests", {})
    if not isinstance(inputs, dict):
        raise ProtocolError(f"server {requests.server} answered {what} input_required "
                            "with inputRequests that is not an object")
    responses: JSONObject = {}
    for key, wanted in inputs.items():
        responses[key] = await _answer_one(key, wanted, requests, call_id, what)
    return responses


async def _answer_one(
    key: str, wanted: Any, requests: ServerRequests, call_id: str | None, what: str
) -> Any:
    server = requests.server
    method = wanted.get("method") if isinstance(wanted, dict) else None
    if method not in INPUT_METHODS:
        raise ProtocolError(
            f"server {server} answered {what} input_required asking {key!r} for "
            f"{method!r}, which is not an input request toolrelay answers "
            f"(it answers {', '.join(sorted(INPUT_METHODS))})"
        )
    params = wanted.get("params")
    request = Request(id=key, method=str(method), params=params if isinstance(params, dict) else None,
                      raw=dict(wanted))
    try:
        answer = requests.answer(request, call_id)
        return (await answer) if inspect.isawaitable(answer) else answer
    except RpcError as exc:
        raise ProtocolError(
            f"server {server} asked {key!r} ({method}) during {what}, which toolrelay could not "
            f"answer: {exc.rpc_message}"
        ) from None
