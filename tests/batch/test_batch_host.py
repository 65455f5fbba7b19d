"""What servers ask during a batch's tasks (MCP host part 1 in ``toolrelay batch``): sampling is
answered by the batch's model once ``--yes`` approves it, a form with its defaults under
``--elicit defaults``; without them both are refused or declined, never prompted for (a batch
never prompts), and every task's transcript verifies with the server's requests in its call.
One call at a time (``-j 1``, one call a turn): a request that comes while several calls of a
shared server are running cannot be told apart on stdio. The answered batch runs in both
model dialects (``--api responses`` and ``--api chat``; tests/chat/test_chat_sampling.py
shows the sampling request itself asked as a chat completion)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from batch_helpers import results, toolrelay, transcript, write_tasks

from testkit.dialect import Dialect
from testkit.servers import ASKING_SERVER
from testkit.transcripts import transcript_events
from toolrelay.verify import load_run, verify

OPTIONAL_NAME = {"type": "object",
                 "properties": {"name": {"type": "string"}, "age": {"type": "integer", "default": 30}}}
"""A form --elicit defaults can accept: no required field without a default."""
TURNS = [{"calls": [{"name": "ask__sample", "arguments": {"prompt": "Say hi"}}]},
         {"calls": [{"name": "ask__elicit",
                     "arguments": {"message": "Who are you?", "schema": OPTIONAL_NAME}}]}]


RESPONSES = Dialect("responses")


def batch(tmp_path: Path, *options: str, dialect: Dialect = RESPONSES) -> dict[str, Any]:
    (tmp_path / "mcp.json").write_text(json.dumps(
        {"mcpServers": {"ask": {"command": sys.executable, "args": [str(ASKING_SERVER)]}}}))
    (tmp_path / "script.json").write_text(json.dumps({"turns": TURNS}))
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "a1", "task": "ask"}, {"id": "a2", "task": "ask"}])
    done = toolrelay("batch", str(tasks), "--out", "out", "--model", "offline", "--script", "script.json",
                     "--config", "mcp.json", "-j", "1", "--api", dialect.api, *options, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    outputs = {}
    for line in results(tmp_path / "out"):
        assert verify(load_run(tmp_path / "out" / line["transcript"])).ok
        events = transcript(tmp_path / "out", line["id"])
        fed = [e for e in events if e["kind"] == "feedback"]
        outputs[line["id"]] = {e["item"]["call_id"]: e["item"]["output"] for e in fed}
        asked = [e for e in events if e["kind"] == "mcp_server_request"]
        assert {e["message"]["method"] for e in asked} >= {"sampling/createMessage", "elicitation/create"}
        assert all(e.get("call_id") for e in asked)  # each attached to the call it came during
        sent = [e for e in transcript_events(tmp_path / "out" / line["transcript"])
                if e["kind"] == "model_request"]
        assert {e["dialect"] for e in sent} == {dialect.api}
        for request in sent:
            dialect.check(request["body"])
    return outputs


def replies(outputs: dict[str, Any]) -> list[str]:
    return sorted(str(text) for by_call in outputs.values() for text in by_call.values())


def test_yes_and_elicit_defaults_answer_what_the_server_asks(tmp_path: Path, dialect: Dialect) -> None:
    said = replies(batch(tmp_path, "--yes", "--elicit", "defaults", dialect=dialect))
    assert sum('"action": "accept"' in text for text in said) == 2  # each task's form, accepted
    assert sum('"role": "assistant"' in text for text in said) == 2  # each task's sample, answered
    assert not any("error" in json.loads(text) for text in said)


def test_without_them_sampling_is_refused_and_forms_declined_naming_the_options(tmp_path: Path) -> None:
    said = replies(batch(tmp_path))
    refused = [text for text in said if "sampling" in text or "--yes" in text]
    assert len(refused) == 2 and all("run the batch with --yes" in text for text in refused)
    assert sum('"action": "decline"' in text for text in said) == 2
