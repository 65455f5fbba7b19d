"""JSON texts where orjson alone would read otherwise than ``json.loads`` (a float for a
long integer; an error for the rest), and where both agree although one might guess not:
``json_fast`` and the transcript reader must read each as ``json.loads`` does."""

from __future__ import annotations

DEPARTURES = {
    "integer beyond 64 bits": '{"n": 123456789012345678901234567890}',
    "integer beyond 64 bits, alone": "123456789012345678901234567890",
    "negative integer beyond 64 bits, alone": "-123456789012345678901234567890",
    "integer below -2**63": '{"n": -9223372036854775809}',
    "largest unsigned 64 bits": '{"n": 18446744073709551615}',
    "2**64": '{"n": [18446744073709551616]}',
    "long integer after whitespace": '{"n":\t\n 12345678901234567890123}',
    "digits in a string": '{"s": "id 123456789012345678901234567890"}',
    "a float of many digits": '{"f": 0.0013414540007943287, "g": 1234567890123456789.5}',
    "NaN": '{"x": NaN}',
    "Infinity": '{"x": [Infinity, -Infinity]}',
    "1e400": '{"x": 1e400}',
    "-1e400": '{"x": -1e400}',
    "1e-400": '{"x": 1e-400}',
    "-0.0": '{"x": -0.0, "y": -0}',
    "1.0 and 1": '{"x": 1.0, "y": 1, "z": 1E2}',
    "duplicate keys": '{"a": 1, "b": 2, "a": 3}',
    "lone high surrogate": '{"s": "\\ud800"}',
    "lone low surrogate": '{"s": "x\\udc00y"}',
    "a pair of surrogates": '{"s": "\\ud83d\\ude00"}',
    "escaped NUL and line separator": '{"s": "\\u0000\u2028"}',
    "padded": '  {"a": 1} \t',
}
