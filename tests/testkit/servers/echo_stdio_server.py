"""Serve ``EchoService`` over stdio (``--max-bytes N`` caps one message line)."""

from __future__ import annotations

import argparse
import asyncio

from echo_service import EchoService

from toolrelay.server.app import stderr_logging
from toolrelay.server.stdio import serve_stdio

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-bytes", type=int, default=4 * 1024 * 1024)
    stderr_logging()
    asyncio.run(serve_stdio(EchoService(), max_message_bytes=parser.parse_args().max_bytes))
