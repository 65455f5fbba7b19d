"""``toolrelay serve MODULE:FN ...``: Python functions as an MCP server, for other hosts.

The same ``FunctionService`` a run serves in process (``functions/``), over stdio (the
default: stdout carries only protocol messages, logs go to stderr) or Streamable HTTP on
``/mcp`` with ``--http [HOST:]PORT`` (127.0.0.1 unless another address is named, browser
Origins checked, an optional bearer token from ``TOOLRELAY_TOKEN``), as ``toolrelay files``.
Each ``MODULE:NAME`` names a function, a ``@toolrelay.tool``, or a ``toolrelay.tools_server``
group; a ``MODULE`` alone serves every ``@toolrelay.tool`` defined in it. A module may be a
dotted name (found from the current directory too) or a ``.py`` file. A failed call's
traceback is logged on stderr, never sent.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import logging
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import UsageError
from ..protocol.framing import DEFAULT_MAX_MESSAGE_BYTES
from ..server.stdio import serve_stdio
from .files_cmd import TOKEN_VARIABLE, byte_size, hold_seconds, listen_address

__all__ = ["configure", "run"]

log = logging.getLogger("toolrelay.serve")

EPILOG = f"""examples:
  toolrelay serve weather:get_weather weather:save_note     stdio, two functions of weather.py
  toolrelay serve weather --http 8765                        every @toolrelay.tool of weather.py,
                                                             on http://127.0.0.1:8765/mcp
environment:
  {TOKEN_VARIABLE}   with --http, clients must send "Authorization: Bearer <token>"
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG + "\n" + (parser.epilog or "")
    parser.add_argument("targets", nargs="+", metavar="MODULE[:NAME]",
                        help="a function, @toolrelay.tool or tools_server group (MODULE:NAME), or every "
                        "@toolrelay.tool of MODULE (a dotted module name or a .py file)")
    parser.add_argument("--name", default="py",
                        help="the server's name in its initialize answer (default py)")
    parser.add_argument("--http", metavar="[HOST:]PORT", type=listen_address,
                        help="serve Streamable HTTP on http://HOST:PORT/mcp instead of stdio "
                        "(HOST 127.0.0.1 unless given; PORT 0 picks a free port)")
    parser.add_argument("--allow-origin", metavar="ORIGIN", action="append", default=[],
                        help="with --http, a browser Origin to accept besides loopback ones (repeatable)")
    parser.add_argument("--sse-hold", metavar="SECONDS", type=hold_seconds,
                        help="with --http, close a tool call's event stream after SECONDS without its "
                        "answer; the client resumes it (default: held open until the answer)")
    parser.add_argument("--max-message-bytes", metavar="BYTES", type=byte_size,
                        default=DEFAULT_MAX_MESSAGE_BYTES,
                        help="largest incoming message; larger ones are refused (default 4MiB)")


def run(args: argparse.Namespace) -> int:
    from ..functions.service import FunctionService
    from ..functions.tool import FunctionTool

    tools: list[FunctionTool] = []
    instructions: list[str] = []
    for target in args.targets:
        found, said = _tools_of(target)
        tools += found
        instructions += [said] if said else []
    names = [t.name for t in tools]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"two tools named {', '.join(twice)} "
                         "(declare one with toolrelay.tool(fn, name=...))")
    _log_to_stderr()
    service = FunctionService(args.name, tools, instructions="\n\n".join(instructions) or None)
    log.info("serving %s", ", ".join(names))
    if args.http is None:
        asyncio.run(serve_stdio(service, max_message_bytes=args.max_message_bytes))
        return 0
    from ..server.http import StreamOptions, serve_http

    host, port = args.http
    token = os.environ.get(TOKEN_VARIABLE) or None

    def ready(url: str) -> None:
        log.info("serving Streamable HTTP on %s%s", url, " (bearer token required)" if token else "")

    asyncio.run(serve_http(service, host=host, port=port, token=token,
                           max_message_bytes=args.max_message_bytes, allowed_origins=args.allow_origin,
                           on_ready=ready,
                           streams=StreamOptions(hold=args.sse_hold)))
    return 0


def _tools_of(target: str) -> tuple[list[Any], str | None]:
    """The tools ``target`` names, and its group's instructions."""
    from ..functions.sources import ToolsServer
    from ..functions.tool import FunctionTool, as_tool

    module_name, _, attribute = target.partition(":")
    module = _import(module_name, target)
    if not attribute:
        found = [value for value in vars(module).values() if isinstance(value, FunctionTool)]
        if not found:
            raise UsageError(f"{target}: the module has no @toolrelay.tool function "
                             f"(name one as {target}:NAME)")
        return found, None
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise UsageError(f"{target}: module {module_name} has no {attribute}")
        value = getattr(value, part)
    if isinstance(value, ToolsServer):
        return list(value.tools), value.instructions
    if not callable(value):
        raise UsageError(f"{target}: {attribute} is a {type(value).__name__}, not a function")
    try:
        return [as_tool(value)], None
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{target}: {exc}") from None


def _import(name: str, target: str) -> ModuleType:
    if name.endswith(".py"):
        path = Path(name)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None or not path.is_file():
            raise UsageError(f"{target}: no such file {name}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        return module
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` finds a module of the current directory
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            raise UsageError(f"{target}: no module named {name}") from None
        raise


def _log_to_stderr() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("toolrelay serve: %(message)s"))
    root = logging.getLogger("toolrelay")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
