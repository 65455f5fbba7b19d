"""The common shape of a streamed turn, judged in one pass (``streamed.check_streams``'s fast path).

Most streamed turns are function calls and nothing else, written as the API and the
stand-in write them: ``response.created`` and ``.in_progress``, then per call its
``output_item.added``, one ``function_call_arguments.delta``, ``.done`` and
``output_item.done``, and the terminal event last, numbered on by ``sequence_number``.
``common_stream`` says of such a stream what the stream checks and the live assembler
say: that it is numbered on, that each call's deltas make its ``.done`` and item
arguments, and that the terminal event's response (the assembled one) is the recorded
one; and with which terminal status and differences.

The indexer parsed each ``output_item.done`` (the call's item). The three events before it
are not parsed: each must be, character for character, the text made here from that item
(compact JSON in the API's key order), and so holds those very values; any other text, or
any other shape (another item or event type, several deltas, an item added twice, no
terminal event, a fault of any kind) answers None, and today's code (the assembler,
``_sequence``, ``_deltas``, ``_assembly``) judges the turn and says what is wrong. Only
equality with a text made from known values is trusted, never a partial reading of one.
The terminal event's text, the recorded response's, is made of the items' texts made in
that pass when the response's output is those items, each with the API's keys in its
order (``_with_items``), and encoded whole otherwise.
"""

from __future__ import annotations

import json
import re
from json.encoder import encode_basestring
from operator import itemgetter
from typing import Any, Final

from ..protocol.json_depth import nested_too_deep
from ..protocol.responses import (
    FUNCTION_CALL,
    FUNCTION_CALL_ARGUMENTS_DELTA,
    FUNCTION_CALL_ARGUMENTS_DONE,
    IN_PROGRESS,
    OUTPUT_ITEM_ADDED,
    RETRY_SAFE_STREAM_EVENTS,
    TERMINAL_STATUS,
)
from ..protocol.stream_items import compare_outputs
from ..relay.stages.dialects import RESPONSES, known_reader
from .jsonpath import json_equal
from .record import ModelRound

__all__ = ["Common", "Fields", "common_stream", "stream_fields"]

Common = tuple[str, list[str]]
"""What the assembler says of a stream of the common shape: its terminal status and the
differences between its items and its final response."""

_EXACT: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
"""JSON as the API and the stand-in write stream data (compact, UTF-8 characters kept), for
a value whose text, parsed, gives it back exactly (no NaN: parsed, it is another NaN)."""
_PADDING: Final = re.compile(r'"obfuscation":"[^"\\\x00-\x1f]*"\}')
"""How a delta ends, after its text: its padding (a string without escapes), and the end."""
_ADDED, _DELTA, _ARGUED = (f'{{"type":"{kind}","sequence_number":' for kind in (
    OUTPUT_ITEM_ADDED, FUNCTION_CALL_ARGUMENTS_DELTA, FUNCTION_CALL_ARGUMENTS_DONE))
"""How each event of a call before its ``output_item.done`` begins."""
_FIELDS: Final = itemgetter("index", "attempt", "data")
_ITEM_KEYS: Final = ["id", "type", "status", "arguments", "call_id", "name"]
"""A function_call item's keys as the API and the stand-in write them, in order."""


Fields = tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]
"""Each stream record's ``index``, ``attempt`` and ``data``, in order."""


def stream_fields(stream: list[dict[str, Any]]) -> Fields | None:
    """The records' fields, read in one walk (in C: a turn's records are fetched from memory
    once, for the order check and this pass alike); None when one lacks one of them."""
    try:
        indexes, attempts, data = zip(*map(_FIELDS, stream), strict=True)
    except (KeyError, ValueError):  # a field missing; or no record at all
        return None
    return indexes, attempts, data


def common_stream(current: ModelRound, fields: Fields | None = None) -> Common | None:
    """The terminal status and differences of a stream of the common shape that holds
    (numbered on, adding up, assembling to the recorded response); None: any other stream.
    ``fields``: the stream's ``stream_fields``, when read already."""
    stream, closed = current.stream, current.closed_at
    if not closed or (known_reader(current.dialect) or RESPONSES) is not RESPONSES:
        return None  # no call closed in a Responses stream; or a turn another dialect's assembler reads
    lead, last = closed[0] - 3, len(stream) - 1
    if lead < 0 or closed != list(range(lead + 3, last, 4)) or last != lead + 4 * len(closed):
        return None  # not four events a call, between the opening events and the terminal one
    first = current.shown(closed[0]).payload
    base = first.get("sequence_number") if first is not None else None
    if type(base) is not int:
        return None
    base -= closed[0]  # every event's sequence_number is base + its position
    shell = _shell(current)
    if not all(_opening(current, position, base, shell) for position in range(lead)):
        return None
    data = fields[2] if fields is not None else tuple(event.get("data") for event in stream)
    built = _calls(current, base, data)
    if built is None:
        return None
    final = _terminal(current, base + last, *built)
    if final is None:
        return None
    return _assembled(current, *final, built[0])


Ending = tuple[str, dict[str, Any], bool]
"""The terminal status, the response the terminal event holds, and whether its output is
known to be the calls' items already (``_with_items`` compared them)."""


def _shell(current: ModelRound) -> tuple[dict[str, Any], str] | None:
    """The response as ``response.created`` and ``.in_progress`` say it (the recorded one,
    in progress, nothing out yet), and its text; None without a recorded response to say."""
    recorded = current.answer
    if recorded is None:
        return None
    shell = {**recorded, "status": IN_PROGRESS, "output": [], "usage": None, "completed_at": None}
    try:
        return shell, _EXACT(shell)
    except (ValueError, RecursionError):  # NaN, a huge int, or too deep: parsed as ever
        return None


def _opening(current: ModelRound, position: int, base: int, shell: tuple[dict[str, Any], str] | None) -> bool:
    """An event before the first item: created, in_progress or queued, numbered on (its
    data the text of ``shell``, or parsed)."""
    event, number = current.stream[position], base + position
    name, data = event.get("event"), event.get("data")
    if shell is not None and name in RETRY_SAFE_STREAM_EVENTS and type(data) is str:
        value, text = shell
        if data == f'{{"type":"{name}","sequence_number":{number},"response":{text}}}':
            return not nested_too_deep({"response": value}, data)
    payload = current.shown(position).payload
    return (payload is not None and payload.get("type") in RETRY_SAFE_STREAM_EVENTS
            and _numbered(payload.get("sequence_number"), number))


def _numbered(said: Any, number: int) -> bool:
    return type(said) is int and said == number


Built = tuple[list[dict[str, Any]], list[str] | None]
"""The calls' items in output order, and the text of each as ``_EXACT`` makes it when every
one is the six strings the API writes (None: some other item)."""


def _calls(current: ModelRound, base: int, data: tuple[Any, ...]) -> Built | None:
    """Each call's item, in output order, when its four events are the common ones (one loop
    body, no call per check: it runs for every call of a transcript); with their texts.
    ``data``: each stream record's data."""
    shown = current.shown_at  # the indexer made each closing event's
    items: dict[int, dict[str, Any]] = {}
    texts: dict[int, str] | None = {}
    for position in current.closed_at:
        done = shown[position].payload
        if done is None:
            return None
        number, index, item = done.get("sequence_number"), done.get("output_index"), done.get("item")
        if (type(number) is not int or number != base + position or type(index) is not int or index < 0
                or index in items or type(item) is not dict or item.get("type") != FUNCTION_CALL):
            return None
        item_id, arguments = item.get("id"), item.get("arguments")
        call_id, name = item.get("call_id"), item.get("name")
        if (type(item_id) is not str or type(arguments) is not str or type(call_id) is not str
                or type(name) is not str or not call_id or not name):
            return None  # the assembler fills a part item in from its added one: not this pass's
        item_id, arguments = encode_basestring(item_id), encode_basestring(arguments)
        call_id, name = encode_basestring(call_id), encode_basestring(name)
        where = f',"item_id":{item_id},"output_index":{index}'
        added = (f'{_ADDED}{number - 3},"output_index":{index},"item":{{"id":{item_id},'
                 f'"type":"{FUNCTION_CALL}","status":"{IN_PROGRESS}","arguments":"",'
                 f'"call_id":{call_id},"name":{name}}}}}')
        argued = f'{_ARGUED}{number - 1}{where},"arguments":{arguments}}}'
        if data[position - 3] != added or data[position - 1] != argued:
            return None
        delta, start = data[position - 2], f'{_DELTA}{number - 2}{where},"delta":{arguments},'
        if type(delta) is not str or not delta.startswith(start) or not _PADDING.fullmatch(delta, len(start)):
            return None
        items[index] = item
        if texts is not None:
            status = item.get("status")
            if type(status) is str:
                texts[index] = (f'{{"id":{item_id},"type":"{FUNCTION_CALL}",'
                                f'"status":{encode_basestring(status)},"arguments":{arguments},'
                                f'"call_id":{call_id},"name":{name}}}')
            else:
                texts = None
    order = sorted(items)
    return [items[index] for index in order], None if texts is None else [texts[index] for index in order]


def _terminal(current: ModelRound, number: int, built: list[dict[str, Any]],
              texts: list[str] | None) -> Ending | None:
    """(status, response, …) of the last event when it ends the response with an output."""
    event = current.stream[-1]
    found = _recorded_text(current, event, number, built, texts)
    if found is not None:
        return TERMINAL_STATUS[event["event"]], *found
    payload = current.shown(len(current.stream) - 1).payload
    if payload is None:
        return None
    kind, response = payload.get("type"), payload.get("response")
    if (kind not in TERMINAL_STATUS or not _numbered(payload.get("sequence_number"), number)
            or type(response) is not dict or not _has_output(response)):
        return None
    return TERMINAL_STATUS[kind], response, False


def _recorded_text(current: ModelRound, event: dict[str, Any], number: int, built: list[dict[str, Any]],
                   texts: list[str] | None) -> tuple[dict[str, Any], bool] | None:
    """The recorded response, when the terminal event's data is its very text (it is then
    what the data holds, exactly: no need to parse it, nor to compare the two); and
    whether its output is the calls' items (its text made of theirs)."""
    name, data, recorded = event.get("event"), event.get("data"), current.answer
    if name not in TERMINAL_STATUS or type(data) is not str or recorded is None or not _has_output(recorded):
        return None
    try:
        spliced = _with_items(recorded, built, texts)
        response = _EXACT(recorded) if spliced is None else spliced
        text = f'{{"type":"{name}","sequence_number":{number},"response":{response}}}'
    except (ValueError, RecursionError):  # NaN, a huge int, or too deep: parsed as ever
        return None
    if data != text or nested_too_deep({"response": recorded}, data):
        return None
    return recorded, spliced is not None


def _with_items(recorded: dict[str, Any], built: list[dict[str, Any]], texts: list[str] | None) -> str | None:
    """``_EXACT(recorded)`` put together from the texts of its output items, made already
    (``_calls``), when its output is those very items, each with the API's six keys in the
    API's order (the text of such an item is those strings, each as ``_EXACT`` writes a
    string); None: encode it whole. The items are most of a response's text."""
    output = recorded.get("output")
    if texts is None or type(output) is not list or output != built or set(map(type, output)) != {dict}:
        return None  # equal to the items: the same keys, each value a str equal to theirs
    if not all(map(_ITEM_KEYS.__eq__, map(list, output))):
        return None
    keys = list(recorded)
    at = keys.index("output")
    before = _EXACT({key: recorded[key] for key in keys[:at]})[1:-1]
    after = _EXACT({key: recorded[key] for key in keys[at + 1:]})[1:-1]
    items = ",".join(texts)
    return f'{{{before}{"," if before else ""}"output":[{items}]{"," if after else ""}{after}}}'


def _has_output(response: dict[str, Any]) -> bool:
    output = response.get("output")
    return isinstance(output, list) and len(output) > 0


def _assembled(current: ModelRound, terminal: str, final: dict[str, Any], same: bool,
               built: list[dict[str, Any]]) -> Common | None:
    """The assembler's view: the terminal event's response, its output against the items
    (``same``: found equal already)."""
    recorded = current.answer
    if recorded is not None and not json_equal(final, recorded):
        return None  # _assembly says where it departs
    output = final["output"]
    return terminal, [] if same or output == built else compare_outputs(output, built)
