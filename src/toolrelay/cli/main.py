"""``toolrelay`` command line: one verb per module, one exit-code table for all.

    0    success (for ``run``: the model answered, also when some calls failed; for
         ``batch``: every task completed)
    1    the command ran and reports a failure (a tool error, a run that did not
         complete, with ``run --fail-on-call-error`` a failed call, a broken link found,
         a batch task that did not complete or a tasks-file line that was skipped)
    2    usage error (bad flags, unreadable config or input: refused before any server
         or model starts; an unknown alias, once the servers have listed their tools)
    3    protocol or transport failure (server crashed, exited or timed out, no server
         available, JSON-RPC error, model endpoint unreachable or answering an HTTP error)
    130  interrupted (Ctrl-C)
    141  stdout's reader went away while the command was at work (``| head``; the servers
         are stopped first); once the work is done, a closed stdout is no failure (0)

Command modules are imported only when their verb is used, so ``toolrelay --help`` and
small verbs start fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, Protocol

from ..errors import ToolrelayError
from . import process_exit
from .closed_stdout import EXIT_STDOUT_CLOSED, StdoutClosed, silence
from .help_layout import lay_out
from .usage_errors import short_usage, unrecognized

__all__ = ["EXIT_FAILURE", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_TRANSPORT", "EXIT_USAGE", "command", "main"]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_TRANSPORT = 3
EXIT_INTERRUPTED = 130

# verb → (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "files": ("files_cmd", "serve the hardened read-only MCP file server (stdio or HTTP)"),
    "tools": ("tools_cmd", "show the tools the model will see, as a table or the exact tools array"),
    "call": ("call_cmd", "call one tool by its alias and print the result"),
    "resources": ("resources_cmd", "list the servers' resources and templates, or read one"),
    "prompts": ("prompts_cmd", "list the servers' prompts and their arguments"),
    "run": ("run_cmd", "run a task: model ↔ MCP tools until the model answers"),
    "chat": ("chat_cmd", "talk with the model on the terminal, the same servers throughout; saved on exit"),
    "batch": ("batch_cmd", "run many tasks from a JSONL file, many at once, resumable (locally or on Ray)"),
    "demo": ("demo_cmd", "run the read_text_file walk-through for real and write its messages as files"),
    "verify": ("verify_cmd", "check a transcript or demo folder link by link"),
    "explain": ("explain_cmd", "explain a run's call chain stage by stage"),
    "view": ("view_cmd", "draw a run as a self-contained HTML sequence diagram"),
    "export": ("export_cmd", "write runs as chat, responses or evals JSON lines (evaluation, training)"),
    "auth": ("auth_cmd", "sign in to OAuth-protected remote MCP servers: login, status, logout"),
    "pins": ("pins_cmd", "the tool definitions pinned on first use: list, diff, approve, forget"),
    "approvals": ("approvals_cmd", "the consent answers saved for later runs: list, forget"),
    "serve": ("serve_cmd", "serve Python functions (MODULE:FN) as an MCP server (stdio or HTTP)"),
    "proxy": ("proxy_cmd", "serve a config's servers as one MCP server for a host, recording both legs"),
    "policy": ("policy_cmd", "check a policy file against the servers: each tool's decision and rule"),
}

EPILOG = """exit codes: 0 success · 1 the command ran and reports a failure · 2 usage error ·
3 protocol or transport failure · 130 interrupted"""


class CommandModule(Protocol):
    def configure(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


class _Parser(argparse.ArgumentParser):
    """argparse with our usage exit code (2), a short usage line and a one-line error;
    no abbreviated flags (``--mod`` for ``--model`` would break once a ``--mode`` exists)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(short_usage(self))
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _load(verb: str) -> CommandModule:
    module_name, _ = COMMANDS[verb]
    module: CommandModule = importlib.import_module(f"toolrelay.cli.{module_name}")
    return module


def build_parser(verb: str | None) -> argparse.ArgumentParser:
    from .._version import __version__

    parser = _Parser(
        prog="toolrelay",
        description="Connect a model's function calls to MCP tool servers, and prove what ran.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"toolrelay {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="COMMAND", parser_class=_Parser)
    parser.set_defaults(verb_parser=parser)
    for name, (_, help_text) in COMMANDS.items():
        command = sub.add_parser(
            name, help=help_text, description=help_text, epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.set_defaults(verb_parser=command)
        if name == verb:  # only the chosen verb's module is imported
            _load(name).configure(command)
            lay_out(name, command)
    return parser


def command() -> NoReturn:
    """The ``toolrelay`` process: ``main`` on the command line's arguments, then its exit
    (``process_exit``: a reading verb's large values are not freed one by one first)."""
    process_exit.arm()
    process_exit.end_process(main())


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    verb = next((a for a in arguments if not a.startswith("-")), None)
    parser = build_parser(verb if verb in COMMANDS else None)
    try:
        args, extras = parser.parse_known_args(arguments)
        if extras:  # said by the verb's parser, with its usage (argparse would show the top-level one)
            args.verb_parser.error(unrecognized(extras, args.verb_parser))
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_USAGE
    if args.verb is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return _load(args.verb).run(args)
    except ToolrelayError as exc:
        # notes say more (which calls a stream that broke off had started)
        said = "; ".join([str(exc), *getattr(exc, "__notes__", ())])
        sys.stderr.write(f"toolrelay {args.verb}: error: {said}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write(f"toolrelay {args.verb}: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`toolrelay tools --json | head`): nothing failed here, and
        # Python must not complain again when it flushes stdout at exit.
        silence(sys.stdout)
        return EXIT_OK
    except StdoutClosed:  # ... while the command was still at work (closed_stdout.py)
        return EXIT_STDOUT_CLOSED

