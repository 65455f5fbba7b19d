"""``toolrelay resources``, ``toolrelay prompts``, and a run started from a server's prompt
or with its resources attached, against a real stdio server (testkit offer_server.py)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testkit.processes import run
from testkit.servers import (
    MINIMAL_ECHO_SERVER,
    OFFER_SERVER,
    RESOURCE_EVENTS_SERVER,
    SDK_PLAIN_RESOURCES_SERVER,
)
from testkit.transcripts import transcript_events


def toolrelay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    return run([sys.executable, "-m", "toolrelay", *args], cwd=cwd, text=True, timeout=60, env=env)


@pytest.fixture
def here(tmp_path: Path) -> Path:
    servers = {"offer": {"command": sys.executable, "args": [str(OFFER_SERVER)]},
               "echo": {"command": sys.executable, "args": [str(MINIMAL_ECHO_SERVER)]}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return tmp_path


def test_resources_lists_every_page_and_the_templates(here: Path) -> None:
    proc = toolrelay("resources", "--config", "mcp.json", cwd=here)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        "SERVER  URI           NAME   MIME        DESCRIPTION\n"
        "offer   note://today  today  text/plain  Today's note\n"
        "offer   img://logo    logo   image/png   The logo\n"
        "\n"
        "SERVER  URI TEMPLATE       NAME  MIME        DESCRIPTION\n"
        "offer   note://day/{date}  day   text/plain  The note of any day\n"
        "\n"
        "2 resource(s) and 1 template(s) from 1 server(s)\n"
    )
    listed = json.loads(toolrelay("resources", "--json", "--config", "mcp.json", cwd=here).stdout)
    assert [r["uri"] for r in listed["resources"]] == ["note://today", "img://logo"]
    assert listed["templates"][0] == {"server": "offer", "uriTemplate": "note://day/{date}", "name": "day",
                                      "mimeType": "text/plain", "description": "The note of any day"}


def test_read_prints_a_text_resource_from_the_server_listing_it_or_matching_its_template(here: Path) -> None:
    listed = toolrelay("resources", "read", "note://today", "--config", "mcp.json", cwd=here)
    assert (listed.returncode, listed.stdout) == (0, "Water the plants.\n")
    templated = toolrelay("resources", "read", "note://day/2026-12-01", "--config", "mcp.json", cwd=here)
    assert (templated.returncode, templated.stdout) == (0, "Nothing planned on 2026-12-01.\n")


def test_a_binary_resource_is_saved_with_o_and_never_written_to_the_terminal(here: Path) -> None:
    refused = toolrelay("resources", "read", "img://logo", "--config", "mcp.json", cwd=here)
    assert refused.returncode == 2
    said = "error: img://logo is binary (image/png, 70 bytes): save it with -o FILE\n"
    assert refused.stderr.endswith(said)
    saved = toolrelay("resources", "read", "img://logo", "-o", "logo.png", "--config", "mcp.json", cwd=here)
    assert saved.returncode == 0, saved.stderr
    assert (here / "logo.png").read_bytes().startswith(b"\x89PNG")
    assert "wrote 70 bytes of img://logo (from offer) to logo.png" in saved.stderr


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["note://day/never"], 3,
         "JSON-RPC error -32002: server offer could not read note://day/never: Resource not found: note://day/never"),
        (["note://today", "--server", "echo"], 2,
         "server 'echo' offers no resources (servers with resources: offer)"),
        ([], 2, "resources read takes the resource's URI"),
    ],
)
def test_a_read_that_cannot_work_says_why(here: Path, args: list[str], code: int, said: str) -> None:
    proc = toolrelay("resources", "read", *args, "--config", "mcp.json", cwd=here)
    assert proc.returncode == code
    assert said in proc.stderr


def test_a_server_without_a_templates_method_has_resources_and_no_templates(tmp_path: Path) -> None:
    servers = {"plain": {"command": sys.executable, "args": [str(SDK_PLAIN_RESOURCES_SERVER)]}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    listed = toolrelay("resources", "--config", "mcp.json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.endswith("1 resource(s) and 0 template(s) from 1 server(s)\n")
    unlisted = toolrelay("resources", "read", "note://other", "--config", "mcp.json", cwd=tmp_path)
    assert unlisted.returncode == 3
    assert "server plain could not read note://other: no such resource: note://other" in unlisted.stderr


def test_a_refused_listing_names_the_server_and_the_method(tmp_path: Path) -> None:
    servers = {"rs": {"command": sys.executable, "args": [str(RESOURCE_EVENTS_SERVER), "--refuse", "list"]}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    proc = toolrelay("resources", "--config", "mcp.json", cwd=tmp_path)
    assert proc.returncode == 3
    assert proc.stderr.endswith("server rs refused resources/list: the resource index is broken\n")


def test_prompts_lists_their_arguments(here: Path) -> None:
    proc = toolrelay("prompts", "--config", "mcp.json", cwd=here)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        "PROMPT      ARGUMENTS   DESCRIPTION\n"
        "offer/plan  city* days  Plan a trip\n"
        "offer/bare  -           A prompt without arguments\n"
        "\n"
        "2 prompt(s) from 1 server(s); arguments marked * are required\n"
    )
    [plan, _] = json.loads(toolrelay("prompts", "--json", "--config", "mcp.json", cwd=here).stdout)
    city = {"name": "city", "required": True}
    assert (plan["server"], plan["name"], plan["arguments"][0]) == ("offer", "plan", city)


def first_request(here: Path, transcript: str) -> dict[str, Any]:
    events = transcript_events(here / transcript)
    return next(e["body"] for e in events if e["kind"] == "model_request")


def test_a_run_starts_from_a_prompts_messages_and_verifies(here: Path) -> None:
    proc = toolrelay("run", "--prompt", "offer/plan", "--arg", "city=Paris", "--arg", "days=3", "--model",
                     "offline", "--config", "mcp.json", "--transcript", "t.jsonl", cwd=here)
    assert proc.returncode == 0, proc.stderr
    assert first_request(here, "t.jsonl")["input"] == [
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "Plan 3 days in Paris."}]},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "Which season?"}]},
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "[resource note://today, text/plain]\nSpring."}]},
    ]
    verified = toolrelay("verify", "--all", "t.jsonl", cwd=here)
    assert verified.returncode == 0, verified.stdout
    said = ('request 1 starts from the recorded first input '
            '(3 item(s), "prompt offer/plan (city=Paris days=3)")')
    assert said in verified.stdout


def test_resources_are_attached_to_the_task_as_parts(here: Path) -> None:
    proc = toolrelay("run", "Summarise these", "--resource", "note://today", "--resource", "img://logo",
                     "--model", "offline", "--config", "mcp.json", "--transcript", "t.jsonl", cwd=here)
    assert proc.returncode == 0, proc.stderr
    [message] = first_request(here, "t.jsonl")["input"]
    text, note, image = message["content"]
    assert text == {"type": "input_text", "text": "Summarise these"}
    assert note == {"type": "input_text", "text": "[resource note://today, text/plain]\nWater the plants.\n"}
    assert image["type"] == "input_image" and image["image_url"].startswith("data:image/png;base64,")
    assert base64.b64decode(image["image_url"].split(",", 1)[1]).startswith(b"\x89PNG")
    assert toolrelay("verify", "t.jsonl", cwd=here).returncode == 0


def test_verify_catches_a_first_request_that_is_not_the_recorded_prompt(here: Path) -> None:
    toolrelay("run", "--prompt", "offer/bare", "--model", "offline", "--config", "mcp.json",
              "--transcript", "t.jsonl", cwd=here)
    path = here / "t.jsonl"
    told = '"text": "Say hello."}]}], "stream"'  # the first request's input (the input ends there)
    path.write_text(path.read_text().replace(told, told.replace("hello", "bye"), 1))
    verified = toolrelay("verify", "t.jsonl", cwd=here)
    assert verified.returncode == 1
    said = "request 1's input is not the recorded first input (1 item(s), \"prompt offer/bare\") (differs at"
    assert said in verified.stdout


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["--prompt", "offer/plan"], 3,
         "server offer could not give prompt 'plan': Missing required argument: city"),
        (["--prompt", "echo/plan"], 2,
         "--prompt echo/plan: server 'echo' offers no prompts (servers with prompts: offer)"),
        (["--prompt", "plan"], 2,
         "--prompt takes SERVER/NAME (as `toolrelay prompts` lists them), got 'plan'"),
        (["--arg", "city=Paris", "task"], 2, "--arg gives an argument of --prompt: add --prompt SERVER/NAME"),
        (["--prompt", "offer/plan", "--arg", "city"], 2, "argument --arg: takes NAME=VALUE, not 'city'"),
        ([], 2, "run takes a task (what the model should do), or --prompt SERVER/NAME"),
        (["task", "--resource", "x://nowhere"], 3, "server offer could not read x://nowhere"),
    ],
)
def test_a_run_that_cannot_start_says_why(here: Path, args: list[str], code: int, said: str) -> None:
    proc = toolrelay("run", *args, "--model", "offline", "--config", "mcp.json", cwd=here)
    assert proc.returncode == code, proc.stderr
    assert said in proc.stderr
