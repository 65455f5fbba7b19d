"""``client.shutdown``: while servers stop, a signal hurries the stop instead of breaking it
off, and reaches its own handler once the servers are stopped."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from client_helpers import process_running, wait_until

from toolrelay.client.shutdown import forget_group, stopping_servers, track_group

STUBBORN = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('ready', flush=True); time.sleep(300)")


def test_ctrl_c_while_servers_stop_kills_them_and_is_raised_afterwards() -> None:
    server = subprocess.Popen([sys.executable, "-c", STUBBORN], start_new_session=True,
                              stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None and server.stdout.readline() == "ready\n"
    track_group(server.pid)
    reached_the_end = False
    try:
        with pytest.raises(KeyboardInterrupt), stopping_servers():
            signal.raise_signal(signal.SIGINT)  # Ctrl-C while the servers stop
            assert wait_until(lambda: server.poll() is not None, 5.0)  # hurried: SIGKILL
            reached_the_end = True
    finally:
        forget_group(server.pid)
        if server.poll() is None:
            server.kill()
        server.wait()
        server.stdout.close()
    assert reached_the_end  # the stop ran to its end; only then the Ctrl-C took effect
    assert server.returncode == -signal.SIGKILL and not process_running(server.pid)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
