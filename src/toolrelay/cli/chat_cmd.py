"""``toolrelay chat``: a conversation on the terminal, with the same servers as ``run``.

Each line typed is a user turn of one ``toolrelay.Conversation``: the answer is printed as
the model writes it (stdout), each call as it starts and ends (stderr, as ``run`` says
them), and a tool that is not read-only is asked about first (``[y/N]``, or ``--yes``).
A line starting with ``/`` is a command: ``/tools`` (what the model is offered),
``/verify`` (the transcript so far, checked link by link), ``/view`` (it drawn as HTML),
``/help`` and ``/exit`` (or end of input, Ctrl-D). On exit the conversation is saved to
``--history`` (default ``toolrelay-chat.json``) and the transcript (``--transcript``,
default the history's name with ``.jsonl``) holds every turn; ``toolrelay chat`` again
continues the saved conversation (``--new`` starts another), appending to its transcript.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import Final, TextIO

from ..conversation import Conversation
from ..errors import UsageError
from ..events import EventStream
from ..runner import OFFLINE_MODEL, RunOptions
from .answer import AnswerPrinter
from .consent import sampling_approver
from .elicitation import elicitor_for
from .host_options import add_elicit_options
from .otel_options import tracer_provider
from .progress import AtFirstStart, ProgressPrinter
from .run_cmd import approver
from .run_options import add_run_options, shaping_options
from .server_activity import ServerActivityPrinter
from .sign_in import apply_auth_option

__all__ = ["COMMANDS_HELP", "configure", "run"]

DEFAULT_HISTORY: Final = "toolrelay-chat.json"
PROMPT: Final = "you> "
COMMANDS_HELP: Final = ("/tools  the tools the model is offered\n"
                        "/verify check the transcript so far, link by link\n"
                        "/view   draw the transcript as HTML\n"
                        "/exit   save the conversation and leave (also Ctrl-D)")

EXAMPLES = """examples:
  toolrelay chat --model offline
  OPENAI_API_KEY=sk-... toolrelay chat --model gpt-4.1 --config .vscode/mcp.json
  toolrelay chat --history notes-chat.json      # continues it when it exists

in the chat: /tools, /verify, /view, /help, /exit (or Ctrl-D)."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_run_options(parser, "run")
    add_elicit_options(parser)
    add = parser.add_argument
    add("--history", metavar="FILE", default=DEFAULT_HISTORY,
        help=f"where the conversation is saved on exit and continued from (default {DEFAULT_HISTORY})")
    add("--new", action="store_true", help="start a new conversation even when --history holds one")
    add("--transcript", metavar="FILE",
        help="record every turn as JSONL (default: the --history file's name with .jsonl)")
    parser.epilog = EXAMPLES + "\n\n" + (parser.epilog or "")


def run(args: argparse.Namespace) -> int:
    if args.script and args.model != OFFLINE_MODEL:
        raise UsageError("--script drives the offline model; add --model offline")
    history = Path(args.history)
    events = EventStream()
    if not args.quiet:
        if args.config is None:
            notice = f"· no --config: the built-in read-only file server exposes {os.getcwd()} as server fs\n"
            events.subscribe(AtFirstStart(sys.stderr, notice))
        events.subscribe(ServerActivityPrinter())
        events.subscribe(ProgressPrinter())
    options = _options(args, events)
    options.tracer_provider = tracer_provider(args)
    apply_auth_option(args)
    loaded = history.exists() and not args.new
    if loaded:
        conversation = Conversation.load(history, replace(options, transcript=args.transcript))
    else:
        transcript = args.transcript or history.with_suffix(".jsonl")
        conversation = Conversation(replace(options, transcript=transcript))
    chat = Chat(conversation, history, sys.stdout, reasoning=None if args.quiet else sys.stderr)
    try:
        asyncio.run(chat.talk(continued=loaded))
    except KeyboardInterrupt:
        sys.stderr.write(f"\ntoolrelay chat: interrupted; {chat.saved_line()}\n")
        return 130
    return 0


def _options(args: argparse.Namespace, events: EventStream) -> RunOptions:
    prompts = asyncio.Lock()  # one question on the terminal at a time, whoever asks
    return replace(
        shaping_options(args), events=events, approve=approver(args.yes, prompts),
        approve_sampling=sampling_approver(args.yes, prompts),
        elicit=elicitor_for(args.elicit, open_urls=args.open, lock=prompts),
    )


class Chat:
    """The terminal side of one conversation: reads lines, prints answers and commands."""

    def __init__(self, conversation: Conversation, history: Path, out: TextIO, *,
                 reasoning: TextIO | None) -> None:
        self.conversation = conversation
        self.history = history
        self.out = out
        self.reasoning = reasoning
        self._saved = False

    async def talk(self, *, continued: bool) -> None:
        """Open the conversation, answer lines until /exit or end of input, save it."""
        async with self.conversation:
            self._say(self._greeting(continued))
            try:
                while (line := await _next_line(self.out)) is not None:
                    if not await self._take(line.strip()):
                        break
            finally:
                self._save()
                self._say(f"· {self.saved_line()}")

    def _greeting(self, continued: bool) -> str:
        conv = self.conversation
        count = len(conv.catalog.declarations())
        model = conv.options.model
        again = (f" · continuing {self.history} ({conv.user_turns} message(s) so far)" if continued else "")
        return f"· toolrelay chat with {model} · {count} tool(s){again} · /help for commands"

    async def _take(self, text: str) -> bool:
        """Act on one line; False when the chat ends."""
        if not text:
            return True
        if text.startswith("/"):
            return self._command(text)
        dim = self.reasoning is not None and self.reasoning.isatty()
        printer = AnswerPrinter(self.out, self.reasoning, dim=dim)
        async for event in self.conversation.stream(text):
            printer(event)
        return True

    def _command(self, text: str) -> bool:
        name = text.split()[0]
        if name in ("/exit", "/quit"):
            return False
        if name == "/help":
            self._say(COMMANDS_HELP)
        elif name == "/tools":
            self._say(self._tools())
        elif name == "/verify":
            self._say(self._verify())
        elif name == "/view":
            self._say(self._view())
        else:
            self._say(f"unknown command {name}: /tools, /verify, /view, /help or /exit")
        return True

    def _tools(self) -> str:
        routes = self.conversation.catalog.routes
        if not routes:
            return "no tools are offered (no server is available)"
        width = max(len(route.alias) for route in routes)
        lines = [f"{r.alias:<{width}}  {r.server}/{r.tool}{'' if r.read_only else '  (asks first)'}"
                 for r in routes]
        return "\n".join(lines)

    def _transcript(self) -> Path:
        path = self.conversation.options.transcript
        assert path is not None  # the chat always records
        return Path(path)

    def _verify(self) -> str:
        from ..verify import load_run, verify
        from .verify_cmd import report

        if not self.conversation.user_turns:
            return "nothing to verify yet: no message was sent"
        return report(verify(load_run(self._transcript()))).rstrip("\n")

    def _view(self) -> str:
        from ..verify import load_run, verify
        from ..view.build import build_trace
        from ..view.render import write_html
        from .view_cmd import default_output

        if not self.conversation.user_turns:
            return "nothing to draw yet: no message was sent"
        source = self._transcript()
        record = load_run(source)
        output = default_output(source)
        write_html(build_trace(record.events, verify(record), source=str(source)), output)
        return f"wrote {output}: open it in a browser"

    def _save(self) -> None:
        if self.conversation.user_turns:
            self.conversation.save(self.history)
            self._saved = True

    def saved_line(self) -> str:
        if not self._saved:
            return "nothing was said: nothing saved"
        return (f"saved the conversation to {self.history} (transcript {self._transcript()}); "
                "`toolrelay chat` again continues it")

    def _say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()


def _settle(read: asyncio.Future[str], line: str) -> None:
    if not read.done():
        read.set_result(line)


async def _next_line(out: TextIO) -> str | None:
    """The next line typed (None at end of input), after the prompt. Read on a daemon
    thread: Ctrl-C while it waits ends the chat, never waiting for a line."""
    out.write(PROMPT)
    out.flush()
    loop = asyncio.get_running_loop()
    read: asyncio.Future[str] = loop.create_future()

    def reading() -> None:
        line = sys.stdin.readline()
        loop.call_soon_threadsafe(_settle, read, line)

    threading.Thread(target=reading, name="toolrelay-chat-input", daemon=True).start()
    line = await read
    return line if line else None
