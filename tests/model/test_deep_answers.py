"""A model answer nested deeper than json_depth.MAX_DEPTH is an unreadable answer, said as
such: the client raises ModelError (exit 3) with the answer recorded, and ``toolrelay run``
ends with its run_end recorded, never with a RecursionError's traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from model_helpers import Canned, CannedEndpoint, recorded_stream, run

from toolrelay.errors import ModelError
from toolrelay.model import ModelEndpoint, ResponsesClient

DEEP = '{"id":"resp_1","object":"response","output":' + "[" * 5000 + "]" * 5000 + "}"
SAID = "the model endpoint answered 200 with JSON nested deeper than 512 levels"


def test_the_client_says_the_answer_is_nested_too_deep() -> None:
    events, recorder = recorded_stream()
    with CannedEndpoint(Canned(200, DEEP)) as endpoint, pytest.raises(ModelError) as failed:
        async def create() -> None:
            async with ResponsesClient(ModelEndpoint(base_url=endpoint.base_url), events=events) as client:
                await client.create({"model": "m", "input": "x"}, turn=1)

        run(create())
    assert str(failed.value).startswith(SAID + ": '{\"id\":\"resp_1\"")
    assert recorder.records("model_response")[0]["body"] == DEEP  # recorded as the text it is
    assert len(endpoint.seen) == 1  # not retried: it would be as deep again


def test_run_exits_3_and_records_its_end(tmp_path: Path) -> None:
    transcript = tmp_path / "run.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    with CannedEndpoint(Canned(200, DEEP)) as endpoint:
        proc = subprocess.run(
            [sys.executable, "-m", "toolrelay", "run", "x", "--base-url", endpoint.base_url,
             "--transcript", str(transcript)],
            cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL,
        )
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr and SAID in proc.stderr
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    ends = [record for record in records if record["kind"] == "run_end"]
    assert len(ends) == 1 and SAID in ends[0]["reason"], ends
