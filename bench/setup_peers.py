"""The bench's own venv with the peers installed: ``bench/.cache/venv``.

toolrelay's dependencies stay lean; the peers it is measured against (the mcp SDK, the
openai SDK, the OpenAI Agents SDK, pinned to the versions of BASELINES.md) live only in
this venv, next to an editable install of toolrelay itself, with the otel extra's packages
and oteltap for otel_bench.py. Every measuring child process
runs with this venv's python, so toolrelay and its peers share one interpreter.

    python bench/setup_peers.py            create or update the venv, print its python
    python bench/setup_peers.py --node     also install the Node reference file server
"""

from __future__ import annotations

import compileall
import subprocess
import sys
import tomllib
from pathlib import Path

from common import BENCH_DIR, CACHE, arg_parser

__all__ = ["OTEL_SPECS", "PEER_SPECS", "bench_python", "compile_toolrelay"]

OTEL_SPECS = ("opentelemetry-api==1.45.2", "opentelemetry-sdk==1.45.2",
              "opentelemetry-exporter-otlp-proto-http==1.45.2", "oteltap==1.0.0")
"""otel_bench.py's: toolrelay's otel extra (pinned as the tests pin it) and a real OTLP/HTTP
receiver. Installed, not asked for, they change nothing: toolrelay imports no OpenTelemetry
module unless tracing is on, and the mcp SDK's middleware stays a no-op without a provider."""
PEER_SPECS = ("mcp==2.3.0", "openai==3.57.0", "openai-agents==0.24.0", *OTEL_SPECS)
REPO = BENCH_DIR.parent
VENV = CACHE / "venv"


def bench_python() -> Path:
    """The venv's python, created and installed on first use (idempotent, ~1 min once)."""
    python = VENV / "bin" / "python"
    marker = VENV / "bench-specs.txt"
    # toolrelay's own dependencies too: a venv made before one was added (orjson) installs it
    wanted = "\n".join([str(REPO), *PEER_SPECS, *_toolrelay_dependencies()])
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return python
    print(f"# setting up {VENV} ({' '.join(PEER_SPECS)})", file=sys.stderr)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", str(REPO), *PEER_SPECS], check=True)
    marker.write_text(wanted)
    return python


def _toolrelay_dependencies() -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return list(project["dependencies"])


def compile_toolrelay() -> None:
    """Write toolrelay's bytecode, as a wheel install would.

    With PYTHONDONTWRITEBYTECODE=1 (set here) an editable install never gets .pyc files and
    every start re-compiles the package, while pip-installed peers start from bytecode."""
    compileall.compile_dir(str(REPO / "src" / "toolrelay"), quiet=1)


def main() -> None:
    parser = arg_parser(__doc__)
    parser.add_argument("--node", action="store_true", help="install the Node reference server (files_bench)")
    args = parser.parse_args()
    python = bench_python()
    compile_toolrelay()
    if args.node:
        from files_bench import node_server

        print(" ".join(node_server()))
    print(python)


if __name__ == "__main__":
    main()
