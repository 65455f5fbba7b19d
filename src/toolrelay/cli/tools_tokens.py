"""``toolrelay tools --tokens``: what each server costs in input tokens before anything runs.

Every request of a run carries the declarations of every tool offered and each server's
instructions (as ``relay.stages.instructions`` labels them); this is that cost, per server
and in all, with the largest tools. ``--tokens`` (``estimate``) counts about four
characters per token of the compact JSON of each declaration and of the instructions'
text: an estimate, with no model's tokenizer (the endpoint also wraps declarations in its
own format, which this does not see). ``--tokens exact`` asks the model endpoint
(``--model``, ``--base-url``) with ``POST /v1/responses/input_tokens``: for each server, the
count of a one-word input with its tools (and with its instructions) less the count of the
input alone; the largest tools stay estimated.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import UsageError
from ..relay.catalog import Catalog
from ..relay.stages.instructions import with_server_instructions
from ..relay.stages.namespaces import function_tools_by_alias
from .common import print_json

__all__ = ["add_tokens_option", "check_tokens_args", "count_exactly", "endpoint_counter", "print_tokens",
           "server_costs"]

CHARS_PER_TOKEN: Final = 4
LARGEST: Final = 5
_PROBE: Final = "."
"""The one-word input the exact counts are taken against (its own count is subtracted)."""
Counter = Callable[[dict[str, Any]], Awaitable[int]]


def add_tokens_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tokens", nargs="?", const="estimate", choices=("estimate", "exact"),
        help="the input tokens each server's declarations and instructions cost every request, per server "
             "and in all, with the largest tools: estimated (about 4 characters a token), or exact: "
             "counted by the endpoint of --model (POST /v1/responses/input_tokens)")


def check_tokens_args(args: argparse.Namespace) -> None:
    if getattr(args, "tokens", None) == "exact" and getattr(args, "model", None) is None:
        raise UsageError("--tokens exact is counted by a model endpoint: add --model NAME (with --base-url "
                         "for one that is not OpenAI's), or use --tokens for an estimate")


def estimate(value: Any) -> int:
    """About four characters per token of ``value``'s text (a string as is, else compact JSON)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(slots=True)
class ServerCost:
    server: str
    tools: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(alias, declaration) as sent."""
    instructions: str | None = None
    """The text a request carries for the server's instructions (labelled)."""
    declaration_tokens: int = 0
    instruction_tokens: int = 0

    @property
    def total(self) -> int:
        return self.declaration_tokens + self.instruction_tokens


def server_costs(catalog: Catalog) -> list[ServerCost]:
    """Each available server's declarations and instructions, estimated."""
    declared = function_tools_by_alias(catalog.declarations())
    costs: dict[str, ServerCost] = {server: ServerCost(server) for server in catalog.available}
    for route in catalog.routes:
        cost = costs.setdefault(route.server, ServerCost(route.server))
        cost.tools.append((route.alias, declared[route.alias]))
    for server, text in catalog.server_instructions().items():
        labelled = with_server_instructions(None, {server: text})
        costs.setdefault(server, ServerCost(server)).instructions = labelled
    for cost in costs.values():
        cost.declaration_tokens = sum(estimate(tool) for _, tool in cost.tools)
        cost.instruction_tokens = estimate(cost.instructions) if cost.instructions else 0
    return sorted(costs.values(), key=lambda cost: cost.server)


async def count_exactly(costs: list[ServerCost], model: str, count: Counter) -> None:
    """Replace the estimates by the endpoint's counts (each less the probe input's own)."""
    base = {"model": model, "input": _PROBE}
    alone = await count(base)
    for cost in costs:
        if cost.tools:
            cost.declaration_tokens = await count({**base, "tools": [tool for _, tool in cost.tools]}) - alone
        if cost.instructions:
            cost.instruction_tokens = await count({**base, "instructions": cost.instructions}) - alone


def print_tokens(costs: list[ServerCost], method: str, as_json: bool) -> None:
    largest = sorted(((estimate(tool), alias) for cost in costs for alias, tool in cost.tools), reverse=True)
    said = ("exact: counted by the endpoint (POST /v1/responses/input_tokens)" if method == "exact" else
            f"estimated: about {CHARS_PER_TOKEN} characters per token of the compact JSON sent; the "
            "model's own count differs (--tokens exact asks the endpoint)")
    if as_json:
        print_json({
            "method": method,
            "servers": [{"server": c.server, "tools": len(c.tools), "declarations": c.declaration_tokens,
                         "instructions": c.instruction_tokens, "total": c.total} for c in costs],
            "total": sum(c.total for c in costs),
            "largest_tools": [{"alias": alias, "tokens": tokens} for tokens, alias in largest[:LARGEST]],
        })
        return
    rows = [("SERVER", "TOOLS", "DECLARATIONS", "INSTRUCTIONS", "TOTAL")]
    rows += [(c.server, str(len(c.tools)), str(c.declaration_tokens), str(c.instruction_tokens), str(c.total))
             for c in costs]
    rows.append(("all", str(sum(len(c.tools) for c in costs)), str(sum(c.declaration_tokens for c in costs)),
                 str(sum(c.instruction_tokens for c in costs)), str(sum(c.total for c in costs))))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in zip(row[1:], widths[1:],
                                                                                       strict=True)]
        sys.stdout.write("  ".join(cells) + "\n")
    if largest:
        sys.stdout.write("\nlargest tools (estimated tokens):\n")
        for tokens, alias in largest[:LARGEST]:
            sys.stdout.write(f"  {alias}  {tokens}\n")
    sys.stdout.write(f"\ntokens per request, {said}\n")


async def endpoint_counter(stack: contextlib.AsyncExitStack, args: argparse.Namespace) -> Counter:
    """The count of a body by the endpoint of ``--model`` (the stand-in's for ``offline``)."""
    from ..assembly.options import RunOptions
    from ..assembly.parts import open_endpoint
    from ..model.input_tokens import count_input_tokens

    endpoint = open_endpoint(RunOptions(model=args.model, base_url=args.base_url, script=args.script), stack)
    return lambda body: count_input_tokens(endpoint, body)
