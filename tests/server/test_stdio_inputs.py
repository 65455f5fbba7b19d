"""stdin need not be a pipe: a file of requests or /dev/null works too (the event loop
cannot watch those, so the server reads them in a thread)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def test_requests_from_a_file_are_answered_and_the_server_exits_at_its_end(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\n")
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "read_text_file", "arguments": {"path": "notes.txt", "head": 1}},
    }
    requests = tmp_path / "requests.jsonl"
    requests.write_text(json.dumps(INIT) + "\n" + json.dumps(call) + "\n")
    with requests.open("rb") as stdin:
        proc = subprocess.run(
            [sys.executable, "-m", "toolrelay", "files", str(tmp_path)],
            stdin=stdin,
            capture_output=True,
            timeout=30,
        )
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[1]["result"]["content"] == [{"type": "text", "text": "one\n"}]


def test_dev_null_as_stdin_ends_the_session_at_once(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "toolrelay", "files", str(tmp_path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
    )
    assert proc.returncode == 0 and proc.stdout == b""


def test_deeply_nested_json_is_answered_as_a_parse_error_and_the_session_goes_on(tmp_path: Path) -> None:
    """Nested 5,000 deep: the request is answered -32700 with its id (so the client's call
    fails at once), and the server keeps serving the lines after it."""
    deep = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"a":' \
        + "[" * 5000 + "]" * 5000 + "}}}"
    ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    stdin = (json.dumps(INIT) + "\n" + deep + "\n" + json.dumps(ping) + "\n").encode()
    proc = subprocess.run(
        [sys.executable, "-m", "toolrelay", "files", str(tmp_path)],
        input=stdin, capture_output=True, timeout=30,
    )
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3]
    too_deep = "Parse error: JSON nested deeper than 512 levels"
    assert answers[1]["error"] == {"code": -32700, "message": too_deep}
    assert answers[2]["result"] == {}
