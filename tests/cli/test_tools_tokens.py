"""``toolrelay tools --tokens``: each server's declarations and instructions in input tokens,
estimated from the exact tools array, or counted by the endpoint (the stand-in serves
``POST /v1/responses/input_tokens``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from cli_helpers import make_workspace, toolrelay

from toolrelay.offline.wire import token_estimate


def _declarations(root: Path) -> list[dict]:
    listed = toolrelay("tools", "--json", cwd=root)
    assert listed.returncode == 0, listed.stderr
    tools: list[dict] = json.loads(listed.stdout)
    return tools


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_the_estimate_is_four_characters_a_token_of_each_declaration_per_server(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    tools = _declarations(root)
    shown = toolrelay("tools", "--tokens", cwd=root)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].split() == ["SERVER", "TOOLS", "DECLARATIONS", "INSTRUCTIONS", "TOTAL"]
    declared = sum(math.ceil(len(_compact(tool)) / 4) for tool in tools)
    server, count, declarations, instructions, total = lines[1].split()
    assert (server, int(count), int(declarations)) == ("fs", len(tools), declared)
    assert int(instructions) > 0 and int(total) == declared + int(instructions)
    assert lines[2].split()[0] == "all" and lines[2].split()[-1] == total
    largest = max(tools, key=lambda tool: len(_compact(tool)))
    assert lines[4] == "largest tools (estimated tokens):"
    assert lines[5].split() == [largest["name"], str(math.ceil(len(_compact(largest)) / 4))]
    assert "estimated: about 4 characters per token" in shown.stdout


def test_exact_counts_come_from_the_endpoints_input_tokens_route(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    tools = _declarations(root)
    shown = toolrelay("tools", "--tokens", "exact", "--model", "offline", "--json", cwd=root)
    assert shown.returncode == 0, shown.stderr
    said = json.loads(shown.stdout)
    [server] = said["servers"]
    # the stand-in counts len(json)//4 + 1 of each part it is sent; the one-word input's count is taken off
    assert server["declarations"] == token_estimate(tools) and said["method"] == "exact"
    assert server["total"] == server["declarations"] + server["instructions"] == said["total"]
    assert said["largest_tools"][0]["alias"] == max(tools, key=lambda tool: len(_compact(tool)))["name"]


def test_exact_without_a_model_is_a_usage_error_naming_the_fix(tmp_path: Path) -> None:
    shown = toolrelay("tools", "--tokens", "exact", cwd=make_workspace(tmp_path))
    assert shown.returncode == 2
    assert "--tokens exact is counted by a model endpoint: add --model NAME" in shown.stderr
