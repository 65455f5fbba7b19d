"""The demo's stream is extra: its eight files are a whole-response run's, byte for byte, and
``streamed/`` holds the same walk-through streamed — its transcript and each response's
server-sent events as received (``response_N.sse``) — verified with the folder."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

from toolrelay.client.config import builtin_file_server
from toolrelay.demo import DEMO_TASK, notes_text, run_demo, write_attachments
from toolrelay.protocol.sse import SseParser
from toolrelay.protocol.versions import SEED_VERSION
from toolrelay.runner import RunOptions, run_async
from toolrelay.verify import load_run, verify
from verify.helpers import find, iter_events, read_events

MESSAGE_FILES = ["request_1.json", "response_1.json", "mcp_request.json", "mcp_response.json",
                 "request_2.json", "response_2.json"]
BUNDLES = ["responses_roundtrip.json", "field_fragments.json"]


def without_run_id(path: Path) -> Any:
    value = json.loads(path.read_text(encoding="utf-8"))
    value.pop("run_id")  # each run has its own
    return value


def test_the_eight_files_are_those_of_a_run_that_does_not_stream(demo_folder: Path, tmp_path: Path) -> None:
    workspace, plain = tmp_path / "workspace", tmp_path / "plain"
    workspace.mkdir()
    (workspace / "notes.txt").write_text(notes_text(), encoding="utf-8")
    options = RunOptions(model="offline", config=[builtin_file_server(workspace)], stream=False,
                         server_instructions=False, transcript=plain / "transcript.jsonl",
                         protocol_version=SEED_VERSION)  # as the demo asks
    assert asyncio.run(run_async(DEMO_TASK, options)).completed
    write_attachments(load_run(plain / "transcript.jsonl"), plain)
    for name in MESSAGE_FILES:
        assert (demo_folder / name).read_bytes() == (plain / name).read_bytes(), name
    for name in BUNDLES:
        assert without_run_id(demo_folder / name) == without_run_id(plain / name), name
    assert '"stream"' not in (demo_folder / "request_1.json").read_text()


def test_the_stream_files_are_the_streamed_runs_events_as_received(demo_folder: Path) -> None:
    streamed = demo_folder / "streamed"
    events = read_events(streamed / "transcript.jsonl")
    for turn in (1, 2):
        parser = SseParser()
        from_file = [(e.event, e.data) for e in parser.feed((streamed / f"response_{turn}.sse").read_bytes())]
        recorded = [(e["event"], e["data"]) for e in iter_events(events, "model_stream", turn=turn)]
        assert from_file == recorded and recorded[-1][0] == "response.completed"
        # the same walk-through: the requests differ only in asking for a stream, and the
        # stand-in's answers are the same, now assembled from their events
        request = json.loads((demo_folder / f"request_{turn}.json").read_text())
        assert find(events, "model_request", turn=turn)["body"] == {**request, "stream": True}
        response = find(events, "model_response", turn=turn)
        assert response["streamed"] and response["stream_events"] == len(recorded)
        assert response["body"] == json.loads((demo_folder / f"response_{turn}.json").read_text())


def test_the_streamed_run_is_verified_with_the_folder(demo_folder: Path) -> None:
    verdict = verify(load_run(demo_folder))
    [finding] = [f for f in verdict.findings if f.check == "streamed_run"]
    assert finding.ok and finding.link == "model_response"
    assert finding.message.startswith("streamed/ (the walk-through again, streamed): ")
    assert "in response_1.sse, response_2.sse" in finding.message


def copy_with(demo_folder: Path, target: Path, name: str, change: Any) -> Path:
    shutil.copytree(demo_folder, target)
    path = target / "streamed" / name
    path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")
    return target


def test_a_changed_delta_in_a_stream_file_breaks_the_folder(demo_folder: Path, tmp_path: Path) -> None:
    def edit(text: str) -> str:
        blocks = text.split("\n\n")
        [delta] = [n for n, b in enumerate(blocks) if b.startswith("event: response.output_text.delta")]
        blocks[delta] = blocks[delta].replace("note 01", "note 99")
        return "\n\n".join(blocks)

    folder = copy_with(demo_folder, tmp_path / "copy", "response_2.sse", edit)
    verdict = verify(load_run(folder))
    assert verdict.broken is not None and verdict.broken.check == "streamed_run"
    assert verdict.broken.link == "model_response"
    assert "turn 2: the text deltas of output item 0 add up to" in verdict.broken.message
    streamed = verify(load_run(folder / "streamed"))  # the same, verified on its own
    delta = find(read_events(folder / "streamed" / "transcript.jsonl"), "model_stream", turn=2,
                 event="response.output_text.delta")
    assert [f.message for f in streamed.broken_findings() if f.check == "files_agree"] == [
        f"response_2.sse differs from the transcript's event (seq {delta['seq']}) at event {delta['index']}"]


def test_a_dropped_stream_event_breaks_the_folder(demo_folder: Path, tmp_path: Path) -> None:
    def drop(text: str) -> str:
        dropped = "event: response.function_call_arguments.delta"
        return "\n\n".join(b for b in text.split("\n\n") if not b.startswith(dropped))

    folder = copy_with(demo_folder, tmp_path / "copy", "response_1.sse", drop)
    verdict = verify(load_run(folder))
    assert verdict.broken is not None and verdict.broken.link == "model_response"
    said = verdict.broken.message
    assert said.startswith("streamed/ (the walk-through again, streamed): response_1.sse differs"), said
    assert "(it holds 6 events, the transcript 7)" in said


def test_the_demo_replaces_a_previous_demos_stream_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "streamed").mkdir(parents=True)
    (out / "streamed" / "response_3.sse").write_text("event: x\ndata: {}\n\n")  # from a longer run
    (out / "streamed" / "mine.txt").write_text("keep me")
    result = run_demo(out)
    assert result.ok, result.verdict.broken
    assert result.stream_files == ["transcript.jsonl", "response_1.sse", "response_2.sse"]
    assert sorted(p.name for p in (out / "streamed").iterdir()) == [
        "mine.txt", "response_1.sse", "response_2.sse", "transcript.jsonl"]
