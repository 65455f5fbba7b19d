"""``everything_http.py JOB``: server-everything over Streamable HTTP for a list of toolrelay
commands (testkit/everything.py runs it, in a loopback-only namespace where it can).

JOB is a JSON file ``{"server": [node, index.js], "roots": [...], "runs": [[ARG, ...], ...]}``.
This starts the server on a free loopback port, waits until it accepts connections,
writes a config naming ``http://127.0.0.1:PORT/mcp`` as ``ev`` (with the roots), runs
``python -m toolrelay ARGS --config CONFIG`` for each run in the current folder, stops
the server and prints each run's ``{"code", "stdout", "stderr"}`` as one JSON list.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(port: int, server: subprocess.Popen[bytes], limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"server-everything exited with {server.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)  # polling a port that is not open yet; no event to wait on
    raise SystemExit(f"server-everything did not listen on port {port} within {limit} s")


def main() -> int:
    job = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    port = free_port()
    env = {"PATH": os.environ.get("PATH", ""), "PORT": str(port)}  # its get-env prints env
    server = subprocess.Popen([*job["server"], "streamableHttp"], env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = []
    try:
        wait_for(port, server)
        config = Path("everything-http-mcp.json")
        entry = {"url": f"http://127.0.0.1:{port}/mcp", "toolrelay": {"roots": job["roots"]}}
        config.write_text(json.dumps({"mcpServers": {"ev": entry}}), encoding="utf-8")
        for args in job["runs"]:
            proc = subprocess.run([sys.executable, "-m", "toolrelay", *args, "--config", str(config)],
                                  capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
            results.append({"code": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr})
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
