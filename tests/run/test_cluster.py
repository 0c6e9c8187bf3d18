"""Target calls on a real Dask cluster (a ``dask scheduler`` and a ``dask worker`` with
two worker processes, on 127.0.0.1), driven through ``assay run --cluster``.

A run on the cluster must conclude what a local run concludes, leave evidence that
verifies, and show the calls really ran on the workers: the callable target records
its process id with ``record_event``, and those events come back to the driver.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from assay.evidence import verify_run
from tests.dask_cluster import DaskCluster, closed_port, started_cluster, worker_pids
from tests.helpers import (
    REPO,
    artifact_bytes,
    error_line,
    finished_trials,
    log_events,
    read_jsonl,
    results_view,
    run_cli,
    start_cli,
    trial_events,
    unique_callable_spec,
    wait_for,
)

distributed = pytest.importorskip("distributed")

TRIALS = 40
TARGET = """
import os

import assay


def answer(n):
    assay.record_event("extra", {"pid": os.getpid(), "n": n})
    return str(n) if n % 4 else "wrong"
"""
DIES_ONCE = """
import os
import pathlib

MARKER = pathlib.Path(%r)


def answer(n):
    if n == 7 and not MARKER.exists():
        MARKER.touch()
        os._exit(1)  # the worker process dies, with its chunk unanswered
    return str(n) if n %% 4 else "wrong"
"""
MODEL_INSIDE = """
import assay


async def answer(text):
    model = assay.get_model("mock/inner", default_output="four")
    return (await model.generate(f"what is {text}?")).completion
"""
SAMPLES = [{"id": f"s{i:02d}", "input": i, "expected": str(i)} for i in range(TRIALS)]


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cluster") / "spec"
    return unique_callable_spec(folder, TARGET, samples=SAMPLES, gate={"minimum": 0.7})


def _extras(run: Path) -> list[dict[str, object]]:
    return [e for e in log_events(run) if e["type"] == "extra"]


@pytest.mark.doc(
    "docs/cli.md",
    "`--cluster ADDRESS` (`run` and `resume`) — run the targets' calls on the "
    "workers of the Dask scheduler at `ADDRESS` (`tcp://host:8786`).",
    "The trials, their evidence and everything after them stay in this process.",
)
def test_a_run_on_the_cluster_concludes_what_a_local_run_does(
    cluster: DaskCluster, spec: Path, tmp_path: Path
) -> None:
    address = cluster.address
    local = run_cli("run", spec, "-o", tmp_path / "local")
    assert local.returncode == 0, local.stderr  # 30/40 right, minimum 0.7: passed
    on_cluster = run_cli("run", spec, "-o", tmp_path / "cluster", "--cluster", address)
    assert on_cluster.returncode == local.returncode, on_cluster.stderr
    assert results_view(tmp_path / "cluster") == results_view(tmp_path / "local")
    assert verify_run(tmp_path / "cluster").ok

    extras = _extras(tmp_path / "cluster")
    assert len(extras) == TRIALS
    pids = {e["data"]["pid"] for e in extras}  # type: ignore[index]
    workers = worker_pids(address)  # not the module's first ones: a nanny restarts them
    assert pids <= workers, (pids, workers)
    # replayed where a local call records it: under the attempt, numbered in its trial
    for trial, events in trial_events(tmp_path / "cluster").items():
        if not trial:
            continue  # the run's own events
        kinds = [e["type"] for e in events]
        attempt = events[kinds.index("attempt_started")]
        extra = events[kinds.index("extra")]
        assert extra["parent"] == attempt["n"]
        assert [e["n"] for e in events] == list(range(1, len(events) + 1))
    local_kinds = {t: [e["type"] for e in ev] for t, ev in trial_events(tmp_path / "local").items()}
    cluster_events = trial_events(tmp_path / "cluster").items()
    assert {t: [e["type"] for e in ev] for t, ev in cluster_events} == local_kinds


@pytest.mark.doc(
    "docs/cli.md",
    "On a cluster the progress line ends with the workers the scheduler has (`, 2 worker(s)`)",
)
def test_the_progress_line_shows_the_clusters_workers(
    cluster: DaskCluster, spec: Path, tmp_path: Path
) -> None:
    address = cluster.address
    proc = run_cli("run", spec, "-o", tmp_path / "run", "--cluster", address, "--progress")
    assert proc.returncode == 0, proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.startswith(f"simple: {TRIALS}/{TRIALS} trials (100%), "), last
    assert last.endswith(", 2 worker(s)"), last
    local = run_cli("run", spec, "-o", tmp_path / "local", "--progress")
    assert "worker" not in local.stderr.splitlines()[-1]


def test_the_worker_count_survives_dasks_refresh_of_the_scheduler_info(
    cluster: DaskCluster,
) -> None:
    """Dask refreshes an asynchronous client's copy of the scheduler's state every few
    seconds without the per-worker part (``workers`` empty): the count comes from
    ``n_workers``, or a call waited on past ``LOST_AFTER`` would read as no worker."""
    import asyncio

    import dask

    from assay.run._cluster_chunks import worker_count

    address = cluster.address

    async def counts() -> tuple[int, int]:
        async with distributed.Client(address, asynchronous=True, timeout=30) as client:
            await client.wait_for_workers(2, timeout=60)
            first = worker_count(client)  # right after wait_for_workers: workers listed
            for _ in range(600):  # until the refresh came: 30 s at most (a failure guard)
                if not client.scheduler_info().get("workers"):
                    break
                await asyncio.sleep(0.05)
            assert not client.scheduler_info().get("workers")  # refreshed, workers unlisted
            return first, worker_count(client)

    with dask.config.set({"distributed.client.scheduler-info-interval": "100ms"}):
        assert asyncio.run(counts()) == (2, 2)


def test_a_model_called_inside_a_target_on_a_worker_is_recorded(
    cluster: DaskCluster, tmp_path: Path
) -> None:
    """The call's sampling event names its prompt and output artifacts: they come back
    from the worker with the event, so verify finds every one of them."""
    address = cluster.address
    samples = [{"id": f"s{i}", "input": f"{i}+{i}", "expected": "four"} for i in range(6)]
    spec = unique_callable_spec(tmp_path / "spec", MODEL_INSIDE, samples=samples)
    local = run_cli("run", spec, "-o", tmp_path / "local")
    on_cluster = run_cli("run", spec, "-o", tmp_path / "cluster", "--cluster", address)
    assert on_cluster.returncode == local.returncode == 0, on_cluster.stderr
    result = verify_run(tmp_path / "cluster")
    assert result.ok, result.problems
    assert results_view(tmp_path / "cluster") == results_view(tmp_path / "local")

    def model_calls(run: Path) -> list[dict[str, object]]:
        events = log_events(run)
        return sorted((e["data"] for e in events if e["data"].get("model")), key=str)

    calls, local_calls = model_calls(tmp_path / "cluster"), model_calls(tmp_path / "local")
    assert len(calls) == len(samples)
    assert [c["prompt"] for c in calls] == [c["prompt"] for c in local_calls]
    assert [c["output"] for c in calls] == [c["output"] for c in local_calls]
    for call in calls:  # the bytes themselves reached the driver's store
        prompt = json.loads(artifact_bytes(tmp_path / "cluster", str(call["prompt"])))
        assert prompt["messages"][0]["content"].startswith("what is ")
        assert artifact_bytes(tmp_path / "cluster", str(call["output"]))


def test_a_program_target_runs_on_the_cluster(cluster: DaskCluster, tmp_path: Path) -> None:
    address = cluster.address
    shipping = tmp_path / "shipping"
    shutil.copytree(REPO / "examples" / "shipping", shipping)
    local = run_cli("run", shipping / "eval.yaml", "-o", tmp_path / "local")
    on_cluster = run_cli(
        "run", shipping / "eval.yaml", "-o", tmp_path / "cluster", "--cluster", address
    )
    assert on_cluster.returncode == local.returncode, on_cluster.stderr
    assert results_view(tmp_path / "cluster") == results_view(tmp_path / "local")
    assert verify_run(tmp_path / "cluster").ok


def test_a_worker_that_dies_mid_chunk_loses_nothing(cluster: DaskCluster, tmp_path: Path) -> None:
    address = cluster.address
    marker = tmp_path / "died"
    spec = unique_callable_spec(tmp_path / "spec", DIES_ONCE % str(marker), samples=SAMPLES)
    marker.touch()  # the local reference run must not die
    reference = run_cli("run", spec, "-o", tmp_path / "local")
    marker.unlink()
    proc = run_cli("run", spec, "-o", tmp_path / "cluster", "--cluster", address)
    assert marker.exists()  # a worker really died
    assert proc.returncode == reference.returncode, proc.stderr
    assert results_view(tmp_path / "cluster") == results_view(tmp_path / "local")
    assert verify_run(tmp_path / "cluster").ok
    # every trial has one attempt: the chunk that died was run again, not retried
    for trial, events in trial_events(tmp_path / "cluster").items():
        assert [e["type"] for e in events].count("attempt_started") == (1 if trial else 0)


SLOW = """
import time


def answer(n):
    time.sleep(0.1)
    return str(n)
"""


def _slow_spec(tmp_path: Path) -> Path:
    samples = [{"id": f"s{i:02d}", "input": i, "expected": str(i)} for i in range(60)]
    return unique_callable_spec(tmp_path / "spec", SLOW, samples=samples)


def _stopped_mid_run(proc: subprocess.Popen[str], run: Path) -> str:
    """The run's one error line, once it has stopped with exit 5, sealed interrupted."""
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 5, out + err
    line = error_line(subprocess.CompletedProcess(proc.args, 5, out, err))
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"
    states = [e["data"]["state"] for e in log_events(run)
              if e["type"] == "trial_finished"]  # fmt: skip
    assert 4 <= len(states) < 60
    assert "blocked" not in states  # the cluster's loss is not the target's failure
    return line


def _finished_on(address: str, run: Path) -> None:
    """``assay resume RUN --cluster ADDRESS`` finishes the run: every sample once."""
    proc = run_cli("resume", run, "--cluster", address)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert verify_run(run).ok
    bundles = read_jsonl(run / "bundles.jsonl")
    assert sorted(b["trial"]["sample_id"] for b in bundles) == [f"s{i:02d}" for i in range(60)]
    assert {b["state"] for b in bundles} == {"completed"}


@pytest.mark.doc(
    "docs/cli.md",
    "Mid-run, a scheduler out of reach or no worker for 10 s stops the run: it is sealed "
    "`interrupted` (exit 5) with one line naming `assay resume RUN --cluster ADDRESS`, "
    "which finishes it.",
)
def test_a_scheduler_that_goes_away_interrupts_the_run_and_resume_finishes_it(
    tmp_path: Path,
) -> None:
    """No trial is blocked by the loss: the calls in flight run again on resume, and no
    sample is counted twice."""
    spec, run = _slow_spec(tmp_path), tmp_path / "run"
    (tmp_path / "dask").mkdir()
    with started_cluster(tmp_path / "dask") as started:
        proc = start_cli("run", spec, "-o", run, "-j", "4", "--cluster", started.address)
        assert wait_for(lambda: len(finished_trials(run)) >= 4, timeout=60)
        os.killpg(started.scheduler.pid, signal.SIGKILL)
        line = _stopped_mid_run(proc, run)
    assert f"lost the Dask cluster at {started.address}" in line
    assert f"assay resume {run} --cluster {started.address}" in line
    (tmp_path / "again").mkdir()
    with started_cluster(tmp_path / "again") as again:
        _finished_on(again.address, run)


@pytest.mark.doc(
    "docs/cli.md",
    "Mid-run, a scheduler out of reach or no worker for 10 s stops the run",
)
def test_a_cluster_left_without_workers_interrupts_the_run(tmp_path: Path) -> None:
    """Every worker gone and none restarted: the run no longer waits silently for one."""
    spec, run = _slow_spec(tmp_path), tmp_path / "run"
    (tmp_path / "dask").mkdir()
    with started_cluster(tmp_path / "dask", workers_wanted=1) as started:
        proc = start_cli("run", spec, "-o", run, "-j", "4", "--cluster", started.address)
        assert wait_for(lambda: len(finished_trials(run)) >= 4, timeout=60)
        assert started.workers is not None
        os.killpg(started.workers.pid, signal.SIGKILL)  # the nanny with its worker
        line = _stopped_mid_run(proc, run)
        assert "no worker has been connected for 10 s" in line
        assert f"assay resume {run} --cluster {started.address}" in line


HELD = """
import pathlib
import time

RELEASE = pathlib.Path(%r)


def answer(n):
    while n == 0 and not RELEASE.exists():  # held until the test lets it go
        time.sleep(0.05)
    return str(n)
"""


def test_no_chunk_waits_for_its_slowest_call(cluster: DaskCluster, tmp_path: Path) -> None:
    """One call of 40 is held until the 39 others are recorded, which only happens if
    its chunk came back without it; it is then fetched from its worker, not retried."""
    address = cluster.address
    release = tmp_path / "release"
    samples = [{"id": f"s{i:02d}", "input": i, "expected": str(i)} for i in range(40)]
    spec = unique_callable_spec(tmp_path / "spec", HELD % str(release), samples=samples)
    run = tmp_path / "run"
    proc = start_cli("run", spec, "-o", run, "-j", "64", "--cluster", address)
    try:
        others_done = wait_for(lambda: len(finished_trials(run)) >= 39, timeout=60)
    finally:
        release.touch()
        out, err = proc.communicate(timeout=120)
    assert others_done, "the held call held its chunk"
    assert proc.returncode == 0, out + err
    assert verify_run(run).ok
    assert {b["state"] for b in read_jsonl(run / "bundles.jsonl")} == {"completed"}
    for trial, events in trial_events(run).items():  # fetched, not retried
        assert [e["type"] for e in events].count("attempt_started") == (1 if trial else 0)


@pytest.mark.doc("docs/cli.md", "No scheduler, or no worker within 10 s: exit 5.")
def test_no_scheduler_is_one_line_and_writes_nothing(spec: Path, tmp_path: Path) -> None:
    with closed_port() as port:
        address = f"tcp://127.0.0.1:{port}"
        proc = run_cli("run", spec, "-o", tmp_path / "run", "--cluster", address)
    assert proc.returncode == 5, proc.stderr
    line = error_line(proc)
    assert address in line and "dask scheduler" in line
    assert not (tmp_path / "run").exists()


def test_a_scheduler_without_a_worker_is_one_line_exit_5_and_writes_nothing(
    spec: Path, tmp_path: Path
) -> None:
    """The scheduler answers, but no worker joins it: the run waits 10 s for one, then
    stops before it writes anything."""
    (tmp_path / "dask").mkdir()
    with started_cluster(tmp_path / "dask", workers_wanted=0) as started:
        proc = run_cli("run", spec, "-o", tmp_path / "run", "--cluster", started.address)
    assert proc.returncode == 5, proc.stderr
    assert error_line(proc) == (
        f"assay: cannot use the Dask cluster at {started.address}: no worker joined within "
        "10 s — start a scheduler and at least one worker (dask scheduler; dask worker "
        "ADDRESS), or check the --cluster address"
    )
    assert not (tmp_path / "run").exists()


def test_run_and_resume_both_take_the_option() -> None:
    for command in ("run", "resume"):
        assert "--cluster ADDRESS" in run_cli(command, "--help").stdout
