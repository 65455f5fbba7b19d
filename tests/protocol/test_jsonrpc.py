"""JSON-RPC decode / classify / encode: every rejection with the code and message a peer
would answer with, the id rules MCP adds (no null, no bool, no float), and the encoder's
one-line output."""

from __future__ import annotations

import codecs
import json
from typing import Any

import pytest

from toolrelay.protocol import jsonrpc
from toolrelay.protocol.json_depth import MAX_DEPTH
from toolrelay.protocol.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    DecodeError,
    ErrorResponse,
    Notification,
    Request,
    Response,
)


def _rejection(data: bytes | str) -> tuple[int, str, Any]:
    with pytest.raises(DecodeError) as caught:
        jsonrpc.decode(data)
    return caught.value.code, caught.value.message, caught.value.id


# -- the four kinds -----------------------------------------------------------------------


def test_request_keeps_its_exact_raw_object() -> None:
    text = '{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"x","extra":[1,2]}}'
    message = jsonrpc.decode(text)
    assert message == Request("a-1", "tools/call", {"name": "x", "extra": [1, 2]}, {})
    assert message.raw == json.loads(text)


def test_notification_response_and_error_response() -> None:
    assert jsonrpc.decode(b'{"jsonrpc":"2.0","method":"notifications/initialized"}') == Notification(
        "notifications/initialized", None, {})
    assert jsonrpc.decode(b'{"jsonrpc":"2.0","id":7,"result":{}}') == Response(7, {}, {})
    error = jsonrpc.decode(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad","data":[1]}}')
    assert error == ErrorResponse(None, -32700, "bad", [1], {})
    no_id = jsonrpc.decode(b'{"jsonrpc":"2.0","error":{"code":-1}}')
    assert isinstance(no_id, ErrorResponse) and no_id.id is None and no_id.message == ""


def test_ids_int_and_str_stay_distinct() -> None:
    as_int = jsonrpc.decode(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    as_str = jsonrpc.decode(b'{"jsonrpc":"2.0","id":"1","method":"ping"}')
    assert isinstance(as_int, Request) and isinstance(as_str, Request)
    assert as_int.id == 1 and as_str.id == "1" and as_int.id != as_str.id
    assert (jsonrpc.id_text(1), jsonrpc.id_text("1"), jsonrpc.id_text(None)) == ("1", '"1"', "null")


# -- rejections ---------------------------------------------------------------------------


@pytest.mark.parametrize("data", [b'{"jsonrpc": "2.0", "id": 1, "method": ', b"", b"{'a': 1}", b"\xff\xfe{}"])
def test_unreadable_json_is_a_parse_error(data: bytes) -> None:
    code, message, msg_id = _rejection(data)
    assert code == PARSE_ERROR and msg_id is None
    assert message.startswith("Parse error: ") and len(message) > len("Parse error: ")


_PING = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"t":"\u2603"}}'


@pytest.mark.parametrize("data", [
    _PING.encode(), _PING, codecs.BOM_UTF8 + _PING.encode(), "\ufeff" + _PING, _PING.encode("utf-16"),
    _PING.encode("utf-16-le"), _PING.encode("utf-32-be"), b'{"jsonrpc":"2.0","method":"\xed\xa0\x80"}',
    b'{"jsonrpc":"2.0","method":"\xc3"}', b"", b"  ", b'{"jsonrpc":"2.0","id":', b'{"jsonrpc":', b"{",
    _PING.encode() + b" \r\n", b" " + _PING.encode(), _PING.encode() + b"{}",
])
def test_bytes_and_text_are_read_as_json_loads_reads_them(data: bytes | str) -> None:
    """The decoder is built once, not per message: it must read exactly what json.loads reads."""
    try:
        expected: Any = jsonrpc.classify(json.loads(data)).raw
    except (ValueError, UnicodeDecodeError) as exc:
        expected = (PARSE_ERROR, f"Parse error: {exc}", None)
    try:
        got: Any = jsonrpc.decode(data).raw
    except DecodeError:
        got = _rejection(data)
    assert got == expected


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_constants_are_a_parse_error(constant: str) -> None:
    data = '{"jsonrpc":"2.0","id":1,"method":"x","params":{"v":' + constant + '}}'
    assert _rejection(data) == (PARSE_ERROR, f"Parse error: {constant} is not valid JSON", None)


def _nested(depth: int) -> str:
    return '{"a":' * (depth - 1) + "[]" + "}" * (depth - 1)


@pytest.mark.parametrize("depth", [MAX_DEPTH, MAX_DEPTH + 1, 990, 100_000])
@pytest.mark.parametrize("id_first", [True, False])
def test_deep_nesting_is_a_parse_error_naming_the_id(depth: int, id_first: bool) -> None:
    """Past MAX_DEPTH levels a message is malformed (never a RecursionError); the id is
    read from either end, as encoders put it first or last, so its request can fail."""
    params = _nested(depth - 1)  # inside the message object
    body = f'"method":"tools/call","params":{params}'
    data = '{"jsonrpc":"2.0","id":7,' + body + "}" if id_first else '{"jsonrpc":"2.0",' + body + ',"id":7}'
    if depth <= MAX_DEPTH:
        assert isinstance(jsonrpc.decode(data), Request)
        return
    refused = (PARSE_ERROR, f"Parse error: JSON nested deeper than {MAX_DEPTH} levels", 7)
    assert _rejection(data) == refused and _rejection(data.encode()) == refused


def test_batch_array_is_refused() -> None:
    batch = b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]'
    assert _rejection(batch) == (
        INVALID_REQUEST, "Invalid Request: batch arrays are not supported (removed in MCP 2025-06-18)", None)


@pytest.mark.parametrize("data", [b'"text"', b"42", b"null", b"true"])
def test_non_object_is_refused(data: bytes) -> None:
    assert _rejection(data) == (INVALID_REQUEST, "Invalid Request: a message must be a JSON object", None)


@pytest.mark.parametrize("version", ['"1.0"', "2.0", "null"])
def test_jsonrpc_member_must_be_2_0(version: str) -> None:
    data = '{"jsonrpc":' + version + ',"id":3,"method":"ping"}'
    assert _rejection(data) == (INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', 3)
    assert _rejection(b'{"id":3,"method":"ping"}') == (
        INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', 3)


def test_method_must_be_a_string() -> None:
    assert _rejection(b'{"jsonrpc":"2.0","id":"m","method":5}') == (
        INVALID_REQUEST, 'Invalid Request: "method" must be a string', "m")


@pytest.mark.parametrize("params", ["[1,2]", '"x"', "3"])
def test_params_must_be_an_object(params: str) -> None:
    data = '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":' + params + '}'
    assert _rejection(data) == (INVALID_PARAMS, 'Invalid params: "params" must be an object', 9)


@pytest.mark.parametrize("bad_id", ["null", "true", "false", "1.5", "1.0", "[1]", '{"a":1}'])
def test_request_id_must_be_string_or_integer(bad_id: str) -> None:
    data = '{"jsonrpc":"2.0","id":' + bad_id + ',"method":"ping"}'
    assert _rejection(data) == (
        INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer (not null)', None)


def test_bool_id_is_never_read_as_an_integer() -> None:
    # With a readable id the error would be paired to request 1; true is not 1.
    assert _rejection(b'{"jsonrpc":"1.0","id":true,"method":"ping"}')[2] is None


def test_response_with_both_result_and_error() -> None:
    assert _rejection(b'{"jsonrpc":"2.0","id":2,"result":{},"error":{"code":1,"message":"m"}}') == (
        INVALID_REQUEST, 'Invalid Request: both "result" and "error" present', 2)


@pytest.mark.parametrize("data", [
    b'{"jsonrpc":"2.0","id":2,"result":[1]}',
    b'{"jsonrpc":"2.0","id":2,"result":"ok"}',
    b'{"jsonrpc":"2.0","result":{}}',
    b'{"jsonrpc":"2.0","id":null,"result":{}}',
    b'{"jsonrpc":"2.0","id":2.5,"result":{}}',
])
def test_malformed_response(data: bytes) -> None:
    code, message, _ = _rejection(data)
    assert (code, message) == (INVALID_REQUEST, "Invalid Request: malformed response")


@pytest.mark.parametrize("error", ['"boom"', "{}", '{"code":"x"}', '{"code":1.5}', '{"code":true}'])
def test_malformed_error_object(error: str) -> None:
    data = '{"jsonrpc":"2.0","id":4,"error":' + error + '}'
    assert _rejection(data) == (INVALID_REQUEST, "Invalid Request: malformed error object", 4)


@pytest.mark.parametrize("bad_id", ["true", "1.5", "[4]"])
def test_malformed_error_id(bad_id: str) -> None:
    data = '{"jsonrpc":"2.0","id":' + bad_id + ',"error":{"code":-1,"message":"m"}}'
    assert _rejection(data) == (INVALID_REQUEST, "Invalid Request: malformed error id", None)


def test_neither_request_nor_response() -> None:
    assert _rejection(b'{"jsonrpc":"2.0","id":8}') == (
        INVALID_REQUEST, "Invalid Request: neither a request nor a response", 8)


# -- builders and encoding -------------------------------------------------------------------


def test_builders() -> None:
    assert jsonrpc.request(1, "ping") == {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert jsonrpc.request("a", "m", {"k": 1}) == {
        "jsonrpc": "2.0", "id": "a", "method": "m", "params": {"k": 1}}
    assert jsonrpc.notification("n") == {"jsonrpc": "2.0", "method": "n"}
    assert jsonrpc.response(2, {"x": 1}) == {"jsonrpc": "2.0", "id": 2, "result": {"x": 1}}
    assert jsonrpc.error_response(None, -32700, "bad") == {
        "jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad"}}
    assert jsonrpc.error_response(3, -1, "m", {"d": 0})["error"] == {
        "code": -1, "message": "m", "data": {"d": 0}}


def test_encode_is_one_compact_utf8_line() -> None:
    compact = b'{"jsonrpc":"2.0","id":1,"result":{"a":[1,2]}}'
    assert jsonrpc.encode(jsonrpc.response(1, {"a": [1, 2]})) == compact
    message = jsonrpc.response(1, {"text": "line one\nline two\r\n\u2028 snow ☃ \"q\"", "n": [1, 2]})
    data = jsonrpc.encode(message)
    assert b"\n" not in data and b"\r" not in data
    assert "☃".encode() in data  # UTF-8, not \\u escapes
    assert json.loads(data) == message
    decoded = jsonrpc.decode(data)
    assert isinstance(decoded, Response) and decoded.result == message["result"]


def test_encode_keeps_a_lone_surrogate_as_an_escape_instead_of_failing() -> None:
    # A peer may send "\ud800" (valid JSON text); echoing it back must not crash the encoder.
    message = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Unknown tool: \ud800"}}
    wire = jsonrpc.encode(message)
    assert b"\\ud800" in wire
    assert json.loads(wire)["error"]["message"] == "Unknown tool: \ud800"


def _cyclic() -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": "x"}
    message["params"] = message
    return message


@pytest.mark.parametrize(("message", "error", "text"), [
    (_cyclic(), ValueError, "Circular reference detected"),
    ({"params": {1, 2}}, TypeError, "Object of type set is not JSON serializable"),
])
def test_encode_refuses_what_json_dumps_refuses(message: dict[str, Any], error: type, text: str) -> None:
    """The encoder skips json's cycle bookkeeping on the way out; a cycle still gets its words."""
    with pytest.raises(error) as caught:
        jsonrpc.encode(message)
    assert str(caught.value) == text
