"""The options that say how toolrelay answers what servers ask (roots are in the config):

- ``--elicit ask|defaults|decline`` and ``--open`` (``run``, ``call``, ``batch``): who
  answers a server's elicitation (``cli/elicitation.py``);
- ``--max-sampling-per-call N`` (``run``, ``call``, ``batch``): sampling requests answered
  during one tool call, the rest refused;
- ``--pins enforce|strict|warn|off`` (``run``, ``batch``, ``call``, ``tools``): how the servers'
  tool definitions are pinned and checked (``relay/pins.py``);
- ``--model``, ``--base-url``, ``--script`` and ``--yes`` for the verbs that have no model of
  their own (``tools``, ``call``): the model that answers sampling requests, and their
  approval. ``run`` samples with its own model and approves with its own ``--yes``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib

from ..client.config import PIN_MODES, config_policy
from ..client.host import Host
from ..client.host.requests import DEFAULT_MAX_SAMPLING_PER_CALL
from ..errors import UsageError
from ..relay.policy import Policy, load_policy, policy_of
from .consent import sampling_approver
from .elicitation import ELICIT_POLICIES, elicitor_for

__all__ = [
    "add_elicit_options", "add_pins_option", "add_policy_option", "add_sampling_cap_option",
    "add_sampling_options", "check_sampling_args", "host_from_args", "policy_from_args",
]

NO_MODEL_HINT = "no model given; pass --model (e.g. --model offline) and --yes to let servers sample"


def add_elicit_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--elicit", choices=ELICIT_POLICIES, default=None,
        help="servers' questions (elicitation): ask (default on a terminal), defaults (accept forms' "
             "defaults, decline URLs), decline (default otherwise)")
    parser.add_argument("--open", action="store_true",
                        help="open a URL a server asks you to visit in the browser, once you consent")


def add_pins_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pins", choices=PIN_MODES, default=None,
        help="tool definitions pinned on first use: enforce (default: a changed tool is withheld), strict "
             "(new tools too, until `toolrelay pins approve`), warn (offered, with a warning), off; wins "
             "over each server's toolrelay.pins")


def add_policy_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", metavar="FILE",
                        help="a policy file: ordered rules saying which tools are offered, refused, run "
                             "without asking or asked about (docs/policy.md); overrides the config's "
                             "toolrelay.policy")


def policy_from_args(args: argparse.Namespace) -> Policy | None:
    """The ``--policy`` file's rules, else the config's ``"toolrelay": {"policy": ...}``, read now
    (a bad file is a usage error before anything starts)."""
    path = getattr(args, "policy", None)
    if path:
        return load_policy(path)
    config = getattr(args, "config", None)
    if not config:
        return None
    block = config_policy(config)
    return policy_of(block, str(config)) if block is not None else None


def add_sampling_cap_option(parser: argparse.ArgumentParser) -> None:
    from .common import positive_count  # (common imports what imports this module)

    parser.add_argument(
        "--max-sampling-per-call", type=positive_count, metavar="N",
        help=f"sampling requests of a server answered during one tool call; the rest are refused "
             f"(default: each server's maxSamplingPerCall, {DEFAULT_MAX_SAMPLING_PER_CALL})")


def add_sampling_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None,
                        help="the model that answers servers' sampling requests (a model name, or "
                             "'offline'); without it they are refused")
    parser.add_argument("--base-url", metavar="URL",
                        help="Responses endpoint for --model (default OPENAI_BASE_URL or OpenAI)")
    parser.add_argument("--script", metavar="FILE", help="the offline model's script (with --model offline)")
    parser.add_argument("--yes", action="store_true", help="approve every sampling request")


async def host_from_args(args: argparse.Namespace, stack: contextlib.AsyncExitStack,
                         lock: asyncio.Lock | None = None) -> Host:
    """The Host the options describe; a model is started (``--model``) until ``stack`` closes."""
    sampler = None
    model = getattr(args, "model", None)
    if model is not None:
        # the assembly's parts (model client, stand-in) only when a model is asked for: `tools` and
        # `call` start faster without it
        from ..assembly.options import RunOptions
        from ..assembly.parts import check_options, model_sampler

        options = RunOptions(model=model, base_url=getattr(args, "base_url", None),
                             script=getattr(args, "script", None))
        check_options(options)
        sampler = await model_sampler(stack, options)
    return Host(
        sampler=sampler,
        approve_sampling=sampling_approver(bool(getattr(args, "yes", False)), lock),
        elicitor=elicitor_for(getattr(args, "elicit", None), open_urls=bool(getattr(args, "open", False)),
                              lock=lock),
        no_sampler_hint=NO_MODEL_HINT,
    )


def check_sampling_args(args: argparse.Namespace) -> None:
    """--script without --model offline is a usage error, as in ``run``."""
    if not getattr(args, "script", None):
        return
    from ..assembly.options import OFFLINE_MODEL

    if getattr(args, "model", None) != OFFLINE_MODEL:
        raise UsageError("--script drives the offline model; add --model offline")
