"""Serve ``EchoService`` over Streamable HTTP; print the endpoint URL on stdout, then run.

    python tests/server/echo_http_server.py [--port N] [--token T] [--max-bytes N]

SIGTERM or SIGINT stops it cleanly (exit 0).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

from echo_service import EchoService

from toolrelay.server.app import stderr_logging
from toolrelay.server.http import serve_http


def _ready(url: str) -> None:
    print(url, flush=True)


async def main(args: argparse.Namespace) -> None:
    task = asyncio.ensure_future(
        serve_http(EchoService(), port=args.port, token=args.token, max_message_bytes=args.max_bytes,
                   on_ready=_ready)
    )
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await task


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token")
    parser.add_argument("--max-bytes", type=int, default=4 * 1024 * 1024)
    stderr_logging()
    asyncio.run(main(parser.parse_args()))
    sys.exit(0)
