"""``toolrelay chat`` in a real terminal: a subprocess on a pseudo-terminal (``os.openpty``)
is asked a question, runs a call, streams the answer, takes commands and ``/exit``; the
conversation and its transcript are saved, and ``chat`` again continues them (in both model
dialects: ``--api chat``)."""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from conversation_helpers import conversation_folder, events_of, verdict_of

from testkit.dialect import Dialect
from testkit.processes import ProcessKeeper
from testkit.servers import HONEST_SERVER

QUIET_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_OPENAI_"))}


def _take_the_terminal() -> None:
    """In the child, in its new session: the pseudo-terminal (its stdin) becomes its
    controlling terminal, so Ctrl-C typed there is SIGINT to it, as in a real shell."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """``toolrelay chat ARGS`` on a pseudo-terminal: type lines, wait for what it prints."""

    def __init__(self, processes: ProcessKeeper, folder: Path, *args: str) -> None:
        self.master, slave = os.openpty()
        self.proc = processes.spawn([sys.executable, "-m", "toolrelay", "chat", *args], cwd=folder,
                                    stdin=slave, stdout=slave, stderr=slave, env=QUIET_ENV,
                                    preexec_fn=_take_the_terminal)
        os.close(slave)
        self.seen = ""

    def wait_for(self, text: str, timeout: float = 30) -> str:
        """Everything printed until ``text`` appears (after what was already waited for)."""
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{text!r} never appeared; the terminal shows:\n{self.seen}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536).decode("utf-8", "replace")
                except OSError:  # the child closed the terminal
                    chunk = ""
                if not chunk:
                    raise AssertionError(f"the chat ended before {text!r}; the terminal shows:\n{self.seen}")
                self.seen += chunk.replace("\r\n", "\n")
        shown, _, self.seen = self.seen.partition(text)
        return shown + text

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> int:
        try:
            code = self.proc.wait(timeout=30)
        finally:
            os.close(self.master)
        return code


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return conversation_folder(tmp_path)


def test_a_question_a_call_an_answer_then_exit_in_a_real_terminal(
    processes: ProcessKeeper, folder: Path,
) -> None:
    chat = Terminal(processes, folder, "--model", "offline", "--script", "script.json")
    chat.wait_for("/help for commands")
    chat.wait_for("you> ")
    chat.type("What does notes.txt say?")
    shown = chat.wait_for("It lists alpha, beta and gamma.")
    assert "call fs__read_text_file started" in shown
    assert "  call fs__read_text_file → fs/read_text_file · mcp id" in shown and "· ok" in shown
    chat.wait_for("you> ")
    chat.type("/tools")
    tools = chat.wait_for("you> ")
    assert re.search(r"^fs__read_text_file +fs/read_text_file$", tools, re.MULTILINE), tools
    chat.type("/verify")
    verified = chat.wait_for("you> ")
    assert "run " in verified and "checks hold" in verified and "BROKEN" not in verified
    chat.type("/nonsense")
    assert "unknown command /nonsense: /tools, /verify, /view, /help or /exit" in chat.wait_for("you> ")
    chat.type("/exit")
    chat.wait_for("`toolrelay chat` again continues it")
    assert chat.close() == 0
    saved = json.loads((folder / "toolrelay-chat.json").read_text())
    assert (saved["user_turns"], saved["turns"], saved["transcript"]) == (1, 2, "toolrelay-chat.jsonl")
    assert verdict_of(folder / "toolrelay-chat.jsonl").ok


def test_chat_again_continues_the_saved_conversation(
    processes: ProcessKeeper, folder: Path, dialect: Dialect
) -> None:
    first = Terminal(processes, folder, "--model", "offline", "--script", "script.json", "--quiet",
                     "--api", dialect.api)
    first.wait_for("you> ")
    first.type("What does notes.txt say?")
    first.wait_for("It lists alpha, beta and gamma.")
    first.wait_for("you> ")
    os.write(first.master, b"\x04")  # Ctrl-D: end of input
    first.wait_for("again continues it")
    assert first.close() == 0
    again = Terminal(processes, folder, "--model", "offline", "--script", "script.json", "--quiet",
                     "--api", dialect.api)
    assert "continuing toolrelay-chat.json (1 message(s) so far)" in again.wait_for("you> ")
    again.type("And its first line?")
    again.wait_for("The first line is alpha.")
    again.wait_for("you> ")
    again.type("/view")
    assert "wrote toolrelay-chat.html: open it in a browser" in again.wait_for("you> ")
    again.type("/exit")
    again.wait_for("again continues it")
    assert again.close() == 0
    events = events_of(folder / "toolrelay-chat.jsonl")
    starts = [e["kind"] for e in events if e["kind"] in ("run_start", "user_turn")]
    assert starts == ["run_start", "user_turn"]
    sent = [e for e in events if e["kind"] == "model_request"]
    assert {e["dialect"] for e in sent} == {dialect.api} and len(sent) == 4
    for event in sent:
        dialect.check(event["body"])
    verdict = verdict_of(folder / "toolrelay-chat.jsonl")
    assert verdict.ok and verdict.finished


def test_script_without_the_offline_model_is_refused(folder: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "toolrelay", "chat", "--script", "script.json"], cwd=folder,
                          capture_output=True, text=True, env=QUIET_ENV, stdin=subprocess.DEVNULL, timeout=30)
    assert done.returncode == 2
    said = "toolrelay chat: error: --script drives the offline model; add --model offline"
    assert done.stderr.strip() == said


def test_a_tool_that_is_not_read_only_is_asked_about_first(processes: ProcessKeeper, tmp_path: Path) -> None:
    folder = conversation_folder(tmp_path, [
        {"calls": [{"name": "box__write", "arguments": {"text": "hello"}}]}, {"message": "Written."},
        {"calls": [{"name": "box__write", "arguments": {"text": "again"}}]}, {"message": "Not written."},
    ])
    config = {"mcpServers": {"box": {"command": sys.executable, "args": [str(HONEST_SERVER)]}}}
    (folder / "mcp.json").write_text(json.dumps(config))
    chat = Terminal(processes, folder, "--model", "offline", "--script", "script.json",
                    "--config", "mcp.json")
    chat.wait_for("you> ")
    chat.type("/tools")
    assert re.search(r"^box__write +box/write  \(asks first\)$", chat.wait_for("you> "), re.MULTILINE)
    chat.type("Write hello")
    asked = chat.wait_for("Allow? [y/N] ")
    assert ('The model wants to run write on server box (not marked read-only)\n'
            '  arguments: {"text": "hello"}') in asked
    chat.type("y")
    assert "· ok" in chat.wait_for("Written.")
    chat.wait_for("you> ")
    chat.type("Write again")
    chat.wait_for("Allow? [y/N] ")
    chat.type("n")
    assert "the user declined to run write on server box" in chat.wait_for("Not written.")
    chat.wait_for("you> ")
    chat.type("/exit")
    chat.wait_for("again continues it")
    assert chat.close() == 0
    assert verdict_of(folder / "toolrelay-chat.jsonl").ok


def test_ctrl_c_at_the_prompt_saves_the_conversation(processes: ProcessKeeper, folder: Path) -> None:
    chat = Terminal(processes, folder, "--model", "offline", "--script", "script.json", "--quiet")
    chat.wait_for("you> ")
    chat.type("What does notes.txt say?")
    chat.wait_for("It lists alpha, beta and gamma.")
    chat.wait_for("you> ")
    os.write(chat.master, b"\x03")  # Ctrl-C: the terminal sends SIGINT
    chat.wait_for("toolrelay chat: interrupted; saved the conversation to toolrelay-chat.json")
    assert chat.close() == 130
    assert json.loads((folder / "toolrelay-chat.json").read_text())["user_turns"] == 1
    assert verdict_of(folder / "toolrelay-chat.jsonl").ok
