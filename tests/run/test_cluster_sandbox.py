"""A Python task with sandboxes on a real Dask cluster (``dask scheduler`` and ``dask
worker --nworkers 2`` started as programs, on 127.0.0.1), driven through ``assay run
file.py@task --cluster``.

Each attempt's sandbox is made on the worker that runs it, with the sample's files and
setup; the task's tool runs a command in it and its scorer reads a file the tool wrote
there. The sandbox is removed on that worker before the reply comes back. The workers
make their sandboxes under a folder of the test's (their ``TMPDIR``), which is checked
empty afterwards. The evidence equals a local run's, event for event.
"""

from __future__ import annotations

import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.evidence import verify_run
from tests.dask_cluster import DaskCluster, interrupted_then_resumed, started_cluster, worker_pids
from tests.helpers import (
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
from assay import Sample, Score, Task, accuracy, generate, scorer, solver, task, tool, use_tools
from assay.model import GenerateConfig, MockAPI, ModelOutput, ToolCall, assistant_message
from assay.model import modelapi
from assay.sandbox import sandbox
from assay.target import InfrastructureError

MARKS = pathlib.Path(%r)  # "dies" absent: the worker answering s03 dies once, mid-attempt
# "slow" present: each attempt takes 0.2 s on its worker
# "hang" present: s05 hangs on its worker, its pid in "hung"
# "flaky" present: s02's first attempt fails as infrastructure, its sandbox up
# "erring" present: s04's first attempt raises (an error, re-queued with --retry-on-error)


@tool
def copy_number() -> str:
    '''Copy the sample's number into answer.txt in the sandbox and say it.'''

    async def execute() -> str:
        assay.record_event("where", {"pid": os.getpid(), "part": "tool"})
        copy = "cat ready.txt n.txt | tail -1 | tee answer.txt"
        result = await sandbox().exec(["bash", "-c", copy])
        return result.stdout.strip()

    return execute


def answer(messages):
    last = messages[-1]
    if last.role == "tool":
        return last.content
    call = ToolCall("c1", "copy_number", {})
    return ModelOutput("copier/v1", assistant_message("", [call]), "tool_calls")


@modelapi("copier")
def copier(name: str, config: GenerateConfig, **args):
    return MockAPI(name, config, outputs=answer)


@solver
def where():
    async def solve(state, generate):
        assay.record_event("where", {"pid": os.getpid(), "part": "solver"})
        folder = sandbox().inner.folder  # noted where no event records it
        with open(MARKS / f"folders-{os.getpid()}", "a") as folders:
            folders.write(folder + "\\n")
        up = len(list(pathlib.Path(folder).parent.glob("assay-sandbox-*")))
        with open(MARKS / "up", "a") as seen:  # how many sandboxes are up now
            seen.write(f"{up}\\n")
        for mark, sample in (("flaky", "s02"), ("erring", "s04")):
            if state.sample_id == sample and (MARKS / mark).exists():
                (MARKS / mark).unlink()
                if mark == "flaky":
                    raise InfrastructureError("flaky", "once")
                raise RuntimeError("once")
        if state.sample_id == "s03" and not (MARKS / "dies").exists():
            (MARKS / "dies").write_text(str(os.getpid()))
            os._exit(1)  # the worker process dies with its attempts' sandboxes up
        if (MARKS / "slow").exists():
            await anyio.sleep(0.2)
        if state.sample_id == "s05" and (MARKS / "hang").exists():
            (MARKS / "hung").write_text(str(os.getpid()))
            await anyio.sleep(3600)
        return await generate(state)
    return solve


@scorer(metrics=[accuracy()])
def answer_file():
    async def score(state, target):
        assay.record_event("where", {"pid": os.getpid(), "part": "scorer"})
        written = await sandbox().read_file("answer.txt")
        right = written.strip() == target.text == state.output.completion
        return Score(value=1.0 if right else 0.0)
    return score


@task
def copying(provider="local"):
    return Task(
        dataset=[
            Sample(input="copy it", target=str(i), id=f"s{i:02d}", files={"n.txt": str(i)},
                   setup="echo ready > ready.txt")
            for i in range(8)
        ],
        solver=[use_tools(copy_number()), where(), generate()],
        scorer=answer_file(),
        model="copier/v1",
        sandbox=provider,
    )
"""


@pytest.fixture(scope="module")
def sandboxes() -> Iterator[Path]:
    """The folder the workers make their sandboxes in (their ``TMPDIR``): a folder of
    its own, which bwrap's sandbox user (uid 65534) can enter, unlike pytest's."""
    folder = Path(tempfile.mkdtemp(prefix="assay-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, sandboxes: Path) -> Iterator[DaskCluster]:
    """Two workers whose sandboxes go under *sandboxes*."""
    env = {"TMPDIR": str(sandboxes)}
    with started_cluster(tmp_path_factory.mktemp("dask"), env=env) as started:
        yield started


def _task(folder: Path) -> str:
    folder.mkdir(parents=True)
    (folder / "dies").touch()
    path = write_module(folder, f"copying_{folder.parent.name}", TASK % str(folder))
    return f"{path}@copying"


def _left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("assay-sandbox-*"))


def _comparable(run: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Each trial's events as (type, n, parent, data), without what two runs may differ
    in: timings, process ids, the digests that cover timestamps (a ``match``'s)."""
    view = {}
    for trial, events in trial_events(run).items():
        if not trial:
            continue
        rows = []
        for event in events:
            data = {k: v for k, v in event["data"].items() if k not in ("pid", "seconds")}
            if event["type"] == "match":
                data.pop("bundle"), data.pop("record")
            rows.append((event["type"], event["n"], event["parent"], data))
        view[trial] = rows
    return view


def _where(run: Path) -> dict[str, set[int]]:
    seen: dict[str, set[int]] = {"solver": set(), "tool": set(), "scorer": set()}
    for event in log_events(run):
        if event["type"] in ("where", "score_where"):
            seen[event["data"]["part"]].add(event["data"]["pid"])
    return seen


@pytest.mark.parametrize("provider", ["local", "bwrap"])
def test_a_sandboxed_task_on_the_cluster_leaves_a_local_runs_evidence(
    cluster: DaskCluster, sandboxes: Path, tmp_path: Path, provider: str
) -> None:
    task = _task(tmp_path / "task")
    given = ("-T", f"provider={provider}")
    local = run_cli("run", task, *given, "-o", tmp_path / "local")
    assert local.returncode == 0, local.stderr
    cluster_run = ("-o", tmp_path / "cluster", "--cluster", cluster.address)
    on_cluster = run_cli("run", task, *given, *cluster_run)
    assert on_cluster.returncode == 0, on_cluster.stderr
    assert results_view(tmp_path / "cluster") == results_view(tmp_path / "local")
    scores = [r["value"] for r in read_jsonl(tmp_path / "cluster" / "scores.jsonl")]
    assert scores == [1.0] * 8  # the scorer read the file the tool wrote in the sandbox
    assert _comparable(tmp_path / "cluster") == _comparable(tmp_path / "local")
    types = {e["type"] for e in log_events(tmp_path / "cluster")}
    assert {"sandbox_create", "sandbox_setup", "score_sandbox_read"} <= types
    assert "score_sandbox_cleanup" in types
    result = verify_run(tmp_path / "cluster")
    assert result.ok, result.problems

    where = _where(tmp_path / "cluster")
    workers = worker_pids(cluster.address)
    for part in ("solver", "tool", "scorer"):
        assert where[part] and where[part] <= workers, (part, where, workers)
    assert _left(sandboxes) == []

    rescored = run_cli("score", tmp_path / "cluster")
    assert rescored.returncode == 0, rescored.stderr
    assert "all equal the recorded ones" in rescored.stdout


def test_attempts_again_record_their_sandboxes_removal_as_a_local_run_does(
    cluster: DaskCluster, sandboxes: Path, tmp_path: Path
) -> None:
    """s02's first attempt fails as infrastructure and is retried; s04's raises and is
    re-queued (``--retry-on-error``). Each first attempt's sandbox was removed on its
    worker; the driver records that removal where a local run removes it: as the
    retry starts, and as the trial is re-queued."""
    task = _task(tmp_path / "task")
    runs = {"local": (), "cluster": ("--cluster", cluster.address)}
    for name, where in runs.items():
        (tmp_path / "task" / "flaky").touch()
        (tmp_path / "task" / "erring").touch()
        proc = run_cli("run", task, "--retry-on-error", "1", "-o", tmp_path / name, *where)
        assert proc.returncode == 0, proc.stderr
        assert not (tmp_path / "task" / "flaky").exists()
        assert not (tmp_path / "task" / "erring").exists()
    assert results_view(tmp_path / "cluster") == results_view(tmp_path / "local")
    assert _comparable(tmp_path / "cluster") == _comparable(tmp_path / "local")
    kinds = [e["type"] for e in log_events(tmp_path / "cluster")]
    assert kinds.count("sandbox_cleanup") == 2  # the two first attempts'
    assert kinds.count("score_sandbox_cleanup") == 8
    for name in runs:  # the re-queued trial's removal has a parent (it had none locally)
        result = verify_run(tmp_path / name)
        assert result.ok, (name, result.problems)
    assert _left(sandboxes) == []


def test_sandboxes_kept_for_debugging_stay_on_their_workers(
    cluster: DaskCluster, sandboxes: Path, tmp_path: Path
) -> None:
    """``--no-sandbox-cleanup``: each worker keeps the sandboxes it made; the driver
    says where each is (a folder on that worker's machine), as a local run does."""
    task = _task(tmp_path / "task")
    cluster_run = ("-o", tmp_path / "cluster", "--cluster", cluster.address)
    proc = run_cli("run", task, "--no-sandbox-cleanup", *cluster_run)
    assert proc.returncode == 0, proc.stderr
    said = [line.rsplit(" ", 1)[1] for line in proc.stderr.splitlines() if " kept at " in line]
    kept = [
        e["data"]["kept"]
        for e in log_events(tmp_path / "cluster")
        if e["type"] == "score_sandbox_cleanup"
    ]
    assert len(kept) == 8 and sorted(said) == sorted(kept)
    assert sorted(Path(folder).parent for folder in kept) == [sandboxes] * 8
    assert _left(sandboxes) == sorted(Path(folder).name for folder in kept)
    for folder in kept:
        shutil.rmtree(folder)


def test_max_sandboxes_holds_over_the_whole_cluster(
    cluster: DaskCluster, sandboxes: Path, tmp_path: Path
) -> None:
    """``--max-sandboxes 1`` on two workers: the driver holds the slot while an
    attempt is out, so one sandbox at most is up on the cluster (each attempt counts
    the folders up beside its own, and waits a while before going on)."""
    task = _task(tmp_path / "task")
    (tmp_path / "task" / "slow").touch()
    cluster_run = ("-o", tmp_path / "cluster", "--cluster", cluster.address)
    proc = run_cli("run", task, "--max-sandboxes", "1", *cluster_run)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "task" / "up").read_text().split() == ["1"] * 8
    assert len(list((tmp_path / "task").glob("folders-*"))) == 2  # both workers ran some
    (tmp_path / "task" / "up").unlink()
    proc = run_cli("run", task, "-o", tmp_path / "uncapped", "--cluster", cluster.address)
    assert proc.returncode == 0, proc.stderr
    assert max(map(int, (tmp_path / "task" / "up").read_text().split())) > 1  # can fail


def test_a_worker_lost_with_a_sandbox_up_loses_nothing_and_leaks_nothing_elsewhere(
    cluster: DaskCluster, sandboxes: Path, tmp_path: Path
) -> None:
    """The worker answering s03 dies with its attempts' sandboxes up: they run again
    on another worker, each counted once; the sandbox folders left are the dead
    worker's (its process died under them), none of the other workers'."""
    task = _task(tmp_path / "task")
    reference = run_cli("run", task, "-o", tmp_path / "local")
    assert reference.returncode == 0, reference.stderr
    (tmp_path / "task" / "dies").unlink()
    proc = run_cli("run", task, "-o", tmp_path / "cluster", "--cluster", cluster.address)
    assert proc.returncode == 0, proc.stderr
    dead = (tmp_path / "task" / "dies").read_text()  # a worker really died
    assert results_view(tmp_path / "cluster") == results_view(tmp_path / "local")
    assert _comparable(tmp_path / "cluster") == _comparable(tmp_path / "local")
    assert verify_run(tmp_path / "cluster").ok
    for trial, events in trial_events(tmp_path / "cluster").items():
        assert [e["type"] for e in events].count("attempt_started") == (1 if trial else 0)
    made = {
        path.name.removeprefix("folders-"): {Path(f).name for f in path.read_text().split()}
        for path in (tmp_path / "task").glob("folders-*")
    }
    left = _left(sandboxes)
    for folder in left:  # the next test's check starts clean
        shutil.rmtree(sandboxes / folder)
    # the dead worker's attempts that had reached its solver noted their folders (the
    # others were still being set up); every attempt on the others did
    survivors = set().union(*(names for pid, names in made.items() if pid != dead))
    assert survivors and made[dead] <= set(left), (left, made)
    assert survivors.isdisjoint(left), (left, made)


def test_an_interrupted_sandboxed_run_is_resumed_on_the_cluster(
    cluster: DaskCluster, sandboxes: Path, tmp_path: Path
) -> None:
    """Its finished trials are judged again in the driver from what their scorers did
    in the sandbox (logged); the rest run on the workers; the run equals a local one."""
    interrupted_then_resumed(_task(tmp_path / "task"), tmp_path, cluster.address, at_least=2)
    assert wait_for(lambda: _left(sandboxes) == [], timeout=30)  # the interrupted ones too


def test_a_worker_told_to_stop_mid_trial_removes_its_sandboxes(tmp_path: Path) -> None:
    """``dask worker`` stopped (SIGTERM, as a service manager stops it) while sample s05
    hangs on one of its workers with its sandbox up: the worker cancels the trial and
    removes its sandbox before its process exits."""
    folder = Path(tempfile.mkdtemp(prefix="assay-test-"))
    folder.chmod(0o755)
    task = _task(tmp_path / "task")
    (tmp_path / "task" / "hang").touch()
    (tmp_path / "dask").mkdir()
    try:
        with started_cluster(tmp_path / "dask", env={"TMPDIR": str(folder)}) as cluster:
            assert cluster.workers is not None
            run = tmp_path / "run"
            proc = start_cli("run", task, "-o", run, "--cluster", cluster.address)
            try:
                assert wait_for(lambda: (tmp_path / "task" / "hung").exists(), timeout=60)
                assert wait_for(lambda: len(finished_trials(run)) == 7, timeout=60)
                assert len(_left(folder)) == 1  # the hung trial's sandbox is up
                cluster.workers.send_signal(signal.SIGTERM)
                cluster.workers.wait(timeout=120)
                assert _left(folder) == []
            finally:
                proc.kill()
                proc.communicate(timeout=60)
    finally:
        shutil.rmtree(folder)
