"""Call hooks (``toolrelay.CallHook``) in real runs and batches: a hook sees every call
with both of its ids, its ``_meta`` entries reach the server, its refusal is a failed
call the model is told of (and verify accepts), and it hears of a cancelled call too.

Real servers as subprocesses (the file server, a stdlib server that echoes the ``_meta``
it received, a slow one), the offline model over loopback."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import toolrelay
from testkit.processes import run
from testkit.servers import MINIMAL_ECHO_SERVER, SLOW_SERVER
from testkit.transcripts import transcript_events
from toolrelay import CallContext, CallHook, CallOutcome, FunctionCall, Refusal
from toolrelay.batches import BatchOptions
from toolrelay.client.config import ServerConfig, builtin_file_server
from toolrelay.errors import UsageError
from toolrelay.relay.loop import RunLimits
from toolrelay.verify import load_run, verify

TRACE = {"example.com/trace": "t-42"}
TWO_CALLS = {"turns": [
    {"calls": [{"name": "fs__read_text_file", "arguments": {"path": "notes.txt"}},
               {"name": "probe__meta", "arguments": {}}]},
    {"message": "done"},
]}


class Recorder(CallHook):
    """Notes each call before and after, adds ``TRACE`` to its ``_meta``, and refuses the
    tool named ``refuse``."""

    def __init__(self, refuse: str | None = None) -> None:
        self.refuse = refuse
        self.before: list[tuple[str, str, Any, str | None, str | None]] = []
        self.after: list[tuple[str | None, int | str | None, str]] = []

    async def before_call(self, call: FunctionCall, context: CallContext) -> str | None:
        self.before.append((call.call_id, call.alias, call.arguments, context.server, context.tool))
        context.meta.update(TRACE)
        return f"{context.tool} is off limits here" if context.tool == self.refuse else None

    async def after_call(self, call: FunctionCall, context: CallContext, outcome: CallOutcome) -> None:
        self.after.append((outcome.call_id, outcome.mcp_id, outcome.status))


def probe() -> ServerConfig:
    return ServerConfig(name="probe", transport="stdio", command=sys.executable,
                        args=(str(MINIMAL_ECHO_SERVER), "--meta-tool"))


def options(
    folder: Path, hook: CallHook, turns: dict[str, Any] = TWO_CALLS, **more: Any
) -> toolrelay.RunOptions:
    (folder / "notes.txt").write_text("line 1\n", encoding="utf-8")
    script = folder / "script.json"
    script.write_text(json.dumps(turns), encoding="utf-8")
    servers = more.pop("config", [builtin_file_server(folder), probe()])
    return toolrelay.RunOptions(model="offline", script=script, config=servers, hooks=[hook], **more)


def run_with(task: str, run: toolrelay.RunOptions) -> toolrelay.RunResult:
    return asyncio.run(toolrelay.run_async(task, run))


def events_of(path: Path) -> list[dict[str, Any]]:
    return transcript_events(path)


def sent_calls(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == "mcp_request" and e.get("method") == "tools/call"]


def run_through(mode: str, folder: Path, hook: CallHook) -> Path:
    """The two-call task run by ``toolrelay.run`` or by a batch, with ``hook``; its transcript."""
    if mode == "run":
        transcript = folder / "run.jsonl"
        result = run_with("read notes.txt and probe", options(folder, hook, transcript=transcript))
        assert result.completed and result.failed_calls == 0
        return transcript
    batch = BatchOptions(out=folder / "out", run=options(folder, hook))
    [task] = toolrelay.batch([{"id": "t1", "task": "read notes.txt and probe"}], batch)
    assert task.completed and task.failed_calls == 0
    return folder / "out" / "transcripts" / "t1.jsonl"


@pytest.mark.parametrize("mode", ["run", "batch"])
def test_a_hook_sees_every_call_with_its_call_id_and_mcp_id(mode: str, tmp_path: Path) -> None:
    hook = Recorder()
    transcript = run_through(mode, tmp_path, hook)
    events = events_of(transcript)
    sent = sent_calls(events)
    last = {e["call_id"]: e for e in sent}  # a request retried (input_required) has a new id: the last counts
    seen = {"read_text_file": ("fs__read_text_file", {"path": "notes.txt"}, "fs"),
            "meta": ("probe__meta", {}, "probe")}
    expected = [(call_id, *seen[e["message"]["params"]["name"]], e["message"]["params"]["name"])
                for call_id, e in last.items()]
    assert len(last) == 2 and sorted(hook.before) == sorted(expected)
    assert sorted(hook.after) == sorted((call_id, e["mcp_id"], "ok") for call_id, e in last.items())
    # the hook's _meta entries are in the exact request recorded, and the server got them
    assert all(e["message"]["params"]["_meta"]["example.com/trace"] == "t-42" for e in sent)
    [answer] = [e for e in events if e["kind"] == "mcp_response" and e.get("server") == "probe"
                and e.get("method") == "tools/call"]
    received = json.loads(answer["message"]["result"]["content"][0]["text"])
    assert received["example.com/trace"] == "t-42" and "progressToken" in received
    assert verify(load_run(transcript)).ok


def test_a_refusing_hook_is_a_failed_call_the_model_is_told_of(tmp_path: Path) -> None:
    hook = Recorder(refuse="meta")
    transcript = tmp_path / "run.jsonl"
    result = run_with("read notes.txt and probe", options(tmp_path, hook, transcript=transcript))
    by_alias = {call.alias: call for call in result.calls}
    refused = by_alias["probe__meta"]
    assert (by_alias["fs__read_text_file"].status, refused.status) == ("ok", "refused_by_hook")
    assert refused.message == "meta is off limits here" and refused.mcp_id is None and not refused.ok
    assert result.failed_calls == 1 and result.to_dict()["failed_calls"] == 1
    assert (refused.call_id, None, "refused_by_hook") in hook.after  # told of its own refusal too
    events = events_of(transcript)
    assert {e["server"] for e in sent_calls(events)} == {"fs"}  # nothing went to probe
    second = [e for e in events if e["kind"] == "model_request" and e["turn"] == 2][-1]["body"]
    [output] = [item["output"] for item in second["input"]
                if item.get("type") == "function_call_output" and item["call_id"] == refused.call_id]
    assert output == "Error (refused by hook): meta is off limits here"
    verdict = verify(load_run(transcript))
    assert verdict.ok, verdict.broken
    server_check = [f.message for f in verdict.findings if f.link == "server_check"]
    assert 'refused_by_hook: not sent to any server ("meta is off limits here")' in server_check
    # a copy claiming the refused call was sent (its outcome names an MCP id) is rejected
    for event in events:
        if event["kind"] == "call_outcome" and event["outcome"]["status"] == "refused_by_hook":
            event["outcome"]["mcp_id"] = 9
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    broken = verify(load_run(tampered)).broken
    assert broken is not None and broken.link == "server_check"
    assert "recorded as refused_by_hook (never sent), yet its outcome names mcp id 9" in broken.message


class Auditor(CallHook):
    """Refuses the ``meta`` tool in its own name: the model reads ``Error (audit): ...``."""

    async def before_call(self, call: FunctionCall, context: CallContext) -> Refusal | None:
        return Refusal("meta calls are audited today", by="audit") if context.tool == "meta" else None


def test_a_hook_that_names_itself_is_named_to_the_model_and_the_user(tmp_path: Path) -> None:
    transcript = tmp_path / "run.jsonl"
    result = run_with("read notes.txt and probe", options(tmp_path, Auditor(), transcript=transcript))
    refused = next(call for call in result.calls if call.alias == "probe__meta")
    assert (refused.status, refused.refused_by, refused.message) == (
        "refused_by_hook", "audit", "meta calls are audited today")
    assert refused.to_record()["refused_by"] == "audit"
    events = events_of(transcript)
    [output] = [e["item"]["output"] for e in events
                if e["kind"] == "feedback" and e["call_id"] == refused.call_id]
    assert output == "Error (audit): meta calls are audited today"
    assert verify(load_run(transcript)).ok  # no policy recorded, and none claimed
    explained = toolrelay_cli("explain", str(transcript))
    assert "not sent (refused by audit)" in explained


def toolrelay_cli(*args: str) -> str:
    done = run([sys.executable, "-m", "toolrelay", *args], text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_hook_hears_of_a_call_the_run_cancelled(tmp_path: Path) -> None:
    hook = Recorder()
    slow = ServerConfig(name="slow", transport="stdio", command=sys.executable,
                        args=(str(SLOW_SERVER), "--seconds", "30"))
    look = {"turns": [{"calls": [{"name": "slow__look", "arguments": {"what": "the sea"}}]}]}
    transcript = tmp_path / "run.jsonl"
    result = run_with("look", options(tmp_path, hook, look, config=[slow], limits=RunLimits(timeout=1.0),
                                      transcript=transcript))
    assert result.status == "timeout"
    [recorded] = [e["outcome"] for e in events_of(transcript) if e["kind"] == "call_outcome"]
    assert recorded["status"] == "cancelled" and recorded["mcp_id"] is not None
    assert hook.after == [(recorded["call_id"], recorded["mcp_id"], "cancelled")]


def test_a_direct_call_runs_its_hooks_and_sends_their_meta() -> None:
    """``Catalog.call`` (what ``toolrelay call`` runs) with hooks in its context."""
    hook = Recorder()

    async def call() -> CallOutcome:
        async with toolrelay.connect([probe()]) as catalog:
            return await catalog.call("probe__meta", "{}", context=CallContext(hooks=[hook]))

    outcome = asyncio.run(call())
    assert hook.before == [("", "probe__meta", {}, "probe", "meta")]  # a direct call has no call_id
    assert outcome.ok and hook.after == [(None, outcome.mcp_id, "ok")] and outcome.mcp_id is not None
    assert outcome.result is not None
    assert json.loads(outcome.result["content"][0]["text"])["example.com/trace"] == "t-42"


def test_a_direct_call_may_name_its_call_id_and_a_function_call_carries_its_own() -> None:
    """``catalog.call(alias, text, call_id=...)`` records the call under that id (as before
    the call value); beside a ``FunctionCall``, which has one already, it is a usage error."""

    async def calls() -> tuple[CallOutcome, str]:
        async with toolrelay.connect([probe()]) as catalog:
            named = await catalog.call("probe__meta", "{}", call_id="call_9")
            with pytest.raises(UsageError) as refused:
                await catalog.call(FunctionCall(call_id="call_1", name="probe__meta", arguments_text="{}"),
                                   call_id="call_2")
            return named, str(refused.value)

    named, refusal = asyncio.run(calls())
    assert named.ok and named.call_id == "call_9"
    assert refusal == "call_id= goes with an alias; a FunctionCall carries its own call_id"
