"""Elicitation on the terminal: a server asks the user for input (``--elicit``).

``ask`` (the default on a terminal) shows which server asks and its message, then the
form field by field (each field's title, description, choices and default; an empty
answer takes the default; a value that does not fit is asked again) or, for URL mode,
the whole URL with its domain (a warning when it is Punycode); decline and cancel are
always offered, and Ctrl-D cancels. A URL is never fetched and never opened unless the
user consents and ``--open`` was given. ``defaults`` accepts forms with their defaults
without asking and declines URLs; ``decline`` declines everything. Without a terminal,
``ask`` declines, saying so. The form reading itself (fields, defaults, checks) is
``client.host.forms``; only the questions are here.
"""

from __future__ import annotations

import asyncio
import sys
import webbrowser
from typing import Any, Final, TextIO
from urllib.parse import urlsplit

from ..client.host import (
    ElicitationAnswer,
    ElicitationRequest,
    Elicitor,
    FormField,
    accept_defaults,
    declining,
)

__all__ = ["ELICIT_POLICIES", "elicitor_for", "terminal_elicitor"]

ELICIT_POLICIES: Final = ("ask", "defaults", "decline")
NO_TERMINAL_HINT: Final = "no terminal to ask on; rerun with --elicit defaults to accept forms' defaults"


class _Cancelled(Exception):
    """Ctrl-D (end of input) or "c": the user cancelled the dialog."""


def elicitor_for(policy: str | None, *, open_urls: bool, lock: asyncio.Lock | None = None,
                 interactive: bool | None = None) -> Elicitor:
    """The elicitor ``--elicit POLICY`` asks for (None: ``ask`` on a terminal, else decline)."""
    if policy == "defaults":
        return accept_defaults
    if policy == "decline":
        return declining("--elicit decline")
    on_terminal = sys.stdin.isatty() and sys.stderr.isatty() if interactive is None else interactive
    if on_terminal:
        return terminal_elicitor(open_urls=open_urls, lock=lock)
    return declining(NO_TERMINAL_HINT)


def terminal_elicitor(ask_in: TextIO | None = None, ask_out: TextIO | None = None, *, open_urls: bool = False,
                      lock: asyncio.Lock | None = None) -> Elicitor:
    """Ask on the terminal, one dialog at a time (``lock`` is shared with other prompts)."""
    guard = lock or asyncio.Lock()
    dialog = _Dialog(ask_in or sys.stdin, ask_out or sys.stderr, open_urls)

    async def elicit(request: ElicitationRequest) -> ElicitationAnswer:
        async with guard:
            return await asyncio.to_thread(dialog.run, request)

    return elicit


class _Dialog:
    def __init__(self, ask_in: TextIO, ask_out: TextIO, open_urls: bool) -> None:
        self.ask_in, self.ask_out, self.open_urls = ask_in, ask_out, open_urls

    def say(self, text: str) -> None:
        self.ask_out.write(text)
        self.ask_out.flush()

    def ask(self, question: str) -> str:
        self.say(question)
        line = self.ask_in.readline()
        if not line:
            raise _Cancelled
        return line.rstrip("\n")

    def run(self, request: ElicitationRequest) -> ElicitationAnswer:
        during = f" (during call {request.call_id})" if request.call_id else ""
        try:
            if request.mode == "url":
                return self._url(request, during)
            return self._form(request, during)
        except _Cancelled:
            self.say("\n(cancelled)\n")
            return ElicitationAnswer("cancel")

    def _choose(self, question: str) -> str:
        while True:
            answer = self.ask(question).strip().lower()
            if answer in ("y", "yes", "n", "no", "c", "cancel"):
                return answer[0]
            self.say("  please answer y, n or c\n")

    def _url(self, request: ElicitationRequest, during: str) -> ElicitationAnswer:
        url = request.url or ""
        host = urlsplit(url).hostname or "?"
        self.say(f"\nServer {request.server} asks you to open a URL{during}:\n  {request.message}\n"
                 f"  {url}\n  domain: {host}\n")
        if any(label.startswith("xn--") for label in host.split(".")):
            self.say("  warning: the domain is written in Punycode (xn--...): it may imitate another name\n")
        choice = self._choose("Open it? [y]es / [n]o, decline / [c]ancel: ")
        if choice != "y":
            return ElicitationAnswer("decline" if choice == "n" else "cancel")
        if self.open_urls:
            webbrowser.open(url)
            self.say("  opened in your browser\n")
        else:
            self.say("  open it in your browser yourself (toolrelay opens URLs only with --open)\n")
        return ElicitationAnswer("accept")

    def _form(self, request: ElicitationRequest, during: str) -> ElicitationAnswer:
        self.say(f"\nServer {request.server} asks for input{during}:\n  {request.message}\n")
        choice = self._choose("Fill in the form? [y]es / [n]o, decline / [c]ancel: ")
        if choice != "y":
            return ElicitationAnswer("decline" if choice == "n" else "cancel")
        content: dict[str, Any] = {}
        for field in request.fields:
            value = self._field(field)
            if value is not _LEFT_OUT:
                content[field.name] = value
        return ElicitationAnswer("accept", content)

    def _field(self, field: FormField) -> Any:
        about = f" — {field.description}" if field.description else ""
        self.say(f"\n  {field.title}{about}\n")
        for number, (_, label) in enumerate(field.options, 1):
            self.say(f"    {number}) {label}\n")
        hint = _hint(field)
        while True:
            text = self.ask(f"  {field.name}{hint}: ")
            if not text.strip():
                if field.has_default:
                    return field.default
                if not field.required:
                    return _LEFT_OUT
                self.say("    required\n")
                continue
            try:
                return field.parse(text)
            except ValueError as exc:
                self.say(f"    {exc}\n")


_LEFT_OUT: Final = object()


def _hint(field: FormField) -> str:
    """What the prompt shows after the field's name: kind, bounds, default, required."""
    shown: list[str] = []
    if field.kind == "boolean":
        shown.append("y/n")
    elif field.kind == "choices":
        shown.append("numbers, separated by commas")
    elif field.kind == "choice":
        shown.append("a number")
    elif field.format:
        shown.append(field.format)
    elif field.kind in ("number", "integer"):
        bounds = [f"{field.minimum:g}" if field.minimum is not None else "",
                  f"{field.maximum:g}" if field.maximum is not None else ""]
        shown.append(field.kind + (f" {bounds[0]}..{bounds[1]}" if any(bounds) else ""))
    if field.has_default:
        shown.append(f"default {_default_text(field)}")
    elif field.required:
        shown.append("required")
    return f" ({', '.join(shown)})" if shown else ""


def _default_text(field: FormField) -> str:
    labels = dict(field.options)
    if isinstance(field.default, list):
        return ", ".join(labels.get(str(v), str(v)) for v in field.default)
    if isinstance(field.default, bool):
        return "yes" if field.default else "no"
    return labels.get(str(field.default), str(field.default))
