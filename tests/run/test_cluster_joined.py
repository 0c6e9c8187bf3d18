"""A worker that joins a run's cluster after the run started, from another assay.

The driver compares every worker's code with its own when it connects
(``test_cluster_user``'s refusal before the run); a worker started later was never
compared, yet it got chunks like any other, and its answers became the run's evidence.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from assay.evidence import verify_run
from tests.dask_cluster import _dask, started_cluster
from tests.helpers import error_line, finished_trials, start_cli, unique_callable_spec, wait_for
from tests.run.test_cluster_user import other_assay

distributed = pytest.importorskip("distributed")

HELD = """
import pathlib
import time

RELEASE = pathlib.Path(%r)


def answer(n):
    while not RELEASE.exists():  # every call held until the test lets them go
        time.sleep(0.02)
    return str(n)
"""


def test_a_worker_joining_mid_run_with_other_assay_code_stops_the_run(tmp_path: Path) -> None:
    """The run starts on a worker of this assay, its calls held; a worker from another
    assay joins, and the first one is killed, so the held chunk runs again on the
    newcomer, the only worker left. Its chunk's code digest is not the driver's: the run
    stops at once (exit 5) with one line naming that worker and the command that
    finishes the run, and no trial holds an answer of the other code."""
    other = other_assay(tmp_path / "other")
    release = tmp_path / "release"
    samples = [{"id": f"s{i:02d}", "input": i, "expected": str(i)} for i in range(8)]
    spec = unique_callable_spec(tmp_path / "spec", HELD % str(release), samples=samples)
    run = tmp_path / "run"
    (tmp_path / "dask").mkdir()
    with started_cluster(tmp_path / "dask", workers_wanted=1) as started:
        assert started.workers is not None
        with distributed.Client(started.address, timeout=30) as client:
            first = set(client.scheduler_info()["workers"])
            proc = start_cli("run", spec, "-o", run, "-j", "4", "--cluster", started.address)
            late = None
            try:  # the start's code check is over once the plan is written
                assert wait_for(lambda: (run / "plan.jsonl").exists(), 60), proc.stderr
                late = _dask(
                    "worker", started.address, "--host", "127.0.0.1",
                    "--dashboard-address", "127.0.0.1:0", "--nworkers", "1",
                    cwd=tmp_path / "dask", env={"PYTHONPATH": str(other)},
                )  # fmt: skip
                client.wait_for_workers(2, timeout=60)
                (newcomer,) = set(client.scheduler_info()["workers"]) - first
                os.killpg(started.workers.pid, signal.SIGKILL)  # its nanny too: no restart
                release.touch()
                out, err = proc.communicate(timeout=120)
            finally:
                release.touch()
                if late is not None:
                    os.killpg(late.pid, signal.SIGKILL)
                    late.wait(timeout=30)
                if proc.poll() is None:
                    proc.kill()
    assert proc.returncode == 5, out + err
    line = error_line(subprocess.CompletedProcess(proc.args, 5, out, err))
    assert f"worker {newcomer} of the Dask cluster at {started.address}" in line, line
    assert "runs other assay code" in line and "joined after the run started" in line, line
    assert f"assay resume {run} --cluster {started.address}" in line, line
    assert finished_trials(run) == set()  # every answer came from the newcomer: none taken
    assert verify_run(run).ok
