"""Python tasks on a real Dask cluster (``dask scheduler`` and ``dask worker`` started as
programs, on 127.0.0.1), driven through ``assay run file.py@task --cluster``.

Each trial's solver, its model calls and the task's scorers (a model-graded one too)
run on a worker: the task's own solver and scorer record their process id with
``record_event``, and those events come back to the driver. The evidence equals a local
run's, event for event, and ``verify`` and ``assay score`` accept it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.errors import ConfigError
from assay.evidence import verify_run
from tests.dask_cluster import (
    DaskCluster,
    closed_port,
    interrupted_then_resumed,
    started_cluster,
    worker_pids,
)
from tests.helpers import (
    error_line,
    finished_trials,
    log_events,
    read_jsonl,
    results_view,
    run_cli,
    start_cli,
    trial_events,
    wait_for,
    write_module,
)

distributed = pytest.importorskip("distributed")

TASK = """
import os
import pathlib

import anyio

import assay
from assay import Sample, Score, Task, accuracy, generate, match, model_graded_qa
from assay import scorer, solver, task, tool, use_tools
from assay.model import GenerateConfig, MockAPI, ModelOutput, ToolCall, assistant_message
from assay.model import modelapi

DIES = pathlib.Path(%r)  # absent: the worker answering sample s07 dies, once
SLOW = DIES.with_name("slow")  # present: each trial takes 0.2 s on its worker
HUNG = DIES.with_name("hung")  # absent: sample s05 hangs, once, its worker's pid in it
LONG = DIES.with_name("long")  # present: sample s03 takes 13 s on its worker


@tool
def echo(n: int) -> str:
    '''Say a number back.

    Args:
        n: the number.
    '''
    assay.record_event("where", {"pid": os.getpid(), "part": "tool"})
    return str(n)


def answer(messages):
    last = messages[-1]
    if last.role == "tool":
        return last.content
    if "even" not in last.content:
        return "no idea"
    call = ToolCall("call_1", "echo", {"n": int(last.content.split()[-1])})
    return ModelOutput("answerer/v1", assistant_message("", [call]), "tool_calls")


def grade(messages):
    return "GRADE: C" if "[Submission]: no idea" not in messages[-1].content else "GRADE: I"


@modelapi("answerer")
def answerer(name: str, config: GenerateConfig, **args):
    return MockAPI(name, config, outputs=answer)


@modelapi("grader")
def grader(name: str, config: GenerateConfig, **args):
    return MockAPI(name, config, outputs=grade)


@solver
def where(hook=None):
    async def solve(state, generate):
        if state.sample_id == "s07" and not DIES.exists():
            DIES.touch()
            os._exit(1)  # the worker process dies mid-trial
        if state.sample_id == "s05" and not HUNG.exists():
            HUNG.write_text(str(os.getpid()))
            await anyio.sleep(3600)  # until the test kills this worker
        assay.record_event("where", {"pid": os.getpid(), "part": "solver"})
        if SLOW.exists():
            await anyio.sleep(0.2)
        if state.sample_id == "s03" and LONG.exists():
            await anyio.sleep(13)
        return await generate(state)
    return solve


@scorer(metrics=[accuracy()])
def noted():
    async def score(state, target):
        assay.record_event("where", {"pid": os.getpid(), "part": "scorer"})
        if os.environ.get("HOSTILE_WORKER"):  # a worker that forges a pass
            return Score(value=1.0)
        return Score(value=1.0 if state.output.completion == target.text else 0.0)
    return score


@task
def numbers(hook=None, sandboxed=False):
    return Task(
        dataset=[
            Sample(input=f"say {'even' if i %% 3 else 'odd'} {i}", target=str(i), id=f"s{i:02d}")
            for i in range(12)
        ],
        solver=[use_tools(echo), where(hook=hook), generate()],
        scorer=[match(), noted(), model_graded_qa(model="grader/v1")],
        model="answerer/v1",
        sandbox="local" if sandboxed else None,
    )
"""


def _task(folder: Path) -> str:
    """The task file, in a module of its own, with its ``died`` and ``hung`` markers
    made (remove one and the worker answering sample s07 dies, once, or sample s05
    hangs, once)."""
    path = write_module(folder, f"numbers_{folder.name}", TASK % str(folder / "died"))
    (folder / "died").touch()
    (folder / "hung").touch()
    return f"{path}@numbers"


def _comparable(run: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Each trial's events as (type, n, parent, data), without what two runs may differ
    in: the digests that cover timestamps (a ``match``'s), and process ids."""
    view = {}
    for trial, events in trial_events(run).items():
        if not trial:
            continue
        rows = []
        for event in events:
            data = dict(event["data"])
            data.pop("pid", None)
            if event["type"] == "match":
                data.pop("bundle"), data.pop("record")
            rows.append((event["type"], event["n"], event["parent"], data))
        view[trial] = rows
    return view


def _scores(run: Path) -> dict[str, tuple[str, float | None]]:
    return {r["score_id"]: (r["status"], r["value"]) for r in read_jsonl(run / "scores.jsonl")}


def _where(run: Path) -> dict[str, set[int]]:
    """The processes the task's solver, tool and scorer ran in."""
    seen: dict[str, set[int]] = {"solver": set(), "tool": set(), "scorer": set()}
    for event in log_events(run):
        if event["type"] in ("where", "score_where"):
            seen[event["data"]["part"]].add(event["data"]["pid"])
    return seen


@pytest.mark.doc(
    "docs/cli.md",
    "For a Python task, each trial's solver, model calls, tools and scorers run on a worker, "
    "which rebuilds the task from its file as `resume` does; the evidence is a local run's.",
)
def test_a_python_task_on_the_cluster_leaves_a_local_runs_evidence(
    cluster: DaskCluster, tmp_path: Path
) -> None:
    task = _task(tmp_path / "task")
    local = run_cli("run", task, "-o", tmp_path / "local")
    assert local.returncode == 0, local.stderr
    on_cluster = run_cli("run", task, "-o", tmp_path / "cluster", "--cluster", cluster.address)
    assert on_cluster.returncode == 0, on_cluster.stderr
    assert results_view(tmp_path / "cluster") == results_view(tmp_path / "local")
    assert _comparable(tmp_path / "cluster") == _comparable(tmp_path / "local")
    result = verify_run(tmp_path / "cluster")
    assert result.ok, result.problems

    where = _where(tmp_path / "cluster")
    workers = worker_pids(cluster.address)
    assert where["solver"] and where["solver"] <= workers, (where, workers)
    assert where["tool"] and where["tool"] <= workers, (where, workers)
    assert where["scorer"] and where["scorer"] <= workers, (where, workers)
    assert _where(tmp_path / "local")["tool"]  # the task really calls its tool

    rescored = run_cli("score", tmp_path / "cluster")
    assert rescored.returncode == 0, rescored.stderr
    assert "all equal the recorded ones" in rescored.stdout


def test_a_worker_that_dies_mid_trial_loses_nothing(cluster: DaskCluster, tmp_path: Path) -> None:
    task = _task(tmp_path / "task")  # its marker made: the local reference run must not die
    reference = run_cli("run", task, "-o", tmp_path / "local")
    assert reference.returncode == 0, reference.stderr
    (tmp_path / "task" / "died").unlink()
    proc = run_cli("run", task, "-o", tmp_path / "cluster", "--cluster", cluster.address)
    assert (tmp_path / "task" / "died").exists()  # a worker really died
    assert proc.returncode == 0, proc.stderr
    assert results_view(tmp_path / "cluster") == results_view(tmp_path / "local")
    assert _comparable(tmp_path / "cluster") == _comparable(tmp_path / "local")
    assert verify_run(tmp_path / "cluster").ok
    # every trial has one attempt: the chunk that died was run again, not retried
    for trial, events in trial_events(tmp_path / "cluster").items():
        assert [e["type"] for e in events].count("attempt_started") == (1 if trial else 0)


def test_an_interrupted_run_is_resumed_on_the_cluster(cluster: DaskCluster, tmp_path: Path) -> None:
    """Its finished trials are judged again in the driver (from their logged grader
    calls), the rest run on the workers; the run equals a local one."""
    interrupted_then_resumed(_task(tmp_path / "task"), tmp_path, cluster.address, at_least=3)


def test_a_worker_lost_under_a_long_trial_has_it_retried_at_once(
    cluster: DaskCluster, tmp_path: Path
) -> None:
    """Sample s05 hangs on its worker after the rest of its chunk came back; the worker
    is killed. The driver sees it leave the cluster and retries the trial elsewhere,
    long before the hour a trial without a time limit may take."""
    task = _task(tmp_path / "task")
    reference = run_cli("run", task, "-o", tmp_path / "local")
    assert reference.returncode == 0, reference.stderr
    hung = tmp_path / "task" / "hung"
    hung.unlink()
    run = tmp_path / "cluster"
    proc = start_cli("run", task, "-o", run, "--cluster", cluster.address)
    try:
        assert wait_for(lambda: hung.exists() and hung.read_text() != "", timeout=60)
        assert wait_for(lambda: len(finished_trials(run)) == 11, timeout=60)  # chunk is back
        os.kill(int(hung.read_text()), signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0, out + err
    attempts = {
        e["data"]["status"]
        for e in log_events(run)
        if e["type"] == "attempt_finished" and e["data"]["attempt"] == 1
    }
    assert "infra_failed" in attempts  # the straggler's worker was lost, not its chunk
    assert _scores(run) == _scores(tmp_path / "local")
    bundles = read_jsonl(run / "bundles.jsonl")
    assert sorted(b["trial"]["sample_id"] for b in bundles) == [f"s{i:02d}" for i in range(12)]
    result = verify_run(run)
    assert result.ok, result.problems


def test_a_trial_longer_than_the_cluster_loss_timeout_is_waited_for(
    cluster: DaskCluster, tmp_path: Path
) -> None:
    """A trial of 13 s (more than the 10 s without a worker that stop a run): the
    driver, which hears only worker counts from the scheduler between calls, does not
    take the wait for a lost cluster."""
    task = _task(tmp_path / "task")
    reference = run_cli("run", task, "-o", tmp_path / "local")
    assert reference.returncode == 0, reference.stderr
    (tmp_path / "task" / "long").touch()
    proc = run_cli("run", task, "-o", tmp_path / "cluster", "--cluster", cluster.address)
    assert proc.returncode == 0, proc.stderr
    # s03 came back on its own, after its chunk: its solver's and scorers' events too
    assert _comparable(tmp_path / "cluster") == _comparable(tmp_path / "local")
    assert verify_run(tmp_path / "cluster").ok


def test_a_scheduler_lost_mid_run_stops_it_and_resume_finishes_it(tmp_path: Path) -> None:
    """As for a YAML spec: sealed ``interrupted``, exit 5, one line naming the resume,
    which finishes the run on a cluster started again; no sample counted twice."""
    task = _task(tmp_path / "task")
    reference = run_cli("run", task, "-o", tmp_path / "local")
    assert reference.returncode == 0, reference.stderr
    (tmp_path / "task" / "slow").touch()
    run = tmp_path / "cluster"
    (tmp_path / "dask").mkdir()
    with started_cluster(tmp_path / "dask") as started:
        proc = start_cli("run", task, "-o", run, "-j", "1", "--cluster", started.address)
        assert wait_for(lambda: len(finished_trials(run)) >= 3, timeout=60)
        os.killpg(started.scheduler.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 5, out + err
    line = error_line(subprocess.CompletedProcess(proc.args, 5, out, err))
    assert f"assay resume {run} --cluster {started.address}" in line
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"
    assert len(finished_trials(run)) < 12
    (tmp_path / "again").mkdir()
    with started_cluster(tmp_path / "again") as again:
        resumed = run_cli("resume", run, "--cluster", again.address)
    assert resumed.returncode == 0, resumed.stderr
    assert results_view(run) == results_view(tmp_path / "local")
    assert verify_run(run).ok


def test_a_task_made_in_memory_is_refused_as_resume_refuses_it(
    cluster: DaskCluster, tmp_path: Path
) -> None:
    from assay import Sample, Task, generate, match
    from assay.pipeline import eval as run_eval

    task = Task(dataset=[Sample(input="hi", target="hi")], solver=generate(), scorer=match())
    with pytest.raises(ConfigError) as refused:
        run_eval(task, "mock/echo", cluster=cluster.address, log_dir=tmp_path / "runs")
    assert refused.value.exit_code == 2
    assert not (tmp_path / "runs").exists()  # refused before any run
    assert refused.value.one_line() == (
        "the scorers of 'task' were defined in memory, not in a task file, so they cannot be "
        "rebuilt from the run — define the task with @task in a .py file and run it as "
        "file.py@name to re-score later"
    )


def test_a_task_argument_that_is_not_data_is_refused(cluster: DaskCluster, tmp_path: Path) -> None:
    from assay.pipeline import eval as run_eval

    with pytest.raises(ConfigError) as refused:
        run_eval(
            _task(tmp_path / "task"), task_args={"hook": lambda: None}, cluster=cluster.address
        )
    assert refused.value.exit_code == 2
    assert refused.value.one_line() == (
        "the task 'numbers' was made with -T arguments that are not data (hook), so it "
        "cannot be made again from its file (to resume, or on a cluster's workers) — pass "
        "task arguments that are plain values (-T key=value)"
    )


def test_cache_on_workers_that_share_its_folder(cluster: DaskCluster, tmp_path: Path) -> None:
    task = _task(tmp_path / "task")
    env = {"ASSAY_CACHE_DIR": str(tmp_path / "cache")}
    first = run_cli(
        "run", task, "-o", tmp_path / "first", "--cache", "--cluster", cluster.address, env=env
    )
    assert first.returncode == 0, first.stderr
    again = run_cli(
        "run", task, "-o", tmp_path / "again", "--cache", "--cluster", cluster.address, env=env
    )
    assert again.returncode == 0, again.stderr
    assert "12 calls (12 cached)" in again.stdout, again.stdout
    assert _scores(tmp_path / "again") == _scores(tmp_path / "first")


@pytest.mark.doc(
    "docs/cli.md",
    "A task that `resume` could not rebuild (made in memory, `-T` arguments that are not "
    "data) is refused, and so is `--cache` unless every worker sees the cache folder (exit 2).",
)
def test_cache_on_workers_that_do_not_see_its_folder_is_refused(tmp_path: Path) -> None:
    """The workers run under bubblewrap with an empty folder over the cache's: the same
    path, another folder, as on a machine that does not share it."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (tmp_path / "dask").mkdir()
    with started_cluster(tmp_path / "dask", workers_wanted=0) as started:
        hidden = ["bwrap", "--dev-bind", "/", "/", "--tmpfs", str(cache), "--"]
        worker = [sys.executable, "-m", "dask", "worker", started.address]
        loopback = ["--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"]
        log = tmp_path / "dask" / "worker.log"
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                [*hidden, *worker, *loopback], stdout=out, stderr=out, start_new_session=True
            )
        try:
            with distributed.Client(started.address, timeout=30) as client:
                client.wait_for_workers(1, timeout=60)
            env = {"ASSAY_CACHE_DIR": str(cache)}
            task = _task(tmp_path / "task")
            proc_run = run_cli(
                "run", task, "-o", tmp_path / "run", "--cache", "--cluster", started.address,
                env=env,
            )  # fmt: skip
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    proc = proc_run
    assert proc.returncode == 2, proc.stderr
    assert error_line(proc) == (
        f"assay: --cache: the workers do not share the cache folder {cache} (1 of 1 cannot "
        "see it); put it on a shared file system (ASSAY_CACHE_DIR) or run without --cache "
        "— see 'assay run --help' (or 'assay resume --help') for the accepted values"
    )
    assert not (tmp_path / "run").exists()


def test_an_address_that_is_not_one_or_has_no_scheduler_stops_the_eval(tmp_path: Path) -> None:
    """As for a YAML spec: exit 2 for an address that is not one, exit 5 for one with no
    scheduler, one line each, and no run folder."""
    task = _task(tmp_path / "task")
    proc = run_cli("run", task, "-o", tmp_path / "run", "--cluster", "nonsense")
    assert proc.returncode == 2, proc.stderr
    assert error_line(proc).startswith("assay: --cluster: 'nonsense' is not a scheduler's address")
    with closed_port() as port:
        address = f"tcp://127.0.0.1:{port}"
        proc = run_cli("run", task, "-o", tmp_path / "run", "--cluster", address)
    assert proc.returncode == 5, proc.stderr
    assert error_line(proc).startswith(f"assay: cannot use the Dask cluster at {address}: ")
    assert not (tmp_path / "run").exists()


def test_a_sandboxed_run_interrupted_locally_is_finished_on_the_cluster(
    cluster: DaskCluster, tmp_path: Path
) -> None:
    """A task with sandboxes is not refused: a run started locally and interrupted is
    resumed on the cluster, each remaining trial's sandbox made on its worker; the
    run equals a local one and verifies (tests/run/test_cluster_sandbox.py has more)."""
    task = _task(tmp_path / "task")
    sandboxed = ("-T", "sandboxed=1")
    reference = run_cli("run", task, *sandboxed, "-o", tmp_path / "local")
    assert reference.returncode == 0, reference.stderr
    (tmp_path / "task" / "slow").touch()
    run = tmp_path / "run"
    started = start_cli("run", task, *sandboxed, "-o", run, "-j", "2")
    assert wait_for(lambda: len(finished_trials(run)) >= 3, timeout=60)
    started.send_signal(signal.SIGINT)
    started.communicate(timeout=60)
    assert started.returncode == 130
    assert len(finished_trials(run)) < 12
    resumed = run_cli("resume", run, "--cluster", cluster.address)
    assert resumed.returncode == 0, resumed.stderr
    assert results_view(run) == results_view(tmp_path / "local")
    where = _where(run)
    assert where["solver"] & worker_pids(cluster.address), where  # some ran on the workers
    result = verify_run(run)
    assert result.ok, result.problems


def test_a_hostile_worker_forges_a_pass_that_verify_accepts_and_score_refuses(
    tmp_path: Path,
) -> None:
    """Workers whose scorer says 1.0 whatever the answer: the driver records what they
    return, so the run verifies with the forged verdicts; ``assay score``, which judges
    the recorded answers again in this process, finds them and exits 4."""
    task = _task(tmp_path / "task")
    local = run_cli("run", task, "-o", tmp_path / "local")
    assert local.returncode == 0, local.stderr
    assert 0.0 in _noted(tmp_path / "local")  # the task's scorer fails some answers
    (tmp_path / "dask").mkdir()
    with started_cluster(tmp_path / "dask", env={"HOSTILE_WORKER": "1"}) as hostile:
        run = tmp_path / "cluster"
        proc = run_cli("run", task, "-o", run, "--cluster", hostile.address)
    assert proc.returncode == 0, proc.stderr
    assert _noted(run) == [1.0] * 12  # every one passed by the workers
    result = verify_run(run)
    assert result.ok, result.problems  # the evidence is intact: it is what was returned
    rescored = run_cli("score", run)
    assert rescored.returncode == 4, rescored.stdout + rescored.stderr
    assert "differ from the recorded ones" in rescored.stdout, rescored.stdout


def _noted(run: Path) -> list[float]:
    """The values the task's own scorer gave, trial by trial."""
    rows = read_jsonl(run / "scores.jsonl")
    return [row["value"] for row in rows if row["scorer_id"] == "noted"]
