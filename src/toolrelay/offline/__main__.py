"""Serve the offline stand-in model on its own: ``python -m toolrelay.offline [--script F]``.

Prints ``OFFLINE_MODEL_BASE_URL=http://127.0.0.1:PORT/v1`` and serves until interrupted,
so any client (the openai SDK, curl, a benchmark in another process) can point its base
URL at it.
"""

from __future__ import annotations

import argparse
import sys
import threading

from ..errors import ToolrelayError
from .standin import OfflineModel


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m toolrelay.offline", description=__doc__, allow_abbrev=False
    )
    parser.add_argument(
        "--script",
        help="JSON script of the answers (default: call the offered read_text_file with the path and "
        "line count the task names, then quote what came back)",
    )
    parser.add_argument("--port", type=_port, default=0, help="port on 127.0.0.1 (default: any free one)")
    parser.add_argument("--api-key", help="require this key (Authorization: Bearer or api-key)")
    args = parser.parse_args(argv)
    try:
        model = OfflineModel(args.script, require_key=args.api_key, port=args.port).start()
    except ToolrelayError as exc:  # a bad script (exit 2), a port already taken (exit 3)
        print(f"toolrelay: {exc}", file=sys.stderr)
        return exc.exit_code
    with model:
        print(f"OFFLINE_MODEL_BASE_URL={model.base_url}", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            return 130
    return 0


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 0 to 65535, not {text!r}")
    return int(text)


if __name__ == "__main__":
    sys.exit(main())
