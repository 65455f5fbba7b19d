"""Function tools in a batch on a real local Ray: each worker imports the functions by
module path (pickled by reference), serves them in process, and every task's transcript
verifies; a function Ray could not import is refused before any worker starts."""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tools_module
from tools_module import get_weather, plain_add

import toolrelay
from conftest import CACHE, require_or_skip
from testkit.ray_setup import ensure_ray, start_local_ray
from toolrelay.errors import UsageError
from toolrelay.relay.stages.consent import approve_all
from toolrelay.verify import load_run, verify

HERE = Path(__file__).resolve().parent


def test_function_tools_pickle_by_reference() -> None:
    assert pickle.loads(pickle.dumps(get_weather)) is get_weather  # the decorated one: its module's name
    group = pickle.loads(pickle.dumps(toolrelay.tools_server("g", [plain_add, get_weather])))
    assert group.tools[1] is get_weather
    assert group.tools[0].declaration() == toolrelay.tool(plain_add).declaration()


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    why = ensure_ray(CACHE)
    if why is not None:
        require_or_skip(why)
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE), *([before] if before else [])])  # the workers'
    ray = start_local_ray()
    try:
        yield ray
    finally:
        ray.shutdown()
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


def test_a_ray_batch_serves_importable_functions_in_every_worker(local_ray: Any, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    calls = [{"name": "py__get_weather", "arguments": {"city": "Oslo"}},
             {"name": "py__plain_add", "arguments": {"a": 1, "b": 2}}]
    script.write_text(json.dumps({"turns": [{"calls": calls}]}))
    run = toolrelay.RunOptions(model="offline", script=script, tools=[tools_module.get_weather, plain_add],
                               config=[], approve=approve_all)
    options = toolrelay.BatchOptions(out=tmp_path / "out", run=run)
    finished = list(toolrelay.batch([{"id": f"t{i}", "task": "go"} for i in range(4)], options, engine="ray"))
    assert sorted((r.id, r.status) for r in finished) == [(f"t{i}", "completed") for i in range(4)]
    for result in finished:
        assert result.transcript is not None
        verdict = verify(load_run(tmp_path / "out" / result.transcript))
        assert verdict.ok, verdict.broken


def test_a_function_ray_cannot_import_is_refused_before_any_worker_starts(tmp_path: Path) -> None:
    def local() -> str:
        return ""

    run = toolrelay.RunOptions(model="offline", tools=[local])
    options = toolrelay.BatchOptions(out=tmp_path / "out", run=run)
    with pytest.raises(UsageError, match=r"^tools=: function local is defined inside a function"):
        list(toolrelay.batch([{"id": "t1", "task": "go"}], options, engine="ray"))
