"""``toolrelay demo``: run the read_text_file walk-through for real, write each message to a
file, verify the folder.

Exit 0 only when the run completed, the model really called the file server, and the
folder verifies; 1 otherwise (the reason is printed); 3 when the model endpoint fails.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from pathlib import Path

from ..demo import DEFAULT_OUT, DEMO_TASK, STANDALONE_CHECKS, DemoResult, run_demo, standalone_check
from ..events import EventStream
from ..protocol.versions import LATEST_MODERN_VERSION, SEED_VERSION
from ..relay.stages.endings import ending_line
from ..runner import OFFLINE_MODEL
from ..verify.attachments import STREAMED
from ..verify.explain import walk
from .otel_options import add_otel_options, tracer_provider
from .progress import AtFirstStart, ProgressPrinter

__all__ = ["configure", "run"]

# Why the demo and `run` speak different revisions, said where both are seen.
ERA_NOTE = (
    f"MCP {SEED_VERSION} with the file server: the walk-through's reference messages, which these files "
    f"reproduce, are in that revision (toolrelay run speaks {LATEST_MODERN_VERSION} with a server that does)"
)

EXAMPLES = f"""The read_text_file walk-through: a model is asked for the first 20 lines of notes.txt
(in a temporary folder), calls read_text_file on toolrelay's file server, gets the result
back paired by call_id, and answers. Each message of that run is written to a file.
It speaks MCP {SEED_VERSION}, the revision of the walk-through's reference messages, which
these files reproduce; toolrelay run speaks {LATEST_MODERN_VERSION} with a server that does.

examples:
  toolrelay demo                                   offline stand-in model, writes ./{DEFAULT_OUT}
  toolrelay demo --out /tmp/demo-run
  OPENAI_API_KEY=sk-... toolrelay demo --model gpt-4.1
  toolrelay demo --model qwen3 --base-url http://127.0.0.1:11434/v1

then check the files yourself: toolrelay demo prints the commands at its end, ready to run
where you are (toolrelay verify, toolrelay explain, and two standalone checks that ship
with toolrelay and use the Python standard library only)."""


def configure(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "--out",
        metavar="DIR",
        default=DEFAULT_OUT,
        help=f"where to write the message files (default ./{DEFAULT_OUT})",
    )
    add(
        "--model",
        default=OFFLINE_MODEL,
        help=f"model name (default {OFFLINE_MODEL}: the deterministic stand-in)",
    )
    add(
        "--base-url",
        metavar="URL",
        help="Responses endpoint for a real model (default OPENAI_BASE_URL or OpenAI)",
    )
    add("--verbose", action="store_true", help="show every turn and call on stderr (warnings always show)")
    add_otel_options(parser)
    parser.epilog = EXAMPLES + "\n\n" + (parser.epilog or "")


def run(args: argparse.Namespace) -> int:
    events = EventStream()
    # warnings (retries, a server that died) always: a silent wait looks like a hang
    events.subscribe(ProgressPrinter(verbose=args.verbose))
    out = sys.stdout
    header = (
        f"toolrelay demo: {DEMO_TASK!r}, run for real (model {args.model}; the built-in file server as fs "
        f"on a temporary workspace with a 30-line notes.txt)\n{ERA_NOTE}\n"
    )
    events.subscribe(AtFirstStart(out, header))  # said as the run starts: never before a usage error
    demo = run_demo(args.out, model=args.model, base_url=args.base_url, events=events,
                    tracer_provider=tracer_provider(args))
    out.write(f"wrote {demo.out}/: {' '.join(demo.files)}\n")
    out.write(f"wrote {demo.out / STREAMED}/: {' '.join(demo.stream_files)} (the same walk-through, "
              "streamed: every server-sent event as received)\n\n")
    out.write(walk(demo.run, demo.verdict))
    out.write("\n" + _conclusion(demo))
    return 0 if demo.ok else 1


def _conclusion(demo: DemoResult) -> str:
    for which, result in (("run", demo.result), ("streamed run", demo.streamed)):
        if not result.completed:
            ended = ending_line(result.status, result.turns, result.reason)
            return f"the {which} did not complete: it {ended}\n"
    if not demo.called:
        return "the model answered without calling the file server: the read_text_file call did not happen\n"
    if demo.verdict.broken is not None:
        broken = demo.verdict.broken
        return f"verify: BROKEN at {broken.link}: {broken.message}\n"
    hints = "".join(f"  {hint}\n" for hint in _hints(demo.out))
    return f"every link holds. Check the files yourself:\n{hints}"


def _hints(out: Path) -> list[str]:
    """Commands that check ``out``, as they run from here with this installation: the
    toolrelay that is running, and the standalone checks where the package put them."""
    folder = shlex.quote(str(out))
    toolrelay, python = _toolrelay_command(), _python_command()
    checks = [
        f"{python} {shlex.quote(_shown(standalone_check(name)))} {folder}" for name in STANDALONE_CHECKS
    ]
    streamed = shlex.quote(str(out / STREAMED))
    explain = [f"{toolrelay} explain {folder}", f"{toolrelay} explain {streamed}"]
    return [f"{toolrelay} verify {folder}", *explain, *checks]


def _toolrelay_command() -> str:
    """``toolrelay`` when that name finds this very script, else its path; ``python -m
    toolrelay`` when started that way."""
    started = Path(sys.argv[0])
    if started.stem != "toolrelay":  # python -m toolrelay: argv[0] is the package's __main__.py
        return f"{_python_command()} -m toolrelay"
    return "toolrelay" if _found_as(started.name, started) else shlex.quote(_shown(started))


def _python_command() -> str:
    """``python3`` when that name finds this interpreter (same folder: the same venv), else its path."""
    interpreter = Path(sys.executable)
    return "python3" if _found_as("python3", interpreter) else shlex.quote(_shown(interpreter))


def _found_as(name: str, path: Path) -> bool:
    found = shutil.which(name)
    if found is None or Path(found).absolute().parent != path.absolute().parent:
        return False
    try:
        return os.path.samefile(found, path)
    except OSError:
        return False


def _shown(path: Path) -> str:
    """The path relative to the current folder when it lies inside it (``.venv/bin/python``)."""
    try:
        relative = path.absolute().relative_to(Path.cwd())
    except ValueError:
        return str(path.absolute())
    shown = str(relative)
    return shown if os.sep in shown else f".{os.sep}{shown}"  # a bare name would be looked up on PATH
