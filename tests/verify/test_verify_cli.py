"""``toolrelay verify`` and ``toolrelay explain`` as a user runs them: real subprocesses,
exit codes 0 / 1 / 2, and what they print."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .helpers import read_events, run_cli, tampered, write_events
from .test_tamper_transcript import feedback_text_altered, wrong_mcp_id


def test_verify_exits_0_on_an_honest_run(seed_run: Path) -> None:
    proc = run_cli("verify", str(seed_run))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (
        "ok: 21 checks hold across model_response → parse → routing → server_check → feedback → "
        "correlation → next_input" in proc.stdout
    )
    assert "BROKEN" not in proc.stdout


def test_verify_exits_1_naming_the_first_broken_link_and_its_ids(seed_run: Path, tmp_path: Path) -> None:
    copy = tampered(seed_run, tmp_path / "t.jsonl", feedback_text_altered)
    proc = run_cli("verify", str(copy))
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[1].startswith(
        "BROKEN link: feedback (turn 1, call_id call_offline_0001, mcp id 4, server fs, seq "
    )
    assert lines[2].startswith('  call_offline_0001: request 2 input[2] holds "line 1\\nline 2 (edited)\\n"')


def test_verify_json_report(seed_run: Path, tmp_path: Path) -> None:
    copy = tampered(seed_run, tmp_path / "t.jsonl", wrong_mcp_id)
    proc = run_cli("verify", str(copy), "--json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["ok"] is False and report["finished"] is True
    assert report["broken"]["link"] == "correlation"
    assert report["broken"]["server"] == "fs" and report["broken"]["mcp_id"] == 99
    assert {f["link"] for f in report["findings"]} >= {"parse", "routing", "feedback"}


def test_verify_all_lists_every_check(seed_run: Path) -> None:
    proc = run_cli("verify", str(seed_run), "--all")
    assert proc.returncode == 0
    checks = [line for line in proc.stdout.splitlines() if line.startswith("  ok")]
    assert len(checks) == 21
    offered = "  ok     routing        call_offline_0001: fs__read_text_file called with the definition"
    assert any(line.startswith(f"{offered} the model was offered (sha256:") for line in checks)
    assert "  ok     server_check   fs (connection 1) answered mcp id 4: a result (ok)" in checks
    assert ("  ok     correlation    call_offline_0001: during its tools/call the server asked "
            "roots/list 1 → answered") in checks


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (None, "no such transcript file or demo folder"),
        ("", "holds no transcript events"),
        (
            '{"seq": 1, "kind": "run_start"}\nnot json at all\n',
            "t.jsonl:2 is not a JSON line: Expecting value",
        ),
        (
            '{"seq": 1, "kind": "run_start"}\n[1, 2]\n',
            't.jsonl:2 is not a transcript event (an object with a "kind")',
        ),
        ('{"seq": "one", "kind": "run_start"}\n', 't.jsonl:1 has no integer "seq"'),
        (
            '{"seq": 1, "run": "a", "kind": "x"}\n{"seq": 2, "run": "b", "kind": "x"}\n',
            "holds events of more than one run (a, b); verify one run at a time",
        ),
    ],
)
def test_unreadable_input_is_a_usage_error(content: str | None, said: str, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    if content is not None:
        path.write_text(content)
    for verb in ("verify", "explain"):
        proc = run_cli(verb, str(path))
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert said in proc.stderr
        assert proc.stderr.startswith(f"toolrelay {verb}: error: ")


def test_a_folder_without_transcript_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "request_1.json").write_text("{}")
    proc = run_cli("verify", str(tmp_path))
    assert proc.returncode == 2
    assert f"{tmp_path} has no transcript.jsonl: a demo folder holds the run's transcript" in proc.stderr


def test_an_attachment_that_is_not_json_is_a_usage_error(seed_run: Path, tmp_path: Path) -> None:
    write_events(tmp_path / "transcript.jsonl", read_events(seed_run))
    (tmp_path / "request_2.json").write_text("{ not json")
    proc = run_cli("verify", str(tmp_path))
    assert proc.returncode == 2
    assert (
        "request_2.json is not JSON: Expecting property name enclosed in double quotes (line 1, column 3)"
        in proc.stderr
    )


def test_explain_shows_each_stage_in_the_seeds_order(seed_run: Path) -> None:
    proc = run_cli("explain", str(seed_run))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    stages = [
        "1 model response",
        "2 parse result",
        "3 routing target",
        "4 server checks",
        "5 actual feedback",
        "6 correlation ids",
        "7 next model input",
    ]
    positions = [out.index(stage) for stage in stages]
    assert positions == sorted(positions)
    assert 'arguments text "{\\"path\\":\\"notes.txt\\",\\"head\\":20}"' in out
    assert 'object {"path": "notes.txt", "head": 20}' in out
    assert "fs__read_text_file → fs/read_text_file" in out
    assert (
        'tools/call mcp id 4 on fs (connection 1), arguments object {"path": "notes.txt", "head": 20}' in out
    )
    assert "call_offline_0001 ↔ mcp id 4; output in request 2 input[2]" in out
    assert out.index("turn 1") < out.index("call call_offline_0001") < out.index("turn 2")
    assert "verdict: every recorded link holds" in out


def test_explain_says_what_to_check_next_for_a_broken_link(seed_run: Path, tmp_path: Path) -> None:
    copy = tampered(seed_run, tmp_path / "t.jsonl", feedback_text_altered)
    proc = run_cli("explain", str(copy))
    assert proc.returncode == 1
    out = proc.stdout
    broken = out[out.index("5 actual feedback") :]
    assert broken.startswith("5 actual feedback   BROKEN")
    assert "✗ call_offline_0001: request 2 input[2] holds" in broken
    assert "check next: compare the function_call_output with what render_output gives" in broken
    tail = out[out.index("check, in this order:") :]
    assert [line.split(".")[0].strip() for line in tail.splitlines()[1:4]] == ["1", "2", "3"]
    assert "1. actual feedback" in tail and "2. correlation ids" in tail and "3. next model input" in tail


def test_explain_groups_many_calls_by_turn_one_line_each(run_named: Any, tmp_path: Path) -> None:
    path = run_named("many_calls_run")
    out = run_cli("explain", str(path)).stdout
    lines = [line for line in out.splitlines() if line.startswith("  [")]
    assert len(lines) == 7
    assert lines[0] == "  [7/7 ok] call_offline_0001 fs__read_text_file · mcp id 4 · ok"
    full = run_cli("explain", str(path), "--all").stdout
    assert full.count("5 actual feedback") == 7

    def alter_third(events: list[dict[str, Any]]) -> None:
        body = [e for e in events if e["kind"] == "model_request"][1]["body"]
        outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
        outputs[2]["output"] = "edited"

    broken = run_cli("explain", str(tampered(path, tmp_path / "t.jsonl", alter_third))).stdout
    assert len([line for line in broken.splitlines() if line.startswith("  [")]) == 6
    assert "  call call_offline_0003" in broken  # the broken call is shown in full
