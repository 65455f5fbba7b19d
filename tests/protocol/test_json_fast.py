"""``json_fast.loads`` (orjson where it is sure to agree) gives what ``json.loads`` gives:
the same value, type for type, or the same error, case by case where orjson departs from
it, and on random numbers; so do ``json_depth.loads``, the JSON-RPC decoder and a stream
event's payload, which read through it."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from testkit.json_cases import DEPARTURES
from toolrelay.protocol import json_depth, json_fast, jsonrpc
from toolrelay.protocol.sse import StreamEvent

# json.loads refuses these: the error must be its own, message and position.
REFUSED = {
    "trailing comma": '{"a": 1,}',
    "two values": '{"a": 1} {"b": 2}',
    "control character": '{"s": "\x01"}',
    "empty": "",
    "cut short": '{"a": [1, 2',
    "single quotes": "{'a': 1}",
}


def _same(ours: Any, theirs: Any) -> bool:
    """Equal type for type (1 is not 1.0, -0.0 is not 0.0, NaN is NaN)."""
    return repr(ours) == repr(theirs) and type(ours) is type(theirs)


def _error(read: Any, data: str | bytes) -> tuple[type[BaseException], str]:
    with pytest.raises(ValueError) as caught:
        read(data)
    return type(caught.value), str(caught.value)


@pytest.mark.parametrize("text", DEPARTURES.values(), ids=DEPARTURES.keys())
def test_each_departure_reads_as_json_loads(text: str) -> None:
    expected = json.loads(text)
    for data in (text, text.encode("utf-8", "surrogatepass")):
        assert _same(json_fast.loads(data), json.loads(data))
        assert _same(json_depth.loads(data), expected)


@pytest.mark.parametrize("text", REFUSED.values(), ids=REFUSED.keys())
def test_each_refusal_is_json_loads_own_error(text: str) -> None:
    for data in (text, text.encode()):
        said = _error(json.loads, data)
        assert _error(json_fast.loads, data) == said
        assert _error(json_depth.loads, data) == said


def test_a_byte_order_mark_is_refused_in_text_and_skipped_in_bytes() -> None:
    text = '\ufeff{"a": 1}'
    said = _error(json.loads, text)
    assert _error(json_fast.loads, text) == said and _error(json_depth.loads, text) == said
    assert json_fast.loads(text.encode()) == json.loads(text.encode()) == {"a": 1}


def test_utf16_bytes_read_as_json_loads() -> None:
    data = '{"a": "\u00e9"}'.encode("utf-16")
    assert json_fast.loads(data) == json.loads(data) == {"a": "\u00e9"}


def test_long_integers_are_left_to_json_loads() -> None:
    assert json_fast.orjson_value('{"n": 123456789012345678901}') is json_fast.UNSURE
    assert json_fast.orjson_value('{"n": 0.12345678901234567890}') == {"n": 0.12345678901234567890}
    assert json_fast.orjson_value('{"n": NaN}') is json_fast.UNSURE
    data = b'{"a": 1, "b": [12345678901234567890123], "c": "-' + b"9" * 40 + b'"}'
    runs = [data.index(b"1234"), data.index(b"9" * 40)]
    assert json_fast.integer_runs(data, len(data)) == runs
    assert json_fast.integer_runs(data, runs[1]) == runs[:1]
    assert json_fast.integer_runs(b"12345678901234567890", 20) == [0]


def test_a_long_integer_across_a_chunk_boundary_is_found() -> None:
    data = b" " * ((1 << 20) - 5) + b":" + b"7" * 30
    assert json_fast.integer_runs(data, len(data)) == [(1 << 20) - 4]


def test_random_numbers_read_as_json_loads() -> None:
    rnd = random.Random(29)
    texts = []
    for _ in range(3_000):
        bits = rnd.getrandbits(64)
        value = int.from_bytes(bits.to_bytes(8, "little"))
        texts.append(str(rnd.getrandbits(rnd.randint(1, 90)) * rnd.choice((1, -1))))
        texts.append(repr(float.fromhex(f"0x1.{value & ((1 << 52) - 1):013x}p{rnd.randint(-1074, 1023)}")))
        digits = "".join(rnd.choice("0123456789") for _ in range(rnd.randint(1, 30)))
        texts.append(f"{digits[0]}.{digits[1:] or '0'}e{rnd.randint(-330, 310)}")
    line = "[" + ",".join(texts) + "]"
    for text in [*texts, line]:
        assert _same(json_fast.loads(text), json.loads(text)), text


def test_the_json_rpc_decoder_keeps_its_rules() -> None:
    big = '{"jsonrpc": "2.0", "id": 1, "result": {"n": 123456789012345678901234567890}}'
    decoded = jsonrpc.decode(big)
    assert isinstance(decoded, jsonrpc.Response) and decoded.result == {"n": 123456789012345678901234567890}
    with pytest.raises(jsonrpc.DecodeError, match="Parse error: NaN is not valid JSON"):
        jsonrpc.decode('{"jsonrpc": "2.0", "id": 1, "result": NaN}')


def test_a_stream_event_payload_is_json_loads_value() -> None:
    data = '{"type": "response.output_text.delta", "n": 99999999999999999999999, "f": 1e400}'
    event = StreamEvent(index=0, event=None, data=data)
    assert _same(event.payload, json.loads(data))
    assert StreamEvent(index=0, event=None, data='{"s": "\\ud800"}').payload == {"s": "\ud800"}


def test_an_integer_too_long_for_python_is_malformed_json_to_every_caller() -> None:
    with pytest.raises(json.JSONDecodeError, match="a number too long to read"):
        json_depth.loads('{"a": ' + "9" * 5000 + "}")
