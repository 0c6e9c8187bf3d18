"""``eval_set`` and ``eval_retry``, written as an Inspect user writes them: a set of tasks
× models into one log folder, run again until every unit is complete.

Each test goes through the real pipeline with assay's ``mock`` provider (and, for an
interrupted run, the real CLI in a subprocess stopped with SIGINT) and reads the run
directories back with ``verify_run``.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from assay import Sample, Task, TaskState, eval_retry, eval_set, includes
from assay.errors import ConfigError
from assay.evidence import read_manifest, verify_run
from assay.solver import Generate
from tests.helpers import read_jsonl, run_cli, run_dirs, start_cli, wait_for, write_module

EXIT_INTERRUPTED = 130
EXIT_STOPPED = 5  # docs/cli.md: "a Python task's errors past `fail_on_error`"


def flaky_task(calls: list[str], failing: set[str]) -> Task:
    """Three samples; the first time a sample in *failing* is seen, its solver raises (a
    transient error), later it answers. *calls* records each sample the solver saw."""

    async def flaky(state: TaskState, generate: Generate) -> TaskState:
        calls.append(str(state.sample_id))
        if state.sample_id in failing:
            failing.discard(str(state.sample_id))
            raise RuntimeError("transient")
        return await generate(state)

    return Task(
        dataset=[Sample(input=f"q {i}", target="Default", id=f"s{i}") for i in range(3)],
        solver=[flaky],
        scorer=includes(),
        name="alpha",
    )


def test_a_set_is_retried_until_complete_and_a_second_call_runs_nothing(tmp_path: Path) -> None:
    calls: list[str] = []
    task = flaky_task(calls, failing={"s1"})

    success, logs = eval_set(task, log_dir=tmp_path, model=["mock/one", "mock/two"])

    assert success is True
    assert [(log.task, log.model, log.status) for log in logs] == [
        ("alpha", "mock/one", "success"),
        ("alpha", "mock/two", "success"),
    ]
    assert [log.attempts for log in logs] == [2, 1]  # mock/one's first attempt errored
    # the errored attempt stays in the folder as its record; the unit's run is a new one
    assert len(run_dirs(tmp_path)) == 3
    for log in logs:
        assert log.path is not None and log.path.parent == tmp_path
        assert read_manifest(log.path)["status"] == "complete"
        assert verify_run(log.path).ok, verify_run(log.path).problems
    assert logs[0].results is not None  # a unit that ran now reads the same way
    assert logs[0].results.scores[0].metrics["accuracy"].value == 1.0
    before = len(calls)

    again, second = eval_set(task, log_dir=tmp_path, model=["mock/one", "mock/two"])

    assert again is True
    assert len(calls) == before  # no sample was asked again
    assert [log.path for log in second] == [log.path for log in logs]
    assert [log.attempts for log in second] == [0, 0]
    assert second[0].metrics is not None
    assert second[0].metrics.estimates[0].passed == 3
    # read as Inspect code reads a log
    assert second[0].results is not None
    assert second[0].results.scores[0].metrics["accuracy"].value == 1.0
    assert second[0].location == str(logs[0].path)


def test_retry_attempts_bound_the_tries_and_the_failure_is_reported(tmp_path: Path) -> None:
    calls: list[str] = []
    success, logs = eval_set(
        flaky_task(calls, failing={"s1"}), log_dir=tmp_path, model="mock/one", retry_attempts=0
    )
    assert success is False
    (log,) = logs
    assert log.status == "error"
    assert "RuntimeError: transient" in (log.error or "")
    assert log.attempts == 1

    # the next call runs the unit again (the errored run cannot be made clean by resuming)
    success, (log,) = eval_set(flaky_task(calls, failing=set()), log_dir=tmp_path, model="mock/one")
    assert success is True and log.attempts == 1
    assert len(run_dirs(tmp_path)) == 2


def test_units_differing_in_arguments_are_different_units(tmp_path: Path) -> None:
    calls: list[str] = []
    eval_set(flaky_task(calls, set()), log_dir=tmp_path, model="mock/one")
    success, (log,) = eval_set(
        flaky_task(calls, set()), log_dir=tmp_path, model="mock/one", limit=2
    )
    assert success is True and log.attempts == 1  # another selection of samples: run
    assert len(run_dirs(tmp_path)) == 2
    assert log.path is not None
    assert len(read_jsonl(log.path / "bundles.jsonl")) == 2


def test_retry_cleanup_removes_the_errored_runs_once_the_unit_succeeds(tmp_path: Path) -> None:
    calls: list[str] = []
    eval_set(flaky_task(calls, {"s1"}), log_dir=tmp_path, model="mock/one", retry_attempts=0)
    other = tmp_path / "notes"
    other.mkdir()  # not a run: left alone

    success, (log,) = eval_set(
        flaky_task(calls, set()), log_dir=tmp_path, model="mock/one", retry_cleanup=True
    )

    assert success is True
    assert run_dirs(tmp_path) == [log.path]
    assert other.is_dir()


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("output", "somewhere"),
        ("task_retries", 2),
        ("retry_attempts", -1),
        ("retry_wait", -1),
        ("retry_connections", 0.5),
    ],
)
def test_options_eval_set_does_itself_are_refused(
    tmp_path: Path, option: str, value: object
) -> None:
    with pytest.raises(ConfigError, match=f"eval_set\\({option}="):
        eval_set(flaky_task([], set()), log_dir=tmp_path, model="mock/one", **{option: value})


HANGING_TASK = '''
from pathlib import Path

from assay import Sample, Task, generate, includes, task

HERE = Path(__file__).parent


async def hang_once(state, generate):
    """Sample s1 waits (until the run is interrupted) while HERE/release is absent."""
    with open(HERE / "calls", "a") as calls:
        calls.write(f"{state.sample_id}\\n")
    if state.sample_id == "s1" and not (HERE / "release").exists():
        (HERE / "reached").touch()
        import anyio
        await anyio.sleep_forever()
    return await generate(state)


@task
def hanging():
    return Task(
        dataset=[Sample(input=f"q {i}", target="Default", id=f"s{i}") for i in range(3)],
        solver=[hang_once],
        scorer=includes(),
    )
'''


def interrupted_run(tmp_path: Path) -> tuple[Path, Path]:
    """A task file run by ``assay run`` one trial at a time, interrupted (SIGINT) while
    sample s1 waits: its folder (s0 finished) and the task file."""
    folder = tmp_path / "task"
    folder.mkdir()
    task_file = write_module(folder, "hanging_task", HANGING_TASK)
    logs = tmp_path / "logs"
    proc = start_cli(
        "run", f"{task_file}@hanging", "--model", "mock/x", "-j", "1", "--log-dir", logs
    )
    assert wait_for(lambda: (folder / "reached").exists(), timeout=60)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_INTERRUPTED, err
    (run,) = run_dirs(logs)
    assert read_manifest(run)["status"] == "interrupted"
    (folder / "release").touch()
    return run, task_file


def sample_calls(task_file: Path) -> list[str]:
    return (task_file.parent / "calls").read_text().split()


def test_an_interrupted_unit_is_resumed_in_place_keeping_its_finished_trials(
    tmp_path: Path,
) -> None:
    run, task_file = interrupted_run(tmp_path)
    assert sample_calls(task_file) == ["s0", "s1"]

    success, (log,) = eval_set(f"{task_file}@hanging", log_dir=run.parent, model="mock/x")

    assert success is True, log.error
    assert log.path == run  # the same directory, finished
    assert run_dirs(run.parent) == [run]
    assert sample_calls(task_file) == ["s0", "s1", "s1", "s2"]  # s0 was not asked again
    assert read_manifest(run)["status"] == "complete"
    assert verify_run(run).ok, verify_run(run).problems


def test_eval_retry_resumes_the_run_it_is_given(tmp_path: Path) -> None:
    run, task_file = interrupted_run(tmp_path)

    (log,) = eval_retry(run)

    assert log.status == "success", log.error
    assert (log.task, log.model, log.path) == ("hanging", "mock/x", run)
    assert sample_calls(task_file) == ["s0", "s1", "s1", "s2"]
    assert verify_run(run).ok, verify_run(run).problems
    # a complete run has nothing to retry: it is its own result (as Inspect's retry of a
    # finished log), and nothing runs
    (again,) = eval_retry(run)
    assert (again.status, again.attempts, again.path) == ("success", 0, run)
    assert sample_calls(task_file) == ["s0", "s1", "s1", "s2"]


FAILING_TASK = """
from pathlib import Path

from assay import Sample, Task, generate, includes, task

HERE = Path(__file__).parent


async def fail_s0(state, generate):
    if state.sample_id == "s0" and not (HERE / "fixed").exists():
        raise RuntimeError("s0 is broken")
    return await generate(state)


@task
def failing():
    return Task(
        dataset=[Sample(input=f"q {i}", target="Default", id=f"s{i}") for i in range(3)],
        solver=[fail_s0],
        scorer=includes(),
    )
"""


def test_eval_retry_of_a_run_stopped_by_an_error_says_the_error_is_kept(tmp_path: Path) -> None:
    task_file = write_module(tmp_path, "failing_task", FAILING_TASK)
    logs = tmp_path / "logs"
    proc = run_cli("run", f"{task_file}@failing", "--model", "mock/x", "-j", "1", "--log-dir", logs)
    assert proc.returncode == EXIT_STOPPED, proc.stderr
    (run,) = run_dirs(logs)
    assert read_manifest(run)["status"] == "interrupted"  # stopped at s0's error
    (tmp_path / "fixed").touch()

    (log,) = eval_retry(run)

    assert read_manifest(run)["status"] == "complete"  # s1 and s2 ran
    assert log.status == "error"
    assert "errored before this retry" in (log.error or "")
    # eval_set, by contrast, runs the unit again and ends clean
    success, (fresh,) = eval_set(f"{task_file}@failing", log_dir=logs, model="mock/x")
    assert success is True, fresh.error
    assert fresh.path != run
