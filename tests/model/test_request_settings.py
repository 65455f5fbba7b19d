"""``--request-settings FILE``: body fields every request carries, as given, in both dialects.

The CLI runs for real (a subprocess, the stand-in over loopback HTTP, the file server);
every request body it sent is read from the transcript and checked against the openai
package's types of its dialect. Fields toolrelay sets are refused naming the file, the
field and the option that sets them; the sampling options win over the file; the run's
settings are recorded in ``run_start``, shown by ``explain`` and ``view``, and ``verify``
rejects a copy whose requests do not carry them.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testkit.dialect import DIALECTS, Dialect
from testkit.transcripts import transcript_events
from toolrelay.assembly.request_file import dialect_fields, loop_names
from toolrelay.cli.main import main
from toolrelay.client.config import builtin_file_server
from toolrelay.conversation import Conversation
from toolrelay.errors import UsageError
from toolrelay.runner import RunOptions, check_options
from toolrelay.verify import load_run, verify

READ = {"name": "fs__read_text_file", "arguments": {"path": "notes.txt", "head": 1}}
SCRIPT = {"turns": [{"calls": [READ]}, {"message": "done"}]}
SETTINGS = {
    "temperature": 0.3, "max_output_tokens": 200, "reasoning": {"effort": "low"},
    "text": {"verbosity": "low"}, "metadata": {"suite": "settings"},
    "prompt_cache_options": {"mode": "implicit", "ttl": "30m"}, "service_tier": "flex",
}
"""In the loop's (Responses) names; the chat dialect says them as ``CHAT_SAYS``."""
CHAT_SAYS = {
    "temperature": 0.3, "max_completion_tokens": 200, "reasoning_effort": "low", "verbosity": "low",
    "metadata": {"suite": "settings"}, "prompt_cache_options": {"mode": "implicit", "ttl": "30m"},
    "service_tier": "flex",
}


def workspace(root: Path, settings: Any = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.txt").write_text("line 1\nline 2\n", encoding="utf-8")
    (root / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    if settings is not None:
        text = settings if isinstance(settings, str) else json.dumps(settings)
        (root / "settings.json").write_text(text, encoding="utf-8")
    return root


def run_cli(cmd: list[str], root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cmd, "run", "Read notes.txt", "--model", "offline", "--script", "script.json",
                           "--quiet", *args], cwd=root, capture_output=True, text=True, timeout=60)


def refused(root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
            *args: str) -> str:
    """What ``toolrelay run ... ARGS`` says on stderr, run in this process: it exits 2 before
    anything starts."""
    monkeypatch.chdir(root)
    assert main(["run", "Read notes.txt", "--model", "offline", "--script", "script.json", "--quiet",
                 *args]) == 2
    return capsys.readouterr().err


def requests(path: Path) -> list[dict[str, Any]]:
    return [e["body"] for e in transcript_events(path) if e["kind"] == "model_request"]


@pytest.fixture(scope="module", params=DIALECTS)
def settled(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Dialect, Path]:
    """A run with ``SETTINGS`` in each dialect: its transcript."""
    dialect = Dialect(request.param)
    root = workspace(tmp_path_factory.mktemp(dialect.api), SETTINGS)
    done = run_cli([sys.executable, "-m", "toolrelay"], root, "--api", dialect.api,
                     "--request-settings", "settings.json", "--transcript", "run.jsonl")
    assert done.returncode == 0, done.stderr
    return dialect, root / "run.jsonl"


def test_the_files_fields_reach_every_request_in_each_dialect(settled: tuple[Dialect, Path]) -> None:
    dialect, transcript = settled
    bodies = requests(transcript)
    assert len(bodies) == 2
    for body in bodies:
        dialect.check(body)
        said = {key: body.get(key) for key in (CHAT_SAYS if dialect.chat else SETTINGS)}
        assert said == (CHAT_SAYS if dialect.chat else SETTINGS)
        assert "reasoning" not in body if dialect.chat else "max_completion_tokens" not in body
    start = next(e for e in transcript_events(transcript) if e["kind"] == "run_start")
    # recorded in the loop's names, as the run's API takes them (chat: text's verbosity on its own)
    assert start["settings"] == dialect_fields(SETTINGS, dialect.api, "settings.json")
    assert verify(load_run(transcript)).ok


def test_the_sampling_options_win_over_the_file(tmp_path: Path, toolrelay_cmd: list[str]) -> None:
    root = workspace(tmp_path, {"temperature": 0.3, "top_p": 0.5, "max_completion_tokens": 99})
    done = run_cli(toolrelay_cmd, root, "--request-settings", "settings.json", "--temperature", "0.9",
                     "--max-output-tokens", "300", "--transcript", "run.jsonl")
    assert done.returncode == 0, done.stderr
    for body in requests(root / "run.jsonl"):
        Dialect("responses").check(body)
        assert (body["temperature"], body["top_p"], body["max_output_tokens"]) == (0.9, 0.5, 300)
        assert "max_completion_tokens" not in body  # a chat name, read as the loop's max_output_tokens


def test_a_servers_own_extras_are_sent_as_given(
    tmp_path: Path, toolrelay_cmd: list[str], dialect: Dialect
) -> None:
    root = workspace(tmp_path, {"top_k": 20, "repetition_penalty": 1.05, "temperature": 0.6})
    done = run_cli(toolrelay_cmd, root, "--api", dialect.api, "--request-settings", "settings.json",
                     "--transcript", "run.jsonl")
    assert done.returncode == 0, done.stderr
    for body in requests(root / "run.jsonl"):
        assert (body["top_k"], body["repetition_penalty"], body["temperature"]) == (20, 1.05, 0.6)
        # vLLM's extras are no field of the openai types: the rest of the body is
        dialect.check({key: value for key, value in body.items()
                       if key not in ("top_k", "repetition_penalty")})
    assert verify(load_run(root / "run.jsonl")).ok


def test_explain_and_view_show_the_runs_settings(tmp_path: Path, toolrelay_cmd: list[str]) -> None:
    root = workspace(tmp_path, {"metadata": {"suite": "shown"}})
    assert run_cli(toolrelay_cmd, root, "--request-settings", "settings.json", "--transcript", "run.jsonl",
                     "--temperature", "0.2").returncode == 0
    explained = subprocess.run([*toolrelay_cmd, "explain", "run.jsonl"], cwd=root, capture_output=True,
                               text=True, timeout=60)
    assert 'request settings: {"metadata": {"suite": "shown"}, "temperature": 0.2}' in explained.stdout
    viewed = subprocess.run([*toolrelay_cmd, "view", "run.jsonl", "-o", "run.html"], cwd=root,
                            capture_output=True, text=True, timeout=60)
    assert viewed.returncode == 0, viewed.stderr
    html = (root / "run.html").read_text(encoding="utf-8")
    assert "request settings" in html and "shown" in html


def test_no_store_still_asks_for_encrypted_reasoning_beside_the_files_include(
    tmp_path: Path, toolrelay_cmd: list[str]
) -> None:
    root = workspace(tmp_path, {"include": ["message.output_text.logprobs"]})
    done = run_cli(toolrelay_cmd, root, "--request-settings", "settings.json", "--no-store",
                     "--transcript", "run.jsonl")
    assert done.returncode == 0, done.stderr
    for body in requests(root / "run.jsonl"):
        Dialect("responses").check(body)
        assert body["store"] is False
        assert body["include"] == ["reasoning.encrypted_content", "message.output_text.logprobs"]


OWNED = [
    ("model", "gpt-5", "model is set by toolrelay, not a request setting: use --model"),
    ("input", [], "input is set by toolrelay, not a request setting: use the task"),
    ("messages", [], "messages is set by toolrelay, not a request setting: use the task"),
    ("tools", [], "tools is set by toolrelay, not a request setting: use --config"),
    ("tool_choice", "none", "use --tool-choice"),
    ("parallel_tool_calls", False, "use --no-parallel"),
    ("stream", False, "use --no-stream"),
    ("previous_response_id", "resp_1", "use --chain"),
    ("instructions", "Be brief.", "use --instructions"),
    ("context_management", [], "use --compact-at"),
    ("prompt_cache_key", "k", "use --prompt-cache-key"),
]


@pytest.mark.parametrize(("field", "value", "says"), OWNED, ids=[row[0] for row in OWNED])
def test_a_field_toolrelay_sets_is_refused_naming_the_file_and_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], field: str,
    value: Any, says: str,
) -> None:
    root = workspace(tmp_path, {"temperature": 0.2, field: value})
    said = refused(root, monkeypatch, capsys, "--request-settings", "settings.json")
    assert f"request settings settings.json: {field} is set by toolrelay" in said
    assert says in said


@pytest.mark.parametrize(("text", "says"), [
    ("[1, 2]", "request settings settings.json must hold a JSON object of request body fields"),
    ('{"temperature": ', "request settings settings.json is not valid JSON: line 1 column 17"),
    ("[" * 600 + "]" * 600, "is not valid JSON: line 1 column 513: nested deeper than 512 levels"),
    ('{"temperature": 3}', "request settings settings.json: temperature must be from 0 to 2, got 3"),
    ('{"max_output_tokens": 9, "max_completion_tokens": 9}',
     "max_output_tokens and max_completion_tokens say the same: give one"),
])
def test_a_file_that_is_no_settings_object_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    root = workspace(tmp_path, text)
    assert says in refused(root, monkeypatch, capsys, "--request-settings", "settings.json")


def test_a_missing_file_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    said = refused(workspace(tmp_path), monkeypatch, capsys, "--request-settings", "nowhere.json")
    assert "cannot read request settings nowhere.json: No such file or directory" in said


@pytest.mark.parametrize(("api", "settings", "says"), [
    ("chat", {"include": ["message.output_text.logprobs"]},
     "include is a Responses field Chat Completions has not"),
    ("chat", {"truncation": "auto"}, "truncation is a Responses field Chat Completions has not"),
    ("chat", {"reasoning": {"effort": "low", "summary": "auto"}},
     "Chat Completions takes only reasoning's effort (reasoning_effort)"),
    ("responses", {"seed": 7}, "seed is a Chat Completions field the Responses API has not"),
    ("responses", {"logprobs": True}, "logprobs is a Chat Completions field: give top_logprobs"),
])
def test_what_the_dialect_cannot_say_is_refused_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], api: str,
    settings: dict[str, Any], says: str,
) -> None:
    root = workspace(tmp_path, settings)
    said = refused(root, monkeypatch, capsys, "--api", api, "--request-settings", "settings.json")
    assert f"request settings settings.json: {says}" in said


def test_one_file_says_the_same_to_both_dialects() -> None:
    chat_names = {"max_completion_tokens": 50, "reasoning_effort": "high", "verbosity": "low",
                  "response_format": {"type": "json_schema",
                                      "json_schema": {"name": "answer", "schema": {"type": "object"}}}}
    responses = dialect_fields(loop_names(chat_names, "f"), "responses", "f")
    assert responses == {"max_output_tokens": 50, "reasoning": {"effort": "high"},
                         "text": {"format": {"type": "json_schema", "name": "answer",
                                             "schema": {"type": "object"}}, "verbosity": "low"}}
    assert dialect_fields(responses, "chat", "f") == {
        "max_output_tokens": 50, "reasoning": {"effort": "high"}, "verbosity": "low",
        "response_format": chat_names["response_format"]}  # the chat adapter renames the first two


def test_the_library_extra_body_is_checked_alike() -> None:
    with pytest.raises(UsageError, match=r"the request settings \(extra_body, --request-settings\): tools is "
                                         r"set by toolrelay, not a request setting: use --config"):
        check_options(RunOptions(model="offline", extra_body={"tools": []}))
    with pytest.raises(UsageError, match="include is a Responses field Chat Completions has not"):
        check_options(RunOptions(model="offline", api="chat", extra_body={"include": []}))


def _tampered(source: Path, target: Path, change: Any) -> Any:
    events = transcript_events(source)
    change(events)
    target.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return verify(load_run(target))


def _last_request(events: list[dict[str, Any]]) -> dict[str, Any]:
    body: dict[str, Any] = [e for e in events if e["kind"] == "model_request"][-1]["body"]
    return body


def test_a_request_without_a_declared_setting_is_rejected(
    settled: tuple[Dialect, Path], tmp_path: Path
) -> None:
    verdict = _tampered(settled[1], tmp_path / "dropped.jsonl",
                        lambda events: _last_request(events).pop("metadata"))
    assert verdict.broken is not None and verdict.broken.check == "request_settings"
    assert verdict.broken.link == "next_input"
    assert "has no metadata, but the run declared the request settings" in verdict.broken.message


def test_a_request_with_another_value_is_rejected(settled: tuple[Dialect, Path], tmp_path: Path) -> None:
    field = "max_completion_tokens" if settled[0].chat else "max_output_tokens"
    verdict = _tampered(settled[1], tmp_path / "changed.jsonl",
                        lambda events: _last_request(events).__setitem__(field, 4000))
    assert verdict.broken is not None and verdict.broken.check == "request_settings"
    assert f"sends {field} 4000" in verdict.broken.message


def test_a_changed_declaration_is_rejected(settled: tuple[Dialect, Path], tmp_path: Path) -> None:
    def declare_other(events: list[dict[str, Any]]) -> None:
        start = next(e for e in events if e["kind"] == "run_start")
        start["settings"]["temperature"] = 1.5

    verdict = _tampered(settled[1], tmp_path / "declared.jsonl", declare_other)
    assert verdict.broken is not None and verdict.broken.check == "request_settings"
    assert "sends temperature 0.3" in verdict.broken.message


def test_a_conversations_user_turns_declare_and_carry_the_settings(tmp_path: Path) -> None:
    """``toolrelay chat``'s library: each user turn's record declares the settings too."""
    root = workspace(tmp_path)
    (root / "script.json").write_text(json.dumps({"turns": [{"message": "one"}, {"message": "two"}]}))
    opts = RunOptions(model="offline", script=root / "script.json", config=[builtin_file_server(root)],
                      transcript=root / "chat.jsonl", extra_body={"metadata": {"suite": "chat"}})

    async def talk() -> None:
        async with Conversation(opts) as conversation:
            for question in ("first?", "second?"):
                assert (await conversation.send(question)).status == "completed"

    asyncio.run(talk())
    events = transcript_events(root / "chat.jsonl")
    assert [e["settings"] for e in events if e["kind"] in ("run_start", "user_turn")] == [
        {"metadata": {"suite": "chat"}}] * 2
    assert [e["body"]["metadata"] for e in events if e["kind"] == "model_request"] == [{"suite": "chat"}] * 2
    assert verify(load_run(root / "chat.jsonl")).ok

    def declare_other(changed: list[dict[str, Any]]) -> None:
        next(e for e in changed if e["kind"] == "user_turn")["settings"] = {"metadata": {"suite": "other"}}

    verdict = _tampered(root / "chat.jsonl", tmp_path / "tampered.jsonl", declare_other)
    assert verdict.broken is not None and verdict.broken.check == "request_settings"
    assert 'sends metadata {"suite": "chat"}' in verdict.broken.message
