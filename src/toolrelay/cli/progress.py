"""Live progress on stderr and the ``--wire`` view, both read from the event stream."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from ..client.wire_events import EraNotes
from ..errors import ServerExited
from ..events import (
    AuthOutcome,
    CallOutcomeEvent,
    CallParsed,
    CatalogReady,
    Event,
    FeedbackEvent,
    McpMessage,
    ModelRequestEvent,
    ModelResponseEvent,
    Notice,
    RunEndEvent,
    RunStartEvent,
    ServerExitedEvent,
    ServerReady,
    ServerStarting,
)
from ..redaction import redact, worth_redacting
from ..relay.stages.cost import cost_text
from ..relay.stages.endings import ending_line
from ..relay.stages.namespaces import function_tools_by_alias
from ..relay.stages.policy_rules import REFUSED_BY_POLICY
from ..relay.stages.usage import usage_text
from .closed_stdout import write_or_stop

__all__ = ["AtFirstStart", "ProgressPrinter", "WireLog", "WirePrinter", "failure_text"]


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


CUT_MARK = " · the model did not get all of it"
EARLY_START = " early, while the response streams"
"""A call's start line, when it started before its response was complete."""
SAID_BY_THE_COMMAND = ("error", "aborted")
"""Run endings the command reports itself (the endpoint's error, Ctrl-C): said once, there."""


class ProgressPrinter:
    """One line per model turn, notice and server event, two per call of a run (as it
    starts and as it ends, marked ``early`` when it started before its response was
    complete); only notices, server failures and outputs the model did not get whole
    unless ``verbose``.

    Each failure is said once: a server that exits before its handshake is reported by
    whoever started it (the unavailable notice or the error), and a call line does not
    repeat the stderr lines of an exit already shown.
    """

    def __init__(self, stream: TextIO | None = None, *, verbose: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.verbose = verbose
        self.silenced: set[str] = set()
        """Servers whose failures the command reports itself (error notices and exits)."""
        self._ready: set[tuple[str, int]] = set()
        self._exits_said: dict[str, str] = {}
        """An exit's full text (as a call's message says it) → the same without stderr."""
        self._in_run = False
        self._held: list[tuple[str, str]] = []
        """In a run, a call's end line waits for its feedback event, to be marked when the
        model did not get all of the output: (call_id, line). A call stopped before its end
        gets none (released when the next turn or the run's end comes). A call ending while
        its response still streams is said at once (its feedback waits for the response)."""
        self._aliases: dict[str, str] = {}
        self._streaming = False
        """Between a model request and its response: a call starting now starts early."""
        self._early: set[str] = set()
        """call_ids of the run's calls that started early."""
        self._said: set[str] = set()
        """call_ids whose end line was said before their feedback came."""

    def _say(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def __call__(self, event: Event) -> None:
        self._release(event)
        if isinstance(event, ServerReady):
            self._ready.add((event.server, event.connection))
        if isinstance(event, (RunStartEvent, RunEndEvent)):
            self._in_run = isinstance(event, RunStartEvent)
        if isinstance(event, (ModelRequestEvent, ModelResponseEvent)):
            self._streaming = isinstance(event, ModelRequestEvent)
        if isinstance(event, CallOutcomeEvent) and event.call_id is not None:
            self._aliases[event.call_id] = str(event.outcome.get("alias"))
        if isinstance(event, FeedbackEvent):
            alias = self._aliases.get(event.call_id, event.call_id)
            for shown in event.for_user:  # the server meant these for the user, not the model
                self._say(f"» {alias} (for you): {shown}")
            if event.cut and event.call_id in self._said:  # its line is out: mark it on one of its own
                self._say(f"  call {alias}{CUT_MARK}")
            for cut in event.cut:
                self._say(f"! {alias}: {cut}")
        elif isinstance(event, (Notice, ServerExitedEvent)):
            self._notice(event)
        elif isinstance(event, AuthOutcome) and event.outcome == "signed_in":  # said even when quiet
            self._say(f"· signed in to {event.server} at {event.issuer} ({event.how})")
        elif self.verbose:
            self._progress(event)

    def _release(self, event: Event) -> None:
        """Print held call lines: a call's own when ``event`` is its feedback (marked when
        it has cuts), every one when a turn or the run ends."""
        if not self._held:
            return
        if isinstance(event, FeedbackEvent):
            mark = CUT_MARK if event.cut else ""
            lines = [line + mark for call_id, line in self._held if call_id == event.call_id]
            self._held = [(call_id, line) for call_id, line in self._held if call_id != event.call_id]
        elif isinstance(event, (ModelRequestEvent, RunEndEvent)):
            lines, self._held = [line for _, line in self._held], []
        else:
            return
        for line in lines:
            self._say(line)

    def _progress(self, event: Event) -> None:
        if isinstance(event, ServerReady):
            info = event.server_info
            name, version = info.get("name", "?"), info.get("version")
            named = f"{name} {version}" if version else name  # an empty version leaves no gap
            self._say(f"· connected {event.server} ({named}, MCP {event.protocol_version})")
        elif isinstance(event, CatalogReady):
            servers = len({route[0] for route in event.routes.values()})
            count = len(function_tools_by_alias(event.tools))
            self._say(f"· {count} tool(s) from {servers} server(s) ({event.reason})")
        elif isinstance(event, ModelRequestEvent):
            retry = f" (attempt {event.attempt})" if event.attempt > 1 else ""
            self._say(f"turn {event.turn} → model {event.body.get('model', '?')}{retry}")
        elif isinstance(event, ModelResponseEvent):
            self._say(f"turn {event.turn} ← HTTP {event.status} in {_ms(event.elapsed)}")
        elif isinstance(event, CallParsed) and self._in_run and event.call_id is not None:
            if self._streaming:
                self._early.add(event.call_id)
            self._say(f"  call {event.alias} started{EARLY_START if self._streaming else ''}")
        elif isinstance(event, CallOutcomeEvent):
            self._call_ended(event)
        elif isinstance(event, RunEndEvent) and event.status not in SAID_BY_THE_COMMAND:
            tokens = usage_text(event.usage)
            ending = ending_line(event.status, event.turns, event.reason)
            cost = cost_text(event.cost)
            self._say(f"run {ending}" + (f" · tokens: {tokens}" if tokens else "")
                      + (f" · cost: {cost}" if cost else ""))

    def _call_ended(self, event: CallOutcomeEvent) -> None:
        message = str(event.outcome.get("message", ""))
        said = self._exits_said.get(message, message)
        line = _call_line(event.outcome, said, early=event.call_id in self._early)
        if not self._in_run or event.call_id is None:
            self._say(line)
        elif self._streaming:  # ended before its response is whole: said now, not after the turn line
            self._said.add(event.call_id)
            self._say(line)
        else:
            self._held.append((event.call_id, line))

    def _notice(self, event: Notice | ServerExitedEvent) -> None:
        if event.server in self.silenced and (isinstance(event, ServerExitedEvent) or event.level == "error"):
            return
        if isinstance(event, Notice) and event.level == "info":  # how it went, not a problem
            if self.verbose:
                self._say(f"· {event.text}")
        elif isinstance(event, Notice):
            self._say(f"! {event.text}")
        elif not event.expected and (event.server, event.connection) in self._ready:
            tail = f": {event.stderr_tail}" if event.stderr_tail else ""
            code = "?" if event.returncode is None else event.returncode
            self._say(f"! server {event.server} exited (code {code}){tail}")
            if tail:
                head = str(ServerExited(event.server, event.returncode))
                self._exits_said[str(ServerExited(event.server, event.returncode, event.stderr_tail))] = head


def failure_text(outcome: Mapping[str, Any], message: str | None = None) -> str:
    """A failed call in words, the same in ``call`` and a run's call line: ``timeout: …``,
    ``tool error: …``, ``protocol error -32602: … (data: …)``. ``outcome`` is the outcome
    record (``CallOutcome.to_record()``); ``message`` replaces its message when given."""
    said = str(outcome.get("message", "")) if message is None else message
    if outcome.get("refused_by") == REFUSED_BY_POLICY:
        return said  # the rule's own words: "denied by policy rule #2 of policy.json: ..."
    status = str(outcome.get("status"))
    label = "timeout" if outcome.get("transport_kind") == "timeout" else status.replace("_", " ")
    code = f" {outcome['error_code']}" if outcome.get("error_code") is not None else ""
    text = said if said.startswith(label) else f"{label}{code}: {said}"
    if outcome.get("error_data") is not None:  # the model's feedback shows it too
        text += f" (data: {json.dumps(outcome['error_data'], ensure_ascii=False)})"
    return text


def _call_line(outcome: dict[str, object], message: str, *, early: bool = False) -> str:
    status = str(outcome.get("status"))
    where = f"{outcome.get('server')}/{outcome.get('tool')}" if outcome.get("server") else "not routed"
    where += " · early" if early else ""
    mcp = f" · mcp id {json.dumps(outcome['mcp_id'])}" if outcome.get("mcp_id") is not None else ""
    elapsed = outcome.get("elapsed")
    took = f" · {_ms(elapsed)}" if isinstance(elapsed, float) and outcome.get("mcp_id") is not None else ""
    verdict = "ok" if status == "ok" else failure_text(outcome, message)
    refused = outcome.get("sampling_refused")
    took += f" · {refused} sampling request(s) refused (over the cap)" if refused else ""
    first_line = verdict.splitlines()[0] if verdict else verdict
    return f"  call {outcome.get('alias')} → {where}{mcp}{took} · {first_line[:200]}"


class WirePrinter:
    """Every JSON-RPC line with its direction, server, connection and id (``--wire``), the
    config's secrets redacted as in a transcript (a server may echo a token it was given).
    Era negotiation's fallback messages are followed by a ``-- `` line saying what they are
    (``client.wire_events.EraNotes``), so every ``>>``/``<<`` line stays one JSON message."""

    def __init__(self, stream: TextIO | None = None, secrets: Iterable[str] = ()) -> None:
        self.stream = stream or sys.stderr
        self.secrets = frozenset(s for s in secrets if worth_redacting(s))
        self._notes = EraNotes()

    def __call__(self, event: Event) -> None:
        if not isinstance(event, McpMessage):
            return
        arrow = ">>" if event.direction == "out" else "<<"
        line = redact(json.dumps(event.message, ensure_ascii=False, separators=(",", ":")), self.secrets)
        where = f"{event.server}#{event.connection}"
        note = self._notes.note(event)  # the words of --wire --json's "note", on a line of its own
        said = f"-- {where} id {json.dumps(event.mcp_id)}: {note}\n" if note else ""
        write_or_stop(self.stream, f"{arrow} {where} {line}\n{said}")


class WireLog:
    """Every JSON-RPC message as an object (``--wire --json``: the wire inside the JSON),
    the config's secrets redacted."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.messages: list[dict[str, Any]] = []
        self.secrets = frozenset(s for s in secrets if worth_redacting(s))
        self._notes = EraNotes()

    def __call__(self, event: Event) -> None:
        if isinstance(event, McpMessage):
            message = event.message
            if self.secrets:  # redacted as text, as the transcript writer does, then read back
                message = json.loads(redact(json.dumps(message, ensure_ascii=False), self.secrets))
            note = self._notes.note(event)
            self.messages.append({
                "direction": event.direction, "server": event.server,
                "connection": event.connection, "message": message, **({"note": note} if note else {}),
            })


class AtFirstStart:
    """Writes ``text`` once, when the first server starts: every option and file has been
    checked by then, so nothing is announced before a usage error."""

    def __init__(self, stream: TextIO, text: str) -> None:
        self.stream = stream
        self._text: str | None = text

    def __call__(self, event: Event) -> None:
        if isinstance(event, ServerStarting) and self._text is not None:
            text, self._text = self._text, None
            write_or_stop(self.stream, text)
