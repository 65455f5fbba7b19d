"""``--engine ray`` joining a Ray cluster started apart (``ray start --head`` on a free
loopback port, one for the module, its processes stopped by pid at the end: ``ray stop``
would stop every Ray on the machine): through ``--ray-address`` and through
``RAY_ADDRESS``, with the token authentication Ray turns on by default; the cluster is
still up after a batch and holds no worker of it; an address where no cluster answers is
given up within ``--ray-join-timeout``."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from batch_helpers import ledger_config, ledger_runs, reading_tasks, results, write_tasks

from conftest import CACHE, require_or_skip
from testkit.processes import descendants, is_running, live_children, spawned
from testkit.processes import run as run_process
from testkit.ray_setup import ensure_ray
from toolrelay.verify import load_run, verify

RAY = Path(sys.executable).with_name("ray")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stop(pids: set[int]) -> None:
    """SIGTERM the cluster's processes and what they started, then SIGKILL what is left."""
    every = set(pids) | {below for pid in pids for below in descendants(pid)}
    for signum in (signal.SIGTERM, signal.SIGKILL):
        for pid in every:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)
        deadline = time.monotonic() + 2  # Ray's processes end on SIGTERM at once, bar a few
        while (every := {pid for pid in every if is_running(pid)}) and time.monotonic() < deadline:
            time.sleep(0.05)


def ray_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RAY_"))}
    return {**env, **extra}


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """The address of a head started as a user starts one (token authentication on)."""
    why = ensure_ray(CACHE)
    if why is not None:
        require_or_skip(why)
    before = live_children()
    address = f"127.0.0.1:{free_port()}"
    temp = tempfile.mkdtemp(prefix="tr-rj-", dir="/tmp")  # Ray's socket paths must be short
    command = [str(RAY), "start", "--head", "--node-ip-address", "127.0.0.1", "--port", address.split(":")[1],
               "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats", "--temp-dir", temp]
    try:
        # not testkit's run, which ends what is left of the process group: the cluster stays
        started = subprocess.run(command, env=ray_env(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0"), text=True,
                                 capture_output=True, timeout=120, start_new_session=True, check=False)
        assert started.returncode == 0, started.stderr
        yield address
    finally:
        stop(live_children() - before)  # `ray start` daemonizes: its processes are orphans of this one
        shutil.rmtree(temp, ignore_errors=True)


def batch(tmp_path: Path, out: str, *options: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    tasks = write_tasks(tmp_path / "tasks.jsonl", reading_tasks(4))
    config = ledger_config(tmp_path, tmp_path / "ledger.jsonl")
    command = [sys.executable, "-m", "toolrelay", "batch", str(tasks), "--out", out, "--model", "offline",
               "--config", str(config), "--yes", "--engine", "ray", "--actors", "2", *options]
    return run_process(command, cwd=tmp_path, env=env, text=True, timeout=120)


def cluster_actors(address: str) -> list[tuple[str, ...]]:
    """(class, state) of every actor the cluster has held, asked from a driver of its own."""
    probe = ("import json, ray, ray._private.state as state\n"
             f"ray.init(address={address!r}, _node_ip_address='127.0.0.1', logging_level='ERROR')\n"
             "print(json.dumps([(a['ActorClassName'], a['State']) for a in state.actors().values()]))\n")
    env = ray_env(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_AUTH_MODE="token")
    done = run_process([sys.executable, "-c", probe], env=env, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [tuple(actor) for actor in json.loads(done.stdout.strip().splitlines()[-1])]


def test_a_batch_joins_a_cluster_by_option_and_by_environment_and_leaves_it_up(
    cluster: str, tmp_path: Path
) -> None:
    by_option = batch(tmp_path, "by-option", "--ray-address", cluster, env=ray_env())
    by_env = batch(tmp_path, "by-env", env=ray_env(RAY_ADDRESS=cluster))
    for done, out in ((by_option, "by-option"), (by_env, "by-env")):
        assert done.returncode == 0, done.stderr
        assert "tasks: 4 (4 completed)" in done.stdout
        assert sorted(line["id"] for line in results(tmp_path / out)) == ["t1", "t2", "t3", "t4"]
        for line in results(tmp_path / out):
            verdict = verify(load_run(tmp_path / out / line["transcript"]))
            assert verdict.ok and verdict.finished, (line, verdict.broken)
    assert max(ledger_runs(tmp_path / "ledger.jsonl").values()) == 2  # each task once per batch
    # the cluster is up (a driver joins it) and the batches' workers are gone from it
    actors = cluster_actors(cluster)
    assert [name for name, _ in actors] == ["BatchWorker"] * 4
    assert {state for _, state in actors} == {"DEAD"}


def test_an_address_where_no_cluster_answers_is_given_up_within_the_join_timeout(tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    began = time.monotonic()
    done = batch(tmp_path, "out", "--ray-address", address, "--ray-join-timeout", "2", env=ray_env())
    assert time.monotonic() - began < 30
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"toolrelay batch: error: cannot join the Ray cluster at {address} within 2 s: check that its head "
        "is running there (ray status --address ADDRESS), that this machine reaches that address and port, "
        "and, with token authentication, that RAY_AUTH_TOKEN or ~/.ray/auth_token holds the cluster's token")


@pytest.mark.parametrize(("signum", "codes"), [(signal.SIGTERM, {-signal.SIGTERM, 143}),
                                               (signal.SIGINT, {130})], ids=["SIGTERM", "SIGINT"])
def test_a_signal_while_joining_stops_the_command(tmp_path: Path, signum: int, codes: set[int]) -> None:
    """A listener that accepts and never answers: the batch is in Ray's join when it connects.
    SIGTERM: the default action, or toolrelay's handler where one is installed (exit 143)."""
    tasks = write_tasks(tmp_path / "tasks.jsonl", reading_tasks(1))
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        silent.settimeout(60)
        command = [sys.executable, "-m", "toolrelay", "batch", str(tasks), "--out", "out",
                   "--model", "offline", "--engine", "ray", "--ray-join-timeout", "60",
                   "--ray-address", f"127.0.0.1:{silent.getsockname()[1]}"]
        with spawned(command, cwd=tmp_path, env=ray_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True) as joining:
            connection, _ = silent.accept()
            with connection:
                began = time.monotonic()
                joining.send_signal(signum)
                _, err = joining.communicate(timeout=30)
    assert joining.returncode in codes, err
    assert time.monotonic() - began < 10
    if signum == signal.SIGINT:
        assert err.strip().splitlines()[-1] == ("toolrelay batch: interrupted; every finished task is in "
                                                "out/results.jsonl: run the same command again to resume")


def test_a_cluster_that_asks_for_a_token_none_can_be_found_for_says_where_to_put_it(
    cluster: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"  # no ~/.ray/auth_token there
    home.mkdir()
    done = batch(tmp_path, "out", "--ray-address", cluster, env=ray_env(HOME=str(home)))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"toolrelay batch: error: the Ray cluster at {cluster} asks for a token: put it in RAY_AUTH_TOKEN "
        "or ~/.ray/auth_token (ray get-auth-token prints it on the head)")
