"""Issue 18's promises tried as a user tries them: ``dask scheduler`` and ``dask worker``
started as programs on 127.0.0.1, and the ``assay`` CLI as typed, on the inputs around
what the other cluster tests cover (tests/run/test_cluster*.py, test_shard.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from assay.evidence import verify_run
from tests.dask_cluster import DaskCluster, started_cluster
from tests.helpers import (
    error_line,
    finished_trials,
    log_events,
    read_jsonl,
    run_cli,
    start_cli,
    trial_events,
    unique_callable_spec,
    wait_for,
    write_module,
)

distributed = pytest.importorskip("distributed")

SAMPLES = 200
SLOW = """
import time


def answer(n):
    time.sleep(0.1)
    return str(n)
"""


def test_a_lost_scheduler_blocks_no_trial_of_a_spec_without_retries(tmp_path: Path) -> None:
    """With ``retry.max_attempts: 1`` no retry hides it: a chunk's other calls must stop
    with the run, as its sender does, not fail as infrastructure and leave their trials
    ``blocked`` (a bundle that ``assay resume`` keeps: the run could not be finished)."""
    samples = [{"id": f"s{i:03d}", "input": i, "expected": str(i)} for i in range(SAMPLES)]
    spec = unique_callable_spec(tmp_path / "spec", SLOW, samples=samples, retry={"max_attempts": 1})
    run = tmp_path / "run"
    (tmp_path / "dask").mkdir()
    with started_cluster(tmp_path / "dask") as started:
        proc = start_cli("run", spec, "-o", run, "-j", "16", "--cluster", started.address)
        assert wait_for(lambda: len(finished_trials(run)) >= 16, timeout=60)
        os.killpg(started.scheduler.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 5, out + err
    line = error_line(subprocess.CompletedProcess(proc.args, 5, out, err))
    assert f"assay resume {run} --cluster {started.address}" in line, line
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"
    events = log_events(run)
    states = [e["data"]["state"] for e in events if e["type"] == "trial_finished"]
    assert "blocked" not in states, states
    infra = [e["data"] for e in events if e["type"] == "error"]
    assert infra == []  # the cluster's loss is no attempt's failure
    (tmp_path / "again").mkdir()
    with started_cluster(tmp_path / "again") as again:
        resumed = run_cli("resume", run, "--cluster", again.address)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert verify_run(run).ok
    bundles = read_jsonl(run / "bundles.jsonl")
    assert sorted(b["trial"]["sample_id"] for b in bundles) == [s["id"] for s in samples]
    assert {b["state"] for b in bundles} == {"completed"}


RELATIVE_TASK = """
import json

from assay import Sample, Task, generate, match, task


@task
def relative():
    rows = [json.loads(line) for line in open("questions.jsonl")]  # the working folder's
    return Task(
        dataset=[Sample(input=row["q"], target="four", id=row["id"]) for row in rows],
        solver=generate(),
        scorer=match(),
        model="mock/m",
    )
"""


def test_a_task_the_workers_cannot_rebuild_is_refused_before_it_runs(
    cluster: DaskCluster, tmp_path: Path
) -> None:
    """The task reads a file by a path relative to the working folder, which is not the
    workers' one: each worker fails to rebuild it. Before, every attempt failed as
    infrastructure and every trial ended ``blocked`` (exit 3); now one line, exit 2, and
    no run folder."""
    folder = tmp_path / "task"
    path = write_module(folder, f"relative_{tmp_path.name}", RELATIVE_TASK)
    lines = [json.dumps({"q": f"q{i}", "id": f"a{i}"}) for i in range(3)]
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n")
    local = run_cli("run", f"{path}@relative", "-o", tmp_path / "local", cwd=folder)
    assert local.returncode == 0, local.stdout + local.stderr
    run = tmp_path / "run"
    proc = run_cli("run", f"{path}@relative", "-o", run, "--cluster", cluster.address, cwd=folder)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = error_line(proc)
    assert line.startswith("assay: --cluster: 2 of 2 workers cannot build the task (tcp://")
    assert "FileNotFoundError" in line and "questions.jsonl" in line, line
    assert line.endswith(
        " — run each worker where it sees the task's file, the modules beside it and the "
        "files it reads (a path relative to the working folder is read from the worker's) "
        "at the same path"
    ), line
    assert not run.exists()


SLOW_TASK = """
import anyio

from assay import Sample, Task, generate, match, solver, task


@solver
def slowly():
    async def solve(state, generate):
        await anyio.sleep(0.1)
        return await generate(state)

    return solve


@task
def slow():
    return Task(
        dataset=[Sample(input=f"say {i}", target="four", id=f"s{i:03d}") for i in range(200)],
        solver=[slowly(), generate()],
        scorer=match(),
        model="mock/m",
    )
"""


def test_a_python_task_left_without_workers_is_interrupted_and_resumed(tmp_path: Path) -> None:
    """Every worker gone, none restarted, under a Python task: one line after the 10 s
    docs/cluster.md gives, sealed ``interrupted`` with no trial blocked, and ``assay
    resume RUN --cluster ADDRESS`` finishes it, each sample once."""
    path = write_module(tmp_path / "task", f"slow_{tmp_path.name}", SLOW_TASK)
    run = tmp_path / "run"
    (tmp_path / "dask").mkdir()
    with started_cluster(tmp_path / "dask", workers_wanted=1) as started:
        proc = start_cli("run", f"{path}@slow", "-o", run, "-j", "8", "--cluster", started.address)
        assert wait_for(lambda: len(finished_trials(run)) >= 8, timeout=60)
        assert started.workers is not None
        os.killpg(started.workers.pid, signal.SIGKILL)  # the nanny with its worker
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 5, out + err
    line = error_line(subprocess.CompletedProcess(proc.args, 5, out, err))
    assert "no worker has been connected for 10 s" in line, line
    assert f"assay resume {run} --cluster {started.address}" in line, line
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"
    events = log_events(run)
    states = {e["data"]["state"] for e in events if e["type"] == "trial_finished"}
    assert "blocked" not in states, states
    (tmp_path / "again").mkdir()
    with started_cluster(tmp_path / "again") as again:
        resumed = run_cli("resume", run, "--cluster", again.address)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert verify_run(run).ok
    bundles = read_jsonl(run / "bundles.jsonl")
    assert sorted(b["trial"]["sample_id"] for b in bundles) == [f"s{i:03d}" for i in range(200)]
    assert {b["state"] for b in bundles} == {"completed"}


ANSWER = """
def answer(n):
    return str(n)
"""


def test_a_target_the_workers_cannot_build_is_refused_before_the_run(tmp_path: Path) -> None:
    """The worker runs under bubblewrap with an empty folder over the spec's, as on a
    machine that does not share it. Before, the first call's error stopped a run already
    started (a run folder sealed ``interrupted``), its line not saying it was a worker's;
    now one line naming the worker, exit 2, and no run folder."""
    samples = [{"id": f"s{i}", "input": i, "expected": str(i)} for i in range(4)]
    spec = unique_callable_spec(tmp_path / "spec", ANSWER, samples=samples)
    run = tmp_path / "run"
    (tmp_path / "dask").mkdir()
    with started_cluster(tmp_path / "dask", workers_wanted=0) as started:
        hidden = ["bwrap", "--dev-bind", "/", "/", "--tmpfs", str(spec.parent), "--"]
        worker = [sys.executable, "-m", "dask", "worker", started.address]
        loopback = ["--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"]
        with open(tmp_path / "dask" / "worker.log", "ab") as log:
            hider = subprocess.Popen(
                [*hidden, *worker, *loopback], stdout=log, stderr=log, start_new_session=True
            )
        try:
            with distributed.Client(started.address, timeout=30) as client:
                client.wait_for_workers(1, timeout=60)
            proc = run_cli("run", spec, "-o", run, "--cluster", started.address)
        finally:
            os.killpg(hider.pid, signal.SIGKILL)
            hider.wait(timeout=30)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = error_line(proc)
    assert line.startswith("assay: --cluster: 1 of 1 workers cannot build target 't' (tcp://")
    assert "cannot load callable" in line, line
    folder = spec.parent.resolve()
    assert line.endswith(
        f" — run each worker where it sees the spec's folder {folder} at the same path"
    )
    assert not run.exists()


HELD = """
import pathlib
import time

RELEASE = pathlib.Path(%r)


def answer(n):
    while n == 0 and not RELEASE.exists():  # held until the test lets it go
        time.sleep(0.05)
    return str(n)
"""


def test_two_runs_of_one_spec_on_one_worker_keep_their_own_replies(tmp_path: Path) -> None:
    """Two runs of one spec have the same trial ids. Both leave sample s00's call running
    on the one worker (its chunk came back without it) and fetch it by its name there;
    before, both named it alike: one run took the other's reply, and the other stopped on
    an internal error (exit 70)."""
    release = tmp_path / "release"
    samples = [{"id": f"s{i:02d}", "input": i, "expected": str(i)} for i in range(40)]
    spec = unique_callable_spec(tmp_path / "spec", HELD % str(release), samples=samples)
    runs = [tmp_path / "run1", tmp_path / "run2"]
    (tmp_path / "dask").mkdir()
    with started_cluster(tmp_path / "dask", workers_wanted=1) as started:
        procs = [
            start_cli("run", spec, "-o", run, "-j", "64", "--cluster", started.address)
            for run in runs
        ]
        try:
            others = wait_for(lambda: all(len(finished_trials(r)) >= 39 for r in runs), 90)
        finally:
            release.touch()
            done = [proc.communicate(timeout=120) for proc in procs]
    assert others, "the held call held its chunk"
    for proc, (out, err) in zip(procs, done, strict=True):
        assert proc.returncode == 0, out + err
    for run in runs:
        assert verify_run(run).ok
        for trial, events in trial_events(run).items():  # fetched, not retried
            assert [e["type"] for e in events].count("attempt_started") == (1 if trial else 0)


def test_workers_running_other_assay_code_are_refused_before_the_run(tmp_path: Path) -> None:
    """A worker started from another assay (here: a copy with one comment more) would
    fail every pickled call with Dask's own deserialization error, an internal error
    after the run folder was made; the driver compares the code first: one line naming
    the worker, exit 2, nothing written. The scheduler, from this assay, passes."""
    other = other_assay(tmp_path / "other")
    spec = unique_callable_spec(
        tmp_path / "spec", SLOW, samples=[{"id": "s", "input": 1, "expected": "1"}]
    )
    (tmp_path / "dask").mkdir()
    with started_cluster(tmp_path / "dask", 1, env={"PYTHONPATH": str(other)}) as started:
        proc = run_cli("run", spec, "-o", tmp_path / "run", "--cluster", started.address)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = error_line(proc)
    assert line.startswith("assay: --cluster: worker tcp://127.0.0.1:"), line
    assert "runs other assay code" in line and "restart them after updating it" in line, line
    assert not (tmp_path / "run").exists()


def other_assay(folder: Path) -> Path:
    """A copy of this assay with one comment more in *folder* (a ``PYTHONPATH`` entry):
    another assay's code, as a worker started before an update runs."""
    import shutil

    import assay

    package = Path(assay.__file__).parent
    shutil.copytree(package, folder / "assay", ignore=shutil.ignore_patterns("__pycache__"))
    for shared in package.parent.glob("*__mypyc*"):  # a compiled build's shared library
        shutil.copy2(shared, folder / shared.name)
    with open(folder / "assay" / "errors.py", "a") as handle:
        handle.write("# a later edit\n")
    return folder
