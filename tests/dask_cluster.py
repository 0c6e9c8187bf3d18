"""A real Dask cluster for tests: ``dask scheduler`` and ``dask worker`` started as
programs, as a user starts them, every port on 127.0.0.1.

``started_cluster`` starts one for a block; the ``cluster`` fixture of tests/run (its
conftest) keeps one for a whole test module.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import NamedTuple

from tests.helpers import wait_for


class DaskCluster(NamedTuple):
    """A started cluster: its scheduler's address, the scheduler's process, the workers'
    process ids when it started, and the ``dask worker`` process (None without one)."""

    address: str
    scheduler: subprocess.Popen[bytes]
    worker_pids: set[int]
    workers: subprocess.Popen[bytes] | None = None


def _dask(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """``dask ARGS`` as a user starts it, in a session of its own (killed as a group),
    with *env* added to its environment; its output goes to ``cwd/ARG0.log``, for when
    a start fails."""
    with open(cwd / f"{args[0]}.log", "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "dask", *args],
            cwd=cwd,
            env={**os.environ, **(env or {})},
            stdout=log,
            stderr=log,
            start_new_session=True,
        )


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def worker_pids(address: str) -> set[int]:
    """The process ids of the cluster's workers now (a worker its nanny restarted has a
    new one)."""
    import distributed

    with distributed.Client(address, timeout=30) as client:
        return set(client.run(os.getpid).values())


@contextmanager
def started_cluster(
    folder: Path, workers_wanted: int = 2, env: dict[str, str] | None = None
) -> Iterator[DaskCluster]:
    """``dask scheduler`` and ``dask worker --nworkers N`` (each worker under a nanny
    that restarts it), started as separate programs, every port on 127.0.0.1, killed
    when the block ends. With ``workers_wanted=0``, a scheduler alone. *env* is added to
    the workers' environment."""
    import distributed

    address_file = folder / "scheduler.json"
    loopback = ("--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0")
    scheduler = _dask(
        "scheduler", *loopback, "--port", "0", "--scheduler-file", str(address_file), cwd=folder
    )
    workers = None
    try:
        started = wait_for(lambda: "address" in _read(address_file), 60)
        assert started, _read(folder / "scheduler.log")
        address = json.loads(address_file.read_text())["address"]
        if not workers_wanted:
            yield DaskCluster(address, scheduler, set())
            return
        workers = _dask(
            "worker", address, *loopback, "--nworkers", str(workers_wanted), "--nthreads", "2",
            cwd=folder, env=env,
        )  # fmt: skip
        with distributed.Client(address, timeout=30) as client:
            client.wait_for_workers(workers_wanted, timeout=60)
        yield DaskCluster(address, scheduler, worker_pids(address), workers)
    finally:
        for proc in (workers, scheduler):
            if proc is not None:
                with suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)


@contextmanager
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections for the block: bound, never listening,
    and held (a port let go could be taken meanwhile by another test's scheduler)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        yield int(probe.getsockname()[1])


def interrupted_then_resumed(task: str, folder: Path, address: str, at_least: int) -> Path:
    """Run *task* locally (the reference, ``folder/local``), then on the cluster with 2
    trials in flight, stopped by Ctrl-C once *at_least* trials are finished, and
    finished by ``resume --cluster``; checked equal to the local run, verified, and
    re-scored to the same scores. Returns the cluster's run folder."""
    from assay.evidence import verify_run
    from tests.helpers import finished_trials, results_view, run_cli, start_cli

    reference = run_cli("run", task, "-o", folder / "local")
    assert reference.returncode == 0, reference.stderr
    (Path(task.partition("@")[0]).parent / "slow").touch()
    run = folder / "cluster"
    proc = start_cli("run", task, "-o", run, "-j", "2", "--cluster", address)
    assert wait_for(lambda: len(finished_trials(run)) >= at_least, timeout=60)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert at_least <= len(finished_trials(run)) < len(finished_trials(folder / "local"))
    resumed = run_cli("resume", run, "--cluster", address)
    assert resumed.returncode == 0, resumed.stderr
    assert results_view(run) == results_view(folder / "local")
    result = verify_run(run)
    assert result.ok, result.problems
    rescored = run_cli("score", run)
    assert rescored.returncode == 0, rescored.stderr
    assert "all equal the recorded ones" in rescored.stdout
    return run
