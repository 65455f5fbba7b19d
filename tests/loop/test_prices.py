"""``--prices FILE`` / ``prices``: a user's price table, checked with errors naming the file
and the key; the arithmetic; the cost in ``RunResult``, ``run --json``, ``run_end`` (judged by
verify, a tampered cost rejected), explain, and a batch's results and summary."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from testkit.transcripts import transcript_events
from toolrelay.errors import UsageError
from toolrelay.events import EventStream, Notice
from toolrelay.inprocess_servers import in_process_file_server
from toolrelay.relay.stages.cost import cost_of, cost_text, parse_prices
from toolrelay.runner import RunOptions, run_async
from toolrelay.verify import load_run, verify
from toolrelay.verify.explain import explain
from toolrelay.view.build import build_trace

PRICES = {"offline": {"input": 2.0, "cached_input": 0.5, "output": 8.0}, "gpt-4.1": {"input": 2, "output": 8}}


def test_the_arithmetic_prices_uncached_cached_written_and_output_tokens_apart() -> None:
    usage = {"input_tokens": 1_000_000, "cached_input_tokens": 400_000, "cache_write_tokens": 100_000,
             "output_tokens": 250_000, "reasoning_tokens": 50_000, "total_tokens": 1_250_000}
    price = {"input": 2.0, "cached_input": 0.5, "cache_write": 2.5, "output": 8.0}
    # 500k uncached at $2/M, 400k cached at $0.5/M, 100k written at $2.5/M, 250k out at $8/M
    assert cost_of(usage, price) == {"input": 1.0, "cached_input": 0.2, "cache_write": 0.25, "output": 2.0,
                                     "total": 3.45}
    # without cached_input / cache_write prices those tokens are priced as input
    assert cost_of(usage, {"input": 2.0, "output": 8.0})["total"] == pytest.approx(2.0 + 2.0)
    assert cost_of({"input_tokens": 1200, "output_tokens": 30}, {"input": 2.0, "output": 8.0}) == \
        {"input": 0.0024, "output": 0.00024, "total": 0.00264}
    assert cost_of({}, price) == {}  # no counts: no cost, never $0
    assert cost_text({"input": 0.0024, "output": 0.00024, "total": 0.00264}) == \
        "$0.002640 (input $0.002400, output $0.000240)"
    assert cost_text({"input": 1.0, "output": 2.0, "total": 3.0}) == "$3.0000 (input $1.0000, output $2.0000)"


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ([1, 2], 'prices P: expected a JSON object of model → prices'),
        ({}, 'prices P: expected a JSON object of model → prices'),
        ({"gpt-4.1": 2.0}, "prices P: gpt-4.1: expected an object of prices (input, output, cached_input, "
                           "cache_write)"),
        ({"gpt-4.1": {"input": 2, "output": 8, "cached": 1}},
         "prices P: gpt-4.1: unknown key 'cached' (expected: input, cached_input, cache_write, output)"),
        ({"gpt-4.1": {"input": 2}}, "prices P: gpt-4.1: no 'output' price (input and output are required)"),
        ({"gpt-4.1": {"input": -1, "output": 8}},
         "prices P: gpt-4.1.input: expected a number of dollars per million tokens (0 or more), got -1"),
        ({"gpt-4.1": {"input": 2, "output": "8"}},
         "prices P: gpt-4.1.output: expected a number of dollars per million tokens (0 or more), got '8'"),
        ({"gpt-4.1": {"input": True, "output": 8}},
         "prices P: gpt-4.1.input: expected a number of dollars per million tokens (0 or more), got True"),
    ],
    ids=["array", "empty", "row", "key", "missing", "negative", "text", "bool"],
)
def test_a_bad_table_is_a_usage_error_naming_the_file_and_key(table: Any, said: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_prices(table, source="P")
    assert str(caught.value).startswith(said)


def _run(folder: Path, **options: Any) -> tuple[Any, Path]:
    (folder / "notes.txt").write_text("line 1\nline 2\n", encoding="utf-8")
    opts = RunOptions(model="offline", config=[in_process_file_server(folder)],
                      transcript=folder / "run.jsonl", **options)
    return asyncio.run(run_async("Read notes.txt", opts)), folder / "run.jsonl"


def test_a_priced_run_records_its_cost_and_verify_redoes_it(tmp_path: Path) -> None:
    (tmp_path / "prices.json").write_text(json.dumps(PRICES), encoding="utf-8")
    result, transcript = _run(tmp_path, prices=tmp_path / "prices.json")
    assert result.completed and result.usage["input_tokens"] > 0
    assert result.cost == cost_of(result.usage, PRICES["offline"]) and result.cost["total"] > 0
    assert result.to_dict()["cost"] == result.cost
    events = transcript_events(transcript)
    end = next(e for e in events if e["kind"] == "run_end")
    assert (end["cost"], end["price"]) == (result.cost, PRICES["offline"])
    run = load_run(transcript)
    verdict = verify(run)
    assert verdict.ok, verdict.broken
    said = (f"model response: run_end's cost {cost_text(result.cost)} is its token usage at the recorded "
            "prices of offline (input $2/M, cached_input $0.5/M, output $8/M)")
    assert said in explain(run, verdict)
    assert build_trace(events, verdict).run.cost == cost_text(result.cost)  # view's summary
    # a changed cost is rejected, naming what the usage costs
    end["cost"]["total"] = 0.0001
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    broken = verify(load_run(tampered)).broken
    assert broken is not None and broken.message.startswith("run_end claims the cost $0.000100 (")
    assert f"costs {cost_text(result.cost)}" in broken.message


def test_a_model_the_table_does_not_name_has_no_cost_and_is_said(tmp_path: Path) -> None:
    events, notices = EventStream(), []
    events.subscribe(lambda e: notices.append(e.text) if isinstance(e, Notice) else None)
    result, transcript = _run(tmp_path, prices={"gpt-4.1": {"input": 2, "output": 8}}, events=events)
    assert result.completed and result.cost == {} and "cost" not in result.to_dict()
    said = "the price table has no prices for model 'offline' (it names gpt-4.1): the run's cost is not known"
    assert said in notices
    assert "cost" not in next(e for e in transcript_events(transcript) if e["kind"] == "run_end")


def test_the_library_checks_the_table_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"prices \(the prices option\): offline: no 'output' price"):
        _run(tmp_path, prices={"offline": {"input": 1}})
    assert not (tmp_path / "run.jsonl").exists()


def test_the_cli_prices_a_run_and_a_batch(tmp_path: Path, toolrelay_cmd: list[str]) -> None:
    (tmp_path / "notes.txt").write_text("line 1\n", encoding="utf-8")
    (tmp_path / "prices.json").write_text(json.dumps(PRICES), encoding="utf-8")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*toolrelay_cmd, *args], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60)

    done = cli("run", "--model", "offline", "--prices", "prices.json", "--json", "--quiet", "Read notes.txt")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["cost"] == cost_of(printed["usage"], PRICES["offline"])
    shown = cli("run", "--model", "offline", "--prices", "prices.json", "Read notes.txt")
    assert f"· cost: {cost_text(printed['cost'])}" in shown.stderr  # the same run, the same tokens
    (tmp_path / "tasks.jsonl").write_text('{"id": "t1", "task": "Read notes.txt"}\n'
                                          '{"id": "t2", "task": "Read notes.txt"}\n', encoding="utf-8")
    batch = cli("batch", "tasks.jsonl", "--out", "out", "--model", "offline", "--prices", "prices.json",
                "--quiet")
    assert batch.returncode == 0, batch.stderr
    lines = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    costs = [line["cost"] for line in lines]
    assert costs == [cost_of(line["usage"], PRICES["offline"])["total"] for line in lines]
    assert f"cost: ${sum(costs):.6f} over 2 priced task(s) of 2" in batch.stdout
    # a bad file: exit 2, the file and key named, nothing run
    bad_table = '{"offline": {"input": 1, "output": 2, "outptu": 3}}'
    (tmp_path / "bad.json").write_text(bad_table, encoding="utf-8")
    bad = cli("run", "--model", "offline", "--prices", "bad.json", "Read notes.txt")
    assert bad.returncode == 2
    said = ("prices bad.json: offline: unknown key 'outptu' "
            "(expected: input, cached_input, cache_write, output)")
    assert said in bad.stderr
    missing = cli("run", "--model", "offline", "--prices", "nowhere.json", "Read notes.txt")
    assert missing.returncode == 2
    assert "cannot read prices nowhere.json: No such file or directory" in missing.stderr
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    broken = cli("batch", "tasks.jsonl", "--out", "out2", "--model", "offline", "--prices", "broken.json")
    assert broken.returncode == 2 and "prices broken.json is not valid JSON: line 1 column 2" in broken.stderr
