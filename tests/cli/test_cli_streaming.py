"""``toolrelay run`` streams: the answer on stdout as it arrives, once; --no-stream, --json, --early."""

from __future__ import annotations

import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import make_workspace, toolrelay

from testkit.transcripts import transcript_events
from toolrelay.cli.answer import DIM, RESET, AnswerPrinter
from toolrelay.offline.wire import function_call_item, message_item, response_object
from toolrelay.relay.loop import RunResult
from toolrelay.relay.run_events import ReasoningDelta, RunFinished, TextDelta, TextDone, TurnFinished

ANSWER = "The tool returned:\n" + "".join(f"line {i}\n" for i in range(1, 21))


class Flushes(io.StringIO):
    """A stdout that remembers what had been written at each flush."""

    def __init__(self) -> None:
        super().__init__()
        self.flushed: list[str] = []

    def flush(self) -> None:
        self.flushed.append(self.getvalue())


class Gone(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError


def test_each_delta_is_flushed_as_it_comes_and_each_message_ends_its_line() -> None:
    out = Flushes()
    printer = AnswerPrinter(out)
    for event in (TextDelta(turn=1, text="Let me "), TextDelta(turn=1, text="look."),
                  TextDone(turn=1, text="Let me look."), TextDelta(turn=2, text="Done.\n"),
                  TextDone(turn=2, text="Done.\n")):
        printer(event)
    assert out.flushed[:2] == ["Let me ", "Let me look."]
    assert out.getvalue() == "Let me look.\nDone.\n"
    assert printer.turns == {1, 2}


def test_a_message_that_broke_off_still_ends_its_line() -> None:
    out = io.StringIO()
    printer = AnswerPrinter(out)
    printer(TextDelta(turn=1, text="half a sen"))
    printer(TurnFinished(turn=1, status="incomplete"))
    assert out.getvalue() == "half a sen\n"


def test_reasoning_summaries_go_to_stderr_dimmed_only_on_a_terminal() -> None:
    for dim, expected in ((True, f"{DIM}thinking{RESET}\n"), (False, "thinking\n")):
        out, err = io.StringIO(), io.StringIO()
        printer = AnswerPrinter(out, err, dim=dim)
        printer(ReasoningDelta(turn=1, text="thinking"))
        printer(TextDelta(turn=1, text="answer"))
        assert err.getvalue() == expected and out.getvalue() == "answer"


def test_raw_reasoning_and_quiet_runs_print_no_reasoning() -> None:
    out, err = io.StringIO(), io.StringIO()
    AnswerPrinter(out, err)(ReasoningDelta(turn=1, text="raw", summary=False))
    AnswerPrinter(out, None)(ReasoningDelta(turn=1, text="summary"))
    assert err.getvalue() == "" and out.getvalue() == ""


def test_a_reader_that_went_away_stops_the_printing_not_the_run() -> None:
    printer = AnswerPrinter(Gone())
    printer(TextDelta(turn=1, text="a"))
    printer(TextDelta(turn=1, text="b"))  # no second BrokenPipeError
    printer(RunFinished(result=RunResult(run_id="r", status="completed", reason="")))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "workspace")


def _records(transcript: Path) -> list[dict[str, Any]]:
    return transcript_events(transcript)


def test_run_streams_by_default_and_prints_the_answer_once(workspace: Path) -> None:
    proc = toolrelay("run", "Read the first 20 lines of notes.txt", "--model", "offline",
                     "--transcript", "t.jsonl", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ANSWER
    records = _records(workspace / "t.jsonl")
    bodies = [r["body"] for r in records if r["kind"] == "model_request"]
    assert [b.get("stream") for b in bodies] == [True, True]
    assert any(r["kind"] == "model_stream" for r in records)


def test_no_stream_asks_for_whole_responses_and_prints_the_same_answer(workspace: Path) -> None:
    proc = toolrelay("run", "Read the first 20 lines of notes.txt", "--model", "offline", "--no-stream",
                     "--transcript", "t.jsonl", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ANSWER
    records = _records(workspace / "t.jsonl")
    assert not [r for r in records if r["kind"] == "model_stream"]
    assert all("stream" not in r["body"] for r in records if r["kind"] == "model_request")


def test_json_prints_one_document_and_no_text_as_it_comes(workspace: Path) -> None:
    proc = toolrelay("run", "Read the first 20 lines of notes.txt", "--model", "offline", "--json",
                     cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)  # the whole of stdout: no text came before it
    assert document["final_text"] == ANSWER


@pytest.mark.parametrize("policy", ["all", "read-only", "none"])
def test_early_takes_its_three_policies(workspace: Path, policy: str) -> None:
    proc = toolrelay("run", "Read the first 20 lines of notes.txt", "--model", "offline", "--early", policy,
                     cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ANSWER


def test_early_refuses_other_words(workspace: Path) -> None:
    proc = toolrelay("run", "x", "--model", "offline", "--early", "some", cwd=workspace)
    assert proc.returncode == 2
    assert "--early: invalid choice: 'some'" in proc.stderr


class _JsonOnly(BaseHTTPRequestHandler):
    """An endpoint that cannot stream: it answers every request with a whole JSON Response."""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        answered = any(i.get("type") == "function_call_output" for i in body["input"])
        output = [message_item("msg_2", "read it")] if answered else [
            function_call_item("fc_1", "call_1", "fs__read_text_file", '{"path": "notes.txt", "head": 1}')]
        payload = json.dumps(response_object(response_id=f"resp_{len(body['input'])}", created_at=0,
                                             request=body, output=output)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def test_an_endpoint_that_cannot_stream_gets_one_notice_and_the_run_goes_on(workspace: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _JsonOnly)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        proc = toolrelay("run", "Read one line", "--model", "m", "--base-url", url, "--transcript", "t.jsonl",
                         cwd=workspace, env={"OPENAI_API_KEY": "sk-test"})
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "read it\n"
    said = [line for line in proc.stderr.splitlines() if "--no-stream" in line]
    assert said == ["! the model endpoint answered a whole JSON response to stream: true; the rest of the "
                    "run goes on without streaming (--no-stream, or stream=False, does not ask for it)"]
    bodies = [r["body"] for r in _records(workspace / "t.jsonl") if r["kind"] == "model_request"]
    assert [b.get("stream") for b in bodies] == [True, None]
