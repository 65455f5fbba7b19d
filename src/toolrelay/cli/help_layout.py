"""``--help`` laid out for reading: a long command's options in titled groups, a short usage.

Each verb still defines its options where it always did; this only moves their help into
argparse argument groups afterwards, so the verbs' modules stay as they are. An option no
group names (a new one) stays under "other": moved, never lost. Every option in
full, with its default, is in docs/cli.md, which each laid-out help names.
"""

from __future__ import annotations

import argparse

from .usage_errors import compact_usage

__all__ = ["GROUPS", "lay_out"]

_SERVERS = ("--config", "--protocol-version", "--auth", "--root", "--strict", "--declare",
            "--structured-output", "--tool-search", "--always-load", "--expose-resources")
_LIMITS = ("--max-turns", "--max-tool-calls", "--timeout", "--call-timeout", "--call-max-time",
           "--output-budget", "--media-budget", "--text-only")
_MODEL = ("--model", "--base-url", "--api", "--script", "--instructions", "--chain", "--no-store",
          "--tool-choice", "--no-parallel", "--no-stream", "--early", "--prompt-cache-key",
          "--request-settings",
          "--temperature", "--top-p", "--seed", "--max-output-tokens", "--top-logprobs",
          "--compact-at", "--prices")

GROUPS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "run": (
        ("servers and input", (*_SERVERS, "--prompt", "--arg", "--resource", "--no-server-instructions")),
        ("model", _MODEL),
        ("limits", _LIMITS),
        ("approval and what servers ask", ("--yes", "--elicit", "--open", "--max-sampling-per-call",
                                           "--server-log-level", "--pins", "--policy")),
        ("output", ("--transcript", "--fail-on-call-error", "--json", "--quiet", "--otel", "--otel-file")),
    ),
    "batch": (
        ("batch", ("--out", "--concurrency", "--resume", "--restart", "--quiet")),
        ("Ray", ("--engine", "--ray-address", "--ray-join-timeout", "--actors", "--collect")),
        ("servers", _SERVERS),
        ("model", _MODEL),
        ("limits, per task", _LIMITS),
        ("approval and what servers ask",
         ("--yes", "--elicit", "--max-sampling-per-call", "--server-log-level", "--pins", "--policy")),
        ("traces", ("--otel", "--otel-file")),
    ),
    "chat": (
        ("conversation", ("--history", "--new", "--transcript", "--quiet", "--otel", "--otel-file")),
        ("servers", _SERVERS),
        ("model", _MODEL),
        ("limits, per message", _LIMITS),
        ("approval and what servers ask", ("--yes", "--elicit", "--open", "--max-sampling-per-call",
                                           "--server-log-level", "--pins", "--policy")),
    ),
}
"""Per verb with many options: (group title, its options by their long name), in help order."""

_REFERENCE = "every option in full, with its default: docs/cli.md#toolrelay-{verb}-options"


def lay_out(verb: str, parser: argparse.ArgumentParser) -> None:
    """Group ``verb``'s options as GROUPS says, shorten its usage line and name the reference."""
    groups = GROUPS.get(verb)
    if groups is None:
        return
    by_name = {name: action for action in parser._actions for name in action.option_strings}
    others = parser._optionals
    for title, names in groups:
        group = parser.add_argument_group(title)
        for action in (by_name[name] for name in names if name in by_name):
            others._group_actions.remove(action)
            group._group_actions.append(action)
    others.title = "other"
    parser._action_groups.remove(others)  # after the groups: it holds -h and any option no group names
    parser._action_groups.append(others)
    parser.usage = compact_usage(parser)
    parser.epilog = f"{parser.epilog or ''}\n\n{_REFERENCE.format(verb=verb)}".lstrip()
