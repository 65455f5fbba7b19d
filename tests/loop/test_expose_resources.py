"""``--expose-resources`` end to end: the model follows a resource_link with
``<server>__read_resource``, whose ``resources/read`` is recorded with the call's id, fed
back as the resource's text (a blob summarized, an unknown URI the server's error), judged
by ``verify`` like a tools/call and drawn by ``view`` inside its call. A server's resources
changing (``list_changed``) refreshes the reader's description before the next turn; a
resource attached with ``--resource`` is subscribed to, and its update is a notice.

Real runs, each made once: the README's notes server (examples/notes_server.py), in both
model dialects (``--api responses`` and ``--api chat``), and testkit's
resource_events_server.py, with the offline model following a script.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testkit.dialect import DIALECTS, Dialect
from testkit.processes import run
from testkit.servers import RESOURCE_EVENTS_SERVER, SDK_PLAIN_RESOURCES_SERVER
from testkit.transcripts import transcript_events
from toolrelay.client.config import ServerConfig
from toolrelay.events import EventStream, Notice
from toolrelay.relay.catalog import Catalog
from toolrelay.relay.offered import starting_input
from toolrelay.verify import load_run, verify
from toolrelay.verify.explain import explain
from toolrelay.view.build import build_trace

REPO = Path(__file__).resolve().parents[2]
NOTES_SERVER = REPO / "examples" / "notes_server.py"
NOTES_SCRIPT = {"turns": [
    {"calls": [{"name": "notes__find_note", "arguments": {"date": "2026-12-01"}}]},
    {"calls": [{"name": "notes__read_resource", "arguments": {"uri": "note://day/2026-12-01"}},
               {"name": "notes__read_resource", "arguments": {"uri": "note://nowhere"}}],
     "pause": 0.2, "after_calls": "Reading both."},  # so the reads start while it streams
    {"message": "Done."},
]}
EVENTS_SCRIPT = {"turns": [
    {"calls": [{"name": "rs__read_resource_2", "arguments": {"uri": "bin://logo"}},
               {"name": "rs__add_note", "arguments": {"name": "second"}}]},
    {"calls": [{"name": "rs__read_resource_2", "arguments": {"uri": "note://second"}},
               {"name": "rs__read_resource_2", "arguments": {"uri": "bad://contents"}}]},
    {"message": "Done."},
]}
Event = dict[str, Any]
Done = subprocess.CompletedProcess[str]


def offline_run(folder: Path, server: Path, name: str, script: dict[str, Any], *extra: str) -> \
        tuple[subprocess.CompletedProcess[str], list[Event]]:
    folder.mkdir()
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {name: {"command": sys.executable,
                                                                        "args": [str(server)]}}}))
    (folder / "script.json").write_text(json.dumps(script))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    proc = run([sys.executable, "-m", "toolrelay", "run", "what does my note say?", "--config", "mcp.json",
                "--model", "offline", "--script", "script.json", "--expose-resources",
                "--transcript", "run.jsonl", *extra], cwd=folder, text=True, timeout=60, env=env)
    return proc, transcript_events(folder / "run.jsonl")


@pytest.fixture(scope="module", params=DIALECTS)
def notes(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> \
        tuple[Done, list[Event], Path]:
    folder = tmp_path_factory.mktemp("notes") / "run"
    api = request.param
    proc, events = offline_run(folder, NOTES_SERVER, "notes", NOTES_SCRIPT, "--quiet", "--api", api)
    for event in events:
        if event["kind"] == "model_request":
            Dialect(api).check(event["body"])
    assert {e["dialect"] for e in events if e["kind"] == "model_request"} == {api}
    return proc, events, folder / "run.jsonl"


@pytest.fixture(scope="module")
def changing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Done, list[Event]]:
    folder = tmp_path_factory.mktemp("changing") / "run"
    return offline_run(folder, RESOURCE_EVENTS_SERVER, "rs", EVENTS_SCRIPT, "--resource", "note://first")


def outputs(events: list[Event]) -> dict[str, Any]:
    return {e["call_id"]: e["item"]["output"] for e in events if e["kind"] == "feedback"}


def reader(events: list[Event], turn: int, alias: str) -> dict[str, Any]:
    sent = [e for e in events if e["kind"] == "model_request" and e["turn"] == turn][-1]
    body = Dialect(sent["dialect"]).request(sent["body"])
    found: dict[str, Any] = next(tool for tool in body["tools"] if tool["name"] == alias)
    return found


def test_the_model_follows_a_resource_link_with_the_reader(notes: Any) -> None:
    proc, events, _ = notes
    assert proc.returncode == 0, proc.stderr
    said = outputs(events)
    assert "[resource link: note://day/2026-12-01" in said["call_offline_0001"]
    assert said["call_offline_0002"] == "No note for 2026-12-01.\n"
    description = reader(events, 1, "notes__read_resource")["description"]
    assert "note://today (today)" in description and "note://day/{date} (template)" in description
    reads = [e for e in events if e["kind"] == "mcp_request" and e["method"] == "resources/read"]
    assert [(e["call_id"], e["message"]["params"]) for e in reads] == [
        ("call_offline_0002", {"uri": "note://day/2026-12-01"}), ("call_offline_0003", {"uri": "note://nowhere"})]


def test_a_uri_the_server_does_not_know_is_an_error_in_its_words(notes: Any) -> None:
    _, events, _ = notes
    assert outputs(events)["call_offline_0003"] == "Error (protocol -32002): Resource not found: note://nowhere"


def test_verify_judges_each_read_like_a_tool_call(notes: Any) -> None:
    _, _, transcript = notes
    proc = run([sys.executable, "-m", "toolrelay", "verify", "--all", str(transcript)], text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout
    assert ("notes__read_resource → notes/resources/read; resources/read mcp id" in proc.stdout
            and "call_offline_0002 ↔ mcp id" in proc.stdout)
    assert "answered mcp id" in proc.stdout and "JSON-RPC error -32002 (protocol error)" in proc.stdout
    assert "call_offline_0002 started" in proc.stdout  # early, as --early read-only allows a reader
    record = load_run(transcript)
    walked = explain(record, verify(record), expand_all=True)
    assert 'resources/read mcp id' in walked and 'uri "note://day/2026-12-01"; answered, ok' in walked


def _read_answer(events: list[Event]) -> Event:
    return next(e for e in events if e["kind"] == "mcp_response" and e["method"] == "resources/read")


def _other_text(events: list[Event]) -> None:
    _read_answer(events)["message"]["result"]["contents"][0]["text"] = "Something else.\n"


def _other_uri(events: list[Event]) -> None:
    request = next(e for e in events if e["kind"] == "mcp_request" and e["method"] == "resources/read")
    request["message"]["params"]["uri"] = "note://today"


def _other_description(events: list[Event]) -> None:
    declarations = next(e for e in events if e["kind"] == "declarations")
    tool = next(t for t in declarations["tools"] if t["name"] == "notes__read_resource")
    tool["description"] = "Read anything."


@pytest.mark.parametrize(("change", "link", "words"), [
    (_other_text, "feedback", 'render_output gives "Something else.'),
    (_other_uri, "routing", 'reads "note://today", the model asked for "note://day/2026-12-01"'),
    (_other_description, "next_input", "are not what the servers' tools/list rules give"),
], ids=["answer", "uri", "description"])
def test_verify_rejects_a_tampered_read(
    notes: Any, tmp_path: Path, change: Any, link: str, words: str
) -> None:
    events = copy.deepcopy(notes[1])
    change(events)
    path = tmp_path / "tampered.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    verdict = verify(load_run(path))
    assert verdict.broken is not None
    assert (verdict.broken.link, words in verdict.broken.message) == (link, True), verdict.broken.message


def test_view_draws_the_read_inside_its_call(notes: Any) -> None:
    trace = build_trace(notes[1], None, source="run.jsonl")
    calls = {c.call_id: c for g in trace.groups for c in g.calls()}
    rows = [(r.stage, r.label, r.detail) for r in calls["call_offline_0002"].rows]
    assert [row for row in rows if row[0] in ("call", "result")] == [
        ("call", "resources/read note://day/2026-12-01", ""),
        ("result", "1 content(s)", "No note for 2026-12-01."),
    ]


def test_a_blob_is_summarized_with_its_type_and_size(changing: Any) -> None:
    proc, events = changing
    assert proc.returncode == 0, proc.stderr
    assert outputs(events)["call_offline_0001"] == "[binary resource bin://logo: image/png, 4 bytes]"


def test_a_tool_of_the_same_name_keeps_it_and_the_reader_is_suffixed(changing: Any) -> None:
    proc, events = changing
    assert ("! server rs has a tool named like the resource reader rs__read_resource: its resources are read "
            "with rs__read_resource_2 instead") in proc.stderr
    assert reader(events, 1, "rs__read_resource")["description"] == "A tool of the server's own."


def test_list_changed_refreshes_the_readers_description_before_the_next_turn(changing: Any) -> None:
    _, events = changing
    assert "note://second" not in reader(events, 1, "rs__read_resource_2")["description"]
    assert "note://second (second)" in reader(events, 2, "rs__read_resource_2")["description"]
    assert outputs(events)["call_offline_0003"] == "The note second."
    assert any(e["kind"] == "declarations" and e["reason"] == "resources/list_changed" for e in events)


def test_an_attached_resource_is_subscribed_to_and_its_update_is_a_notice(changing: Any) -> None:
    proc, events = changing
    asked = [e["message"]["params"] for e in events if e["kind"] == "mcp_request"
             and e["method"] == "resources/subscribe"]
    assert asked == [{"uri": "note://first"}]
    assert "· server rs: resource note://first was updated" in proc.stderr
    assert any(e["kind"] == "notice" and e["text"] == "server rs: resource note://first was updated"
               for e in events)


def test_both_runs_verify(changing: Any, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in changing[1]), encoding="utf-8")
    verdict = verify(load_run(path))
    assert verdict.broken is None, verdict.broken


def test_without_the_option_no_reader_is_offered() -> None:
    server = ServerConfig(name="notes", transport="stdio", command=sys.executable, args=(str(NOTES_SERVER),))

    async def names() -> tuple[list[str], list[str]]:
        async with Catalog([server]) as plain, Catalog([server], expose_resources=True) as exposed:
            return [t["name"] for t in plain.declarations()], [t["name"] for t in exposed.declarations()]

    plain, exposed = asyncio.run(names())
    assert plain == ["notes__find_note", "notes__word_count"]
    assert exposed == ["notes__find_note", "notes__word_count", "notes__read_resource"]


def test_a_read_answered_without_contents_is_a_protocol_error(changing: Any) -> None:
    assert outputs(changing[1])["call_offline_0004"] == (
        'Error (protocol): server returned a malformed resources/read result: "contents" must be an array '
        "of objects")


def _events_server(*args: str) -> ServerConfig:
    return ServerConfig(name="rs", transport="stdio", command=sys.executable,
                        args=(str(RESOURCE_EVENTS_SERVER), *args))


def _notices(said: list[str]) -> EventStream:
    events = EventStream()
    events.subscribe(lambda event: said.append(event.text) if isinstance(event, Notice) else None)
    return events


def test_resources_that_cannot_be_listed_get_no_reader_and_a_notice() -> None:
    said: list[str] = []

    async def names() -> list[str]:
        server = _events_server("--refuse", "list")
        async with Catalog([server], events=_notices(said), expose_resources=True) as catalog:
            return [t["name"] for t in catalog.declarations()]

    assert asyncio.run(names()) == ["rs__add_note", "rs__read_resource"]
    assert ("server rs: its resources are not offered to the model: JSON-RPC error -32603: server rs "
            "refused resources/list: the resource index is broken") in said


def test_a_server_without_a_templates_method_gets_a_reader(tmp_path: Path) -> None:
    script = {"turns": [{"calls": [{"name": "plain__read_resource", "arguments": {"uri": "note://plain"}}]},
                        {"message": "Done."}]}
    folder = tmp_path / "run"
    proc, events = offline_run(folder, SDK_PLAIN_RESOURCES_SERVER, "plain", script, "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert outputs(events) == {"call_offline_0001": "A plain note."}
    transcript = str(folder / "run.jsonl")
    verified = run([sys.executable, "-m", "toolrelay", "verify", transcript], text=True, timeout=60)
    assert verified.returncode == 0, verified.stdout


def test_a_refused_subscription_is_said_and_the_resource_still_attached() -> None:
    said: list[str] = []

    async def attach() -> Any:
        async with Catalog([_events_server("--refuse", "subscribe")], events=_notices(said)) as catalog:
            return await starting_input("read it", catalog.connections, resources=["note://first"])

    _, items = asyncio.run(attach())
    assert "The first note." in json.dumps(items)
    assert "server rs will not tell updates of note://first: subscriptions are switched off" in said


def test_batch_offers_the_reader_to_each_task(tmp_path: Path) -> None:
    config = {"mcpServers": {"notes": {"command": sys.executable, "args": [str(NOTES_SERVER)]}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    (tmp_path / "tasks.jsonl").write_text(json.dumps({"id": "t1", "task": "What does my note say?"}) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_OPENAI_", "RAY_"))}
    proc = run([sys.executable, "-m", "toolrelay", "batch", "tasks.jsonl", "--out", "out", "--model",
                "offline", "--script", str(REPO / "examples" / "follow-link.json"), "--config", "mcp.json",
                "--expose-resources", "--quiet"], cwd=tmp_path, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    transcript = tmp_path / "out" / "transcripts" / "t1.jsonl"
    assert outputs(transcript_events(transcript))["call_offline_0002"] == "No note for 2026-12-01.\n"
