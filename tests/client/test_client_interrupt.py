"""No server process survives toolrelay being interrupted (Ctrl-C or SIGTERM)."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
from client_helpers import HERE, PYTHON, process_running, wait_until

from testkit.processes import ProcessKeeper


@pytest.mark.parametrize(
    ("mode", "signum"),
    [("graceful", signal.SIGINT), ("careless", signal.SIGINT), ("careless", signal.SIGTERM),
     ("graceful", signal.SIGTERM)],
)
def test_interrupted_program_leaves_no_server_behind(
    tmp_path: Path, mode: str, signum: int, processes: ProcessKeeper
) -> None:
    driver = processes.spawn([PYTHON, str(HERE / "interrupt_driver.py"), mode, str(tmp_path)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert driver.stdout is not None
    pids = json.loads(driver.stdout.readline())
    assert process_running(pids["server"]) and process_running(pids["grandchild"])
    driver.send_signal(signum)
    out, err = driver.communicate(timeout=15)
    assert wait_until(lambda: not process_running(pids["server"]), 5.0), err
    assert wait_until(lambda: not process_running(pids["grandchild"]), 5.0), err
    assert driver.returncode != 0  # it was interrupted, and says so
    if mode == "graceful":
        assert out.strip() == "closed"  # the connection's close() ran
