"""The common shape of a call, judged by the six per-call steps at once (``RunFacts.judge_together``).

Most calls of a run look alike: parsed once without error, routed once to a declared
tool, one tools/call (perhaps after input_required rounds) answered once with a plain
result (no task), one outcome, one feedback event, and the output the rendering of that
result. ``CommonCalls.findings`` recognises that shape and makes the six steps' findings
(parse, routing, definition, server, feedback, call links) from what they all read, read
once: the arguments compared by one encoding of each, a text that is its parsed value as
JSON writes it not parsed again (``_written_as``; any other parsed once per distinct text),
equal results rendered once (by content, never by call_id). Anything else, a value
missing, of another type or different, is handed back (None): the steps judge that call
as before, so every broken link is named by them, in their words. The findings made here
are the steps' own: the same link, check, ids and seq numbers, and their words made
(when first read) by the steps' own ``*_said`` functions.
"""

from __future__ import annotations

import json
import marshal
import math
import re
from collections.abc import Callable
from typing import Any, Final

from ..protocol.json_depth import opening_brackets
from ..protocol.json_text import text_encoder
from ..protocol.mcp import READ_RESOURCE
from ..protocol.request_envelope import INPUT_REQUIRED, RESULT_TYPE
from ..protocol.tasks_ext import RESULT_TASK
from ..relay.stages.arguments import MAX_ARGUMENT_DEPTH, parse_arguments
from ..relay.stages.feedback import feedback_item
from ..relay.stages.optional_nulls import strip_optional_nulls
from ..relay.stages.parse import FunctionCall
from ..relay.stages.result import Verdict
from .correlation import link_of_call, linked_said
from .definitions import defined_said, definition_of_call
from .facts import CallJudge, Listing, RunFacts, Span
from .feedback import feedback_of_call, rendered_said
from .input_rounds import rounds_said
from .jsonpath import json_equal
from .mcp_side import answered_said, route_of_call, routed_said, server_of_call
from .model_side import parse_of_call, parsed_said
from .outcomes import ANSWERED, rendering_key, result_key
from .record import CallTrace, Event
from .verdict import Finding, Grounds

__all__ = ["CommonCalls"]


Six = tuple[Finding, Finding, Finding | None, Finding, Finding, Finding]
"""One call's findings by the ``STEPS`` (no definition finding: no digests recorded)."""

_ODD_SHAPE: Final = (TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError)
"""What a value of a shape toolrelay never writes raises (the steps name it: checks.py),
or one nested too deep to compare here."""


def _writer(item_separator: str, key_separator: str) -> Callable[[Any], str]:
    """``json.dumps`` with these separators, keeping non-ASCII, refusing NaN (its C encoder
    made once: ``json_text.text_encoder``)."""
    return text_encoder(json.JSONEncoder(ensure_ascii=False, check_circular=False, allow_nan=False,
                                         separators=(item_separator, key_separator)))


_COMPACT: Final = _writer(",", ":")
_SPACED: Final = _writer(", ", ": ")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_DEPTH: Final = MAX_ARGUMENT_DEPTH


def _written_as(value: dict[str, Any], text: str) -> bool:
    """Whether ``text`` is ``value`` as JSON writes it (compact, or with json's spaces): then
    ``parse_arguments(text)`` gives ``value`` back, or refuses what ``_surely_sendable``
    would not vouch for, so only such a text is taken for it. Its hooks refuse nothing JSON
    writes: no NaN or Infinity (``allow_nan``), finite floats written by ``repr``, ints of
    the digits ``int`` reads back, keys once each (a dict's); a string with a surrogate, a
    ``\\u`` escape or the depth limit reached is left to the parser."""
    try:  # the writer whose separators the text has first: most texts are encoded once
        written = _SPACED(value) if ": " in text else _COMPACT(value)
        if written != text and ": " in text:
            written = _COMPACT(value)
    except (ValueError, TypeError, RecursionError):
        return False  # no JSON (a NaN, an int too long to write), or too deep: the parser says
    # a text shorter than the limit opens fewer brackets; an ASCII one holds no surrogate
    return (written == text and (len(text) < _DEPTH or opening_brackets(text) < _DEPTH)
            and "\\u" not in text and (text.isascii() or _SURROGATE.search(text) is None))


_dumps: Final = marshal.dumps
"""``_dumps(value, 2)``: a JSON value's encoding that tells true from 1 (``jsonpath._dump``):
equal bytes, equal values; unequal bytes still ask ``json_equal`` (key order, say)."""


class _Held(Grounds):
    """What one call's held findings rest on: their words and seq numbers are made from it
    when first read (``verdict.Finding``; most are only counted), as the steps make them.
    The call's events are its one of each kind (the common shape)."""

    __slots__ = ("call", "copies", "expected", "verdict")

    def __init__(self, call: CallTrace, verdict: Verdict, expected: dict[str, Any], copies: int) -> None:
        self.call, self.verdict, self.expected, self.copies = call, verdict, expected, copies

    def said(self, check: str) -> str:
        return _SAID[check](self)

    def seqs_of(self, check: str) -> tuple[int, ...]:
        return _SEQS[check](self)

    def parse_said(self) -> str:
        return parsed_said(self.call, self.call.parsed[0])

    def route_said(self) -> str:
        call = self.call
        return routed_said(call, call.routed[0], call.mcp_requests[0]["message"])

    def definition_said(self) -> str:
        return defined_said(self.call, self.call.routed[0].get("digest"))

    def server_said(self) -> str:
        request = self.call.mcp_requests[0]
        mcp_id = request["message"].get("id")
        return answered_said(request, mcp_id, rounds_said(self.call), self.verdict, False)

    def feedback_said(self) -> str:
        return rendered_said(self.call, self.verdict, self.expected, self.copies)

    def link_said(self) -> str:
        request = self.call.mcp_requests[0]
        return linked_said(self.call, request["message"].get("id"), (request.get("server"),
                                                                      request.get("connection")))

    def parse_seqs(self) -> tuple[int, ...]:
        call = self.call
        return tuple(sorted((call.response_seq, call.parsed[0]["seq"])))

    def route_seqs(self) -> tuple[int, ...]:  # the definition finding's too
        call = self.call
        return tuple(sorted((call.response_seq, call.routed[0]["seq"], call.mcp_requests[0]["seq"])))

    def exchange_seqs(self) -> tuple[int, ...]:  # the call-link finding's too
        call = self.call
        return tuple(sorted((call.response_seq, call.mcp_requests[0]["seq"], call.mcp_responses[0]["seq"])))

    def feedback_seqs(self) -> tuple[int, ...]:
        call = self.call
        return tuple(sorted((call.response_seq, call.mcp_responses[0]["seq"], call.feedbacks[0]["seq"])))


_SAID: Final[dict[str, Callable[[_Held], str]]] = {
    "arguments_text": _Held.parse_said, "route": _Held.route_said, "definition": _Held.definition_said,
    "exchange": _Held.server_said, "rendering": _Held.feedback_said, "call_links": _Held.link_said,
}
"""Each held finding's check → what says its words."""
_SEQS: Final[dict[str, Callable[[_Held], tuple[int, ...]]]] = {
    "arguments_text": _Held.parse_seqs, "route": _Held.route_seqs, "definition": _Held.route_seqs,
    "exchange": _Held.exchange_seqs, "rendering": _Held.feedback_seqs, "call_links": _Held.exchange_seqs,
}
"""Each held finding's check → what works out its seq numbers."""


class _Turn:
    """What every call of one turn reads alike, read once per turn (``CommonCalls._turn_at``)."""

    __slots__ = ("calls", "declared", "digests", "lists_tools")

    def __init__(self, facts: RunFacts, turn: int) -> None:
        self.calls = facts.turn_calls(turn)
        """call_id → the live reader's view of the call (``RunFacts.function_call``)."""
        self.declared = facts.declarations(turn)
        """alias → the tools entry offered (``RunFacts.declared``)."""
        self.lists_tools = facts.lists_tools(turn)
        self.digests = _offered_in(facts, turn)
        """The digests the turn's request offered its tools with (``definition_of_call``)."""


def _offered_in(facts: RunFacts, turn: int) -> Any:
    """The digests the turn's request offered its tools with (its declarations'; _UNOFFERED:
    no request recorded, which ``definition_of_call`` says nothing of)."""
    current = facts.run.round(turn)
    if current is None or current.request is None:
        return _UNOFFERED
    offered_in = facts.catalog_at(current.request["seq"])
    return offered_in.get("digests") if offered_in is not None else None


class CommonCalls:
    """The common-shape findings of one run's calls, with what equal calls share."""

    steps: tuple[CallJudge, ...] = (
        parse_of_call, route_of_call, definition_of_call, server_of_call, feedback_of_call, link_of_call,
    )
    """The steps whose findings ``findings`` gives, in its order."""

    def __init__(self, facts: RunFacts) -> None:
        self.facts = facts
        self._parses: dict[str, tuple[dict[str, Any], bytes] | None] = {}
        """An arguments text → what the live parser makes of it (an object) and its encoding."""
        self._turns: dict[int, _Turn] = {}
        self._catalog: Span[dict[str, Any] | None] = (None, math.inf, -math.inf)
        """The declarations in force for a span of seqs (``RunFacts.catalog_span``): none yet."""
        self._listing: tuple[Listing | None, float, float, Any] = (None, math.inf, -math.inf, None)
        """A server's listing for a span of seqs (``RunFacts.listing_span``), and the server."""
        self._listed: dict[tuple[int, str], tuple[Any, str]] = {}
        """(id of a listing, tool) → the tool's outputSchema there and its digest."""
        self._rendered: dict[tuple[int, bool], str | None] = {}
        """(id of a verdict, structured) → the output text it renders to (None: rendered per
        call, not by content alone)."""

    def findings(self, call: CallTrace) -> Six | None:
        """The call's findings by the ``STEPS``, each the one its step gives, when the call has
        the common shape; None: the steps are to judge it."""
        try:
            return self._findings(call)
        except _ODD_SHAPE:  # a value in a shape toolrelay never writes: the steps name it
            return None

    def _findings(self, call: CallTrace) -> Six | None:  # one long pass: each value read once
        facts = self.facts
        # one event of each kind (another count raises ValueError: the steps judge the call)
        (parsed,), (routed,), (request,), (response,), (outcome,), (feedback,) = (
            call.parsed, call.routed, call.mcp_requests, call.mcp_responses, call.outcomes, call.feedbacks)
        call_id, turn = call.call_id, call.turn
        if (call.duplicates or call.final_item is not None or call.dropped or type(call_id) is not str
                or not call_id):
            return None
        recorded = outcome["outcome"]
        message, answer = request["message"], response["message"]
        if type(recorded) is not dict or type(message) is not dict or type(answer) is not dict:
            return None
        status = recorded["status"]
        if status not in ANSWERED:
            return None
        at = self._turns.get(turn) or self._turn_at(turn)
        # parse_of_call: the text parsed once, to the live parser's value
        encoded = self._parse_holds(call, parsed, at.calls.get(call_id))
        if encoded is None:
            return None
        # route_of_call: routed as declared, the routed tool called with the parsed arguments
        alias = call.alias
        server, tool = routed["server"], routed["tool"]
        params = message["params"]
        if (routed["alias"] != alias or recorded["alias"] != alias or type(params) is not dict
                or type(server) is not str or type(alias) is not str or recorded["server"] != server
                or recorded["tool"] != tool or request["server"] != server
                or message["method"] == READ_RESOURCE or params["name"] != tool
                or isinstance(call.item.get("namespace"), str)):
            return None  # (a server or alias of another type: the steps say)
        seq, catalog_span = routed["seq"], self._catalog
        if not catalog_span[1] < seq <= catalog_span[2]:
            catalog_span = self._catalog = facts.catalog_span(seq)
        catalog = catalog_span[0]
        if catalog is not None and (catalog.get("routes", {}).get(alias) if catalog else None) != [server,
                                                                                                   tool]:
            return None
        declaration = at.declared.get(alias)
        if declaration is None and at.lists_tools:
            return None  # not declared (a call recorded as answered was no hook's refusal)
        arguments = params["arguments"]
        if type(arguments) is not dict:
            return None
        if declaration is not None and declaration.get("strict") is True:
            if not self._sent_as_stripped(arguments, parsed, server, tool, request):
                return None
        elif _dumps(arguments, 2) != encoded and not json_equal(arguments, parsed.get("arguments")):
            return None
        owners = facts.tag_owners
        if owners.setdefault(id(call), None) is not None:  # its own arguments went out (route_of_call)
            return None
        # server_of_call: one tools/call (its input_required rounds a valid chain), a plain result
        if call.input_rounds and not _chain_holds(call.input_rounds, message, params, encoded):
            return None
        schema, listed = self._listed_as(server, request["seq"], tool)
        verdict = self._verdict(call, params, answer, schema)
        if verdict is None or verdict.status != status:
            return None
        # definition_of_call: the definition offered is the one routed and listed
        digests = at.digests
        if digests is _UNOFFERED:
            return None
        used = routed.get("digest")
        defined = isinstance(digests, dict) and (alias in digests or used is not None)
        if defined and (used != digests.get(alias) or (listed is not None and listed != used)):
            return None
        # feedback_of_call and link_of_call
        fed = self._fed_back(call, feedback, verdict, recorded, declaration)
        if fed is None:
            return None
        # link_of_call: the outcome and the answer name the tools/call's ids
        mcp_id = message["id"]
        ids = (mcp_id, server, request["connection"])
        named = recorded.get("mcp_id")
        if (named is not None and (named, recorded.get("server"), recorded.get("connection")) != ids) or (
                answer["id"], response["server"], response["connection"]) != ids:
            return None
        held = _Held(call, verdict, *fed)
        return (
            Finding("parse", True, held, call_id, mcp_id, server, turn, held, "arguments_text"),
            Finding("routing", True, held, call_id, mcp_id, server, turn, held, "route"),
            Finding("routing", True, held, call_id, mcp_id, server, turn, held, "definition") if defined
            else None,
            Finding("server_check", True, held, call_id, mcp_id, server, turn, held, "exchange"),
            Finding("feedback", True, held, call_id, mcp_id, server, turn, held, "rendering"),
            Finding("correlation", True, held, call_id, mcp_id, server, turn, held, "call_links"),
        )

    def _turn_at(self, turn: int) -> _Turn:
        found = self._turns[turn] = _Turn(self.facts, turn)
        return found

    def _parse_holds(self, call: CallTrace, parsed: dict[str, Any], function_call: FunctionCall | None
                     ) -> bytes | None:
        """The parsed arguments' encoding when ``parse_of_call`` finds them the live parser's
        value of the model's text (``function_call``: the live reader's view of the call),
        else None."""
        if function_call is None or function_call.problem or parsed["alias"] != function_call.alias:
            return None
        text = function_call.arguments_text
        if (parsed["error"] is not None or not isinstance(call.item["arguments"], str)
                or parsed["arguments_text"] != text):
            return None
        value = parsed["arguments"]
        if type(value) is not dict:
            return None
        encoded = _dumps(value, 2)
        if _written_as(value, text):
            return encoded  # the live parser reads that text back as that value
        expected = self._parses[text] if text in self._parses else self._parsed(text)
        if expected is None or (encoded != expected[1] and not json_equal(value, expected[0])):
            return None
        return encoded

    def _parsed(self, text: str) -> tuple[dict[str, Any], bytes] | None:
        """``parse_arguments(text)`` and its encoding, once per distinct text (None: refused)."""
        value = parse_arguments(text)
        found = self._parses[text] = (value, _dumps(value, 2)) if isinstance(value, dict) else None
        return found

    def _sent_as_stripped(self, arguments: dict[str, Any], parsed: dict[str, Any], server: Any, tool: Any,
                          request: dict[str, Any]) -> bool:
        """Whether the tools/call's ``arguments`` are the parsed ones null-stripped by the
        rule of the tool, declared strict (``_expected_arguments``)."""
        rule = self.facts.rule_of(server, tool, request["seq"])
        value = parsed.get("arguments")
        return json_equal(arguments, strip_optional_nulls(value, rule) if rule is not None else value)

    def _listed_as(self, server: str, seq: int, tool: Any) -> tuple[Any, str | None]:
        """The outputSchema of the tool in the server's listing before ``seq`` (``output_schema_of``)
        and its digest (None: not listed there)."""
        span = self._listing
        if server != span[3] or not span[1] < seq <= span[2]:
            span = self._listing = (*self.facts.listing_span(server, seq), server)
        listing = span[0]
        if listing is None or not isinstance(tool, str):
            return None, None
        key = (id(listing), tool)  # a listing RunFacts holds for the run: its id is not reused
        found = self._listed.get(key)
        if found is None:
            entry = listing.tools.get(tool)
            if entry is None:
                return None, None
            found = self._listed[key] = (entry.get("outputSchema"), listing.digest(tool))
        return found

    def _verdict(self, call: CallTrace, params: dict[str, Any], answer: dict[str, Any], schema: Any
                 ) -> Verdict | None:
        """The call's verdict (``RunFacts.verdict``) when its recorded answer is a plain result
        (a JSON-RPC response, no task, no input asked for), else None."""
        result = answer["result"]
        answer_id = answer["id"]
        if (type(result) is not dict or result.get(RESULT_TYPE) in (RESULT_TASK, INPUT_REQUIRED)
                or isinstance(params.get("task"), dict)):
            return None  # a task's, or a chain given up on
        if (answer["jsonrpc"] != "2.0" or answer.get("method") is not None or "error" in answer
                or (type(answer_id) is not int and type(answer_id) is not str)):
            return None  # not a JSON-RPC response (``recorded_exchange``: classify)
        content = result_key(result)
        if content is None:
            return None  # no JSON value: judged on its own
        # its verdict kept for the call by ``hold`` (``RunFacts.verdict``, else worked out again by the steps)
        return self.facts.by_result.get((content, id(schema))) or self.facts.verdict(call)

    def _fed_back(self, call: CallTrace, feedback: Event, verdict: Verdict, recorded: dict[str, Any],
                  declaration: Any) -> tuple[dict[str, Any], int] | None:
        """The expected output and the number of copies sent, when ``feedback_of_call`` finds
        the feedback event and every copy sent the rendering of the call's result."""
        facts = self.facts
        if recorded.get("status") != "ok" and (recorded.get("message") != verdict.message
                                               or recorded.get("error_code") != verdict.error_code):
            return None
        structured = isinstance(declaration, dict) and "output_schema" in declaration
        expected = self._expected(call, verdict, structured)
        if expected is None:
            return None
        given = feedback["item"]
        text = type(expected["output"]) is str  # then == is json_equal: every value a string
        if type(given) is not dict or not (given == expected if text else json_equal(given, expected)):
            return None
        entries = facts.sent.get(call.call_id)
        if entries is not None and len(entries) == 1:  # ``sent_after``: one output, in a later request or not
            sent = entries if entries[0][0] > call.turn else []
        else:
            sent = facts.sent_after(call)
        for entry in sent:
            item = entry[2]
            if item is not given and not (item == given if text else json_equal(item, given)):
                return None
        facts.hold(call, verdict, expected)
        return expected, len(sent)

    def _expected(self, call: CallTrace, verdict: Verdict, structured: bool) -> dict[str, Any] | None:
        """``RunFacts.expected(call)``: of a success or tool error equal to one rendered
        already, made from that text (``_expected_item``), else by ``expected`` itself."""
        key = (id(verdict), structured)  # a verdict RunFacts holds for the run: its id is not reused
        text = self._rendered.get(key, _UNRENDERED)
        if text is _UNRENDERED:
            expected = self.facts.expected(call)
            output = expected.get("output") if expected is not None else None
            shared = rendering_key(verdict, structured) is not None and isinstance(output, str)
            self._rendered[key] = output if shared and isinstance(output, str) else None
            return expected
        return self.facts.expected(call) if text is None else feedback_item(call.call_id, text)


def _chain_holds(rounds: list[tuple[Event, Event]], last: dict[str, Any], params: dict[str, Any],
                 encoded: bytes) -> bool:
    """Whether ``chain_problem`` finds the input_required rounds one valid chain ending in
    the call's tools/call (``last``, its ``params``, sent with the parsed arguments: ``encoded``)."""
    first_message = rounds[0][0].get("message")
    if type(first_message) is not dict:
        return False
    first = first_message.get("params")
    if type(first) is not dict or "inputResponses" in first or "requestState" in first:
        return False
    name, first_arguments = first.get("name"), first.get("arguments")
    if type(first_arguments) is not dict or (_dumps(first_arguments, 2) != encoded
                                             and not json_equal(first_arguments, params.get("arguments"))):
        return False
    if len(rounds) == 1:
        return _retried_once(rounds[0][1], first_message, name, last, params)
    seen = [first_message.get("id")]  # by ==: a 1 taken for a true declines, never passes
    for number, (_, answer) in enumerate(rounds, 1):
        retry = rounds[number][0].get("message") if number < len(rounds) else last
        asked = answer.get("message")
        asked = asked.get("result") if type(asked) is dict else None
        if type(retry) is not dict or type(asked) is not dict:
            return False
        given = retry.get("params")
        retry_id = retry.get("id")
        if type(given) is not dict or given.get("name") != name or retry_id in seen:
            return False
        seen.append(retry_id)
        if given is not params and not json_equal(given.get("arguments"), first_arguments):
            return False
        wanted, answered = asked.get("inputRequests"), given.get("inputResponses")
        if not (type(wanted) is dict and type(answered) is dict and wanted.keys() == answered.keys()):
            return False
        if ("requestState" in asked or "requestState" in given) and asked.get(
                "requestState", _ABSENT) != given.get("requestState", _ABSENT):
            return False  # given, and not echoed unchanged
    return True


def _retried_once(answer: Event, first: dict[str, Any], name: Any, last: dict[str, Any],
                  params: dict[str, Any]) -> bool:
    """``_chain_holds``' loop for one round (the common chain): its answer asked for inputs,
    and the call's own tools/call (``last``) is its retry with each of them given."""
    asked = answer["message"]
    asked = asked["result"] if type(asked) is dict else None
    if type(asked) is not dict or params["name"] != name:
        return False
    first_id, retry_id = first["id"], last["id"]
    if retry_id is first_id or retry_id == first_id:  # ``in seen``: by ==, a 1 taken for a true declines
        return False
    wanted, answered = asked["inputRequests"], params["inputResponses"]
    if not (type(wanted) is dict and type(answered) is dict and wanted.keys() == answered.keys()):
        return False
    return not (("requestState" in asked or "requestState" in params)
                and asked.get("requestState", _ABSENT) != params.get("requestState", _ABSENT))


_ABSENT: Final = object()
_UNRENDERED: Final = "\0 not rendered yet"
"""``CommonCalls._rendered``'s answer for a verdict not rendered yet (a text no rendering is: its
identity is asked)."""
_UNOFFERED: Final = object()
