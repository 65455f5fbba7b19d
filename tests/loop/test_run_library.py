"""``toolrelay.run()`` misused: clear errors before anything starts."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import typing
from pathlib import Path

import pytest

import toolrelay
from toolrelay.client.config import builtin_file_server
from toolrelay.errors import UsageError


def test_a_misspelt_option_names_the_right_one() -> None:
    with pytest.raises(UsageError) as failed:
        toolrelay.run("x", modle="offline")
    said = str(failed.value)
    assert said.startswith("toolrelay.run() has no option 'modle': did you mean 'model'? ")
    assert "RunOptions takes model, base_url, api, api_key, config," in said
    assert failed.value.exit_code == 2


def test_runs_keywords_are_typed_as_run_options_fields() -> None:
    """What an IDE completes and a type checker checks for ``toolrelay.run(task, ...)``:
    every field of RunOptions, with its type, none required."""
    [keywords] = typing.get_args(typing.get_type_hints(toolrelay.run)["options"])
    assert typing.is_typeddict(keywords) and keywords.__required_keys__ == frozenset()
    assert typing.get_type_hints(keywords) == typing.get_type_hints(toolrelay.RunOptions)
    assert list(typing.get_type_hints(keywords)) == [f.name for f in dataclasses.fields(toolrelay.RunOptions)]


def test_inside_a_running_event_loop_it_points_to_run_async() -> None:
    async def from_async_code() -> str:
        with pytest.raises(UsageError) as failed:
            toolrelay.run("x", model="offline")
        return str(failed.value)

    assert asyncio.run(from_async_code()) == (
        "toolrelay.run() cannot start inside a running event loop (async code, Jupyter): "
        "use `await toolrelay.run_async(task, toolrelay.RunOptions(...))` there"
    )


def test_run_async_works_where_run_cannot(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 31)))
    options = toolrelay.RunOptions(model="offline", config=[builtin_file_server(tmp_path)])

    async def from_async_code() -> toolrelay.RunResult:
        return await toolrelay.run_async("Read the first 3 lines of notes.txt", options)

    result = asyncio.run(from_async_code())
    assert (result.status, [call.status for call in result.calls]) == ("completed", ["ok"])
    assert "line 1\nline 2\nline 3\n" in (result.final_text or "")


def test_the_result_counts_the_failed_calls(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("line 1\n")
    script = tmp_path / "two-reads.json"
    script.write_text(json.dumps({"turns": [{"calls": [
        {"name": "fs__read_text_file", "arguments": {"path": "notes.txt"}},
        {"name": "fs__read_text_file", "arguments": {"path": "missing.txt"}},
    ]}]}))
    result = toolrelay.run("x", model="offline", script=script, config=[builtin_file_server(tmp_path)])
    assert result.completed
    assert [call.status for call in result.calls] == ["ok", "tool_error"]
    assert result.failed_calls == 1
    assert result.to_dict()["failed_calls"] == 1


def test_run_stream_yields_the_run_as_it_happens_and_ends_with_the_result(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 31)))
    options = toolrelay.RunOptions(model="offline", config=[builtin_file_server(tmp_path)])

    async def watch() -> list[object]:
        return [event async for event in toolrelay.run_stream("Read the first 2 lines of notes.txt", options)]

    events = asyncio.run(watch())
    finished = events[-1]
    assert isinstance(finished, toolrelay.RunFinished) and finished.result.completed
    text = "".join(e.text for e in events if isinstance(e, toolrelay.TextDelta))
    assert text == finished.result.final_text == "The tool returned:\nline 1\nline 2\n"
    [started] = [e for e in events if isinstance(e, toolrelay.CallStarted)]
    assert started.alias == "fs__read_text_file" and json.loads(started.arguments)["head"] == 2
    [ended] = [e for e in events if isinstance(e, toolrelay.CallFinished)]
    assert ended.outcome.ok and ended.outcome.call_id == started.call_id
    assert [e.turn for e in events if isinstance(e, toolrelay.TurnFinished)] == [1, 2]


def test_run_stream_still_tells_the_options_on_event_each_event(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("line 1\nline 2\n")
    heard: list[object] = []
    options = toolrelay.RunOptions(model="offline", config=[builtin_file_server(tmp_path)],
                                   on_event=heard.append)

    async def watch() -> list[object]:
        return [event async for event in toolrelay.run_stream("Read the first 2 lines of notes.txt", options)]

    streamed = asyncio.run(watch())
    assert heard == streamed and isinstance(heard[-1], toolrelay.RunFinished)  # the same events, in order


def test_leaving_run_stream_early_stops_the_run(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("line 1\n")
    options = toolrelay.RunOptions(model="offline", config=[builtin_file_server(tmp_path)])

    async def first_call() -> object:
        stream = toolrelay.run_stream("Read the first 2 lines of notes.txt", options)
        async for event in stream:
            if isinstance(event, toolrelay.CallFinished):
                await stream.aclose()
                return event
        raise AssertionError("no call finished")

    assert isinstance(asyncio.run(first_call()), toolrelay.CallFinished)
