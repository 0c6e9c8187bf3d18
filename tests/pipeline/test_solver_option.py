"""Another solver for a run, as Inspect's ``inspect eval --solver NAME -S key=value`` and
``eval(task, solver=...)``: chosen by its registered name, made with its arguments,
pinned in the spec, and the task itself left as it was."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from assay import Task, eval
from assay.dataset import Sample
from assay.errors import EXIT_CONFIG, EXIT_INCONCLUSIVE, EXIT_PASSED, EXIT_RUN
from assay.evidence._log import events_in
from assay.scorer import exact
from assay.solver import Generate, TaskState, generate, solver
from tests.helpers import (
    bundles_by_sample,
    error_line,
    run_cli,
    start_cli,
    state_of,
    wait_for,
    whole_records,
    write_module,
)

TASK = """
from assay import Sample, Task, task
from assay.scorer import exact
from assay.solver import generate, solver


@solver
def shout(prefix: str = "!"):
    async def solve(state, generate):
        state.output.completion = f"{prefix} {state.input_text}"
        return state

    return solve


@task
def greet():
    return Task(dataset=[Sample(input="hi", target="HEY hi")], solver=generate(), scorer=exact())
"""


@pytest.mark.doc(
    "docs/cli.md",
    "`--solver NAME` runs the solver registered as NAME (`@solver` in the task's file, or "
    "an installed package's) instead of each task's own, made with the `-S key=value` "
    "arguments; the run's spec records it",
)
def test_solver_by_name_with_arguments_replaces_the_tasks_own(tmp_path: Path) -> None:
    (tmp_path / "greet.py").write_text(TASK)
    proc = run_cli(
        *("run", "greet.py@greet", "--model", "mock/m", "--solver", "shout", "-S", "prefix=HEY"),
        *("-o", tmp_path / "run"),
        cwd=tmp_path,
    )
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    spec = json.loads((tmp_path / "run" / "spec.json").read_text())
    (step,) = spec["targets"][0]["solver"]
    assert (step["name"], step["args"]) == ("shout", {"prefix": "HEY"})
    assert spec["task"]["solver"] == {"name": "shout", "args": {"prefix": "HEY"}}
    assert run_cli("verify", tmp_path / "run").returncode == EXIT_PASSED


@pytest.mark.doc(
    "docs/cli.md",
    "A `--solver` name no solver is registered as fails the unit with one line (exit 2), "
    "and so does `-S` without `--solver`.",
)
def test_an_unknown_solver_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "greet.py").write_text(TASK)
    proc = run_cli(
        *("run", "greet.py@greet", "--model", "mock/m", "--solver", "whisper"),
        *("--log-dir", tmp_path / "logs"),
        cwd=tmp_path,
    )
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr  # a usage error
    (line,) = proc.stderr.splitlines()
    assert "no solver is registered as 'whisper'" in line


def test_solver_arguments_without_a_solver_are_refused(tmp_path: Path) -> None:
    (tmp_path / "greet.py").write_text(TASK)
    proc = run_cli("run", "greet.py@greet", "--model", "mock/m", "-S", "x=1", cwd=tmp_path)
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    assert "-S: solver arguments need --solver" in proc.stderr


def test_solver_on_a_yaml_spec_is_refused(tmp_path: Path) -> None:
    (tmp_path / "eval.yaml").write_text("evaluation: x\n")
    proc = run_cli("run", "eval.yaml", "--solver", "shout", cwd=tmp_path)
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    assert "--solver is for Python tasks" in proc.stderr


@solver
def answer_with(text: str) -> object:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output.completion = text
        return state

    return solve


def test_eval_takes_a_solver_and_leaves_the_task_as_it_was(tmp_path: Path) -> None:
    task = Task(dataset=[Sample(input="hi", target="ok")], solver=generate(), scorer=exact())
    own = task.solver
    (result,) = eval(task, model="mock/m", log_dir=tmp_path, solver=answer_with("ok"))
    assert result.status == "success", result.error
    assert task.solver is own
    (bundle,) = bundles_by_sample(result.path).values()
    assert state_of(result.path, bundle)["output"]["message"]["content"] == "ok"


WAITING_SOLVER = """
import os

import anyio

from assay.solver import solver


@solver
def {name}(text: str):
    async def solve(state, generate):
        while not os.path.exists(os.environ["GO_ON"]):
            await anyio.sleep(0.02)
        state.output.completion = text
        return state

    return solve
"""
"""A solver that answers *text* once the file ``$GO_ON`` exists (named by ``format``)."""

WAITS = (
    WAITING_SOLVER.format(name="waiting")
    + """

from assay import Sample, Task, task
from assay.scorer import exact
from assay.solver import generate


@task
def waits():
    samples = [Sample(input=f"say {i}", target="four", id=f"s{i}") for i in range(3)]
    return Task(dataset=samples, solver=generate(), scorer=exact())
"""
)


def killed_in_its_first_trial(folder: Path, *args: str) -> Path:
    """``assay run *args`` (a waiting solver's) killed once a trial has started, then the
    solver let go on (``GO_ON`` made): the run's folder, for ``resume``."""
    env = {"GO_ON": str(folder / "go-on")}
    run = folder / "run"
    proc = start_cli("run", *args, "-o", run, cwd=folder, env=env)

    def started() -> bool:
        events = run / "events.jsonl"
        logged = [e for line in whole_records(events) for e in events_in(line)]
        return any(e["type"] == "attempt_started" for e in logged)  # written as it waits

    assert wait_for(started, timeout=60), proc.stderr
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    (folder / "go-on").write_text("")
    return run


@pytest.mark.doc("docs/cli.md", "the run's spec records it, and `resume` makes it again.")
def test_resume_makes_the_named_solver_again(tmp_path: Path) -> None:
    write_module(tmp_path, "tasks", WAITS)
    args = ("tasks.py@waits", "-m", "mock/x", "--solver", "waiting", "-S", "text=four")
    run = killed_in_its_first_trial(tmp_path, *args)
    resumed = run_cli("resume", run, cwd=tmp_path, env={"GO_ON": str(tmp_path / "go-on")})
    assert resumed.returncode == EXIT_PASSED, resumed.stdout + resumed.stderr
    assert run_cli("verify", run).returncode == EXIT_PASSED
    outputs = {
        sample: state_of(run, bundle)["output"]["message"]["content"]
        for sample, bundle in bundles_by_sample(run).items()
    }
    assert outputs == {"s0": "four", "s1": "four", "s2": "four"}  # not the mock's answer


GREET = """
from assay import Sample, Task, task
from assay.scorer import exact
from assay.solver import generate


@task
def greet():
    return Task(dataset=[Sample(input="hi", target="HEY hi")], solver=generate(), scorer=exact())
"""

SOLVERS = """
from assay.solver import solver


@solver
def shout(prefix: str = "!"):
    async def solve(state, generate):
        state.output.completion = f"{prefix} {state.input_text}"
        return state

    return solve
"""


@pytest.mark.doc(
    "docs/cli.md",
    "`--solver file.py@name` is the `@solver` called name in that file (`file.py` alone: "
    "its only one), imported as a task file is; the run records the file's path and "
    "SHA-256 with the name",
)
@pytest.mark.parametrize("given", ["solvers.py@shout", "solvers.py"])
def test_a_solver_from_a_file_with_arguments(tmp_path: Path, given: str) -> None:
    (tmp_path / "greet.py").write_text(GREET)
    (tmp_path / "solvers.py").write_text(SOLVERS)
    proc = run_cli(
        *("run", "greet.py@greet", "--model", "mock/m", "--solver", given, "-S", "prefix=HEY"),
        *("-o", tmp_path / "run"),
        cwd=tmp_path,
    )
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    spec = json.loads((tmp_path / "run" / "spec.json").read_text())
    recorded = spec["task"]["solver"]
    assert (recorded["name"], recorded["args"]) == ("shout", {"prefix": "HEY"})
    assert recorded["file"] == str((tmp_path / "solvers.py").resolve())
    assert recorded["digest"].startswith("sha256:")
    assert run_cli("verify", tmp_path / "run").returncode == EXIT_PASSED


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("solvers.py@whisper", "has no @solver named 'whisper' (its solvers: shout)"),
        ("missing.py@shout", "--solver: no such file: missing.py"),
    ],
)
def test_a_solver_file_without_it_is_exit_2(tmp_path: Path, given: str, said: str) -> None:
    (tmp_path / "greet.py").write_text(GREET)
    (tmp_path / "solvers.py").write_text(SOLVERS)
    proc = run_cli(
        *("run", "greet.py@greet", "--model", "mock/m", "--solver", given),
        *("--log-dir", tmp_path / "logs"),
        cwd=tmp_path,
    )
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert said in line


def test_resume_makes_a_file_solver_again_from_its_recorded_path(tmp_path: Path) -> None:
    write_module(tmp_path, "tasks", WAITS)
    (tmp_path / "solvers.py").write_text(WAITING_SOLVER.format(name="from_file"))
    args = ("tasks.py@waits", "-m", "mock/x", "--solver", "solvers.py@from_file", "-S", "text=four")
    run = killed_in_its_first_trial(tmp_path, *args)
    env = {"GO_ON": str(tmp_path / "go-on")}
    elsewhere = tmp_path / "elsewhere"  # the recorded path is absolute: any folder resumes
    elsewhere.mkdir()
    resumed = run_cli("resume", run, cwd=elsewhere, env=env)
    assert resumed.returncode == EXIT_PASSED, resumed.stdout + resumed.stderr
    outputs = {
        sample: state_of(run, bundle)["output"]["message"]["content"]
        for sample, bundle in bundles_by_sample(run).items()
    }
    assert outputs == {"s0": "four", "s1": "four", "s2": "four"}


STOPPING_SOLVER = """
from assay.solver import solver


@solver
def stops_at_s1(text: str):
    async def solve(state, generate):
        if state.sample_id == "s1":
            raise RuntimeError("stop")
        state.output.completion = text
        return state

    return solve
"""


@pytest.mark.doc(
    "docs/cli.md",
    "`resume` refuses a run whose solver file changed since it started, with one line "
    "naming the file (exit 2)",
)
def test_resume_refuses_a_solver_file_changed_since_the_run(tmp_path: Path) -> None:
    write_module(tmp_path, "tasks", WAITS)
    solvers = tmp_path / "solvers.py"
    solvers.write_text(STOPPING_SOLVER)
    args = ("tasks.py@waits", "-m", "mock/x", "-j", "1", "--solver", "solvers.py")
    ran = run_cli("run", *args, "-S", "text=four", "-o", tmp_path / "run", cwd=tmp_path)
    assert ran.returncode == EXIT_RUN, ran.stdout + ran.stderr  # stopped by fail_on_error
    run = tmp_path / "run"
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"
    solvers.write_text(STOPPING_SOLVER.replace('"s1"', '"s9"'))  # now it would not stop
    refused = run_cli("resume", run, cwd=tmp_path)
    assert refused.returncode == EXIT_CONFIG, refused.stdout + refused.stderr
    line = error_line(refused)
    assert str(solvers.resolve()) in line and "changed since the run started" in line, line
    solvers.write_text(STOPPING_SOLVER)  # the recorded bytes again: it resumes
    again = run_cli("resume", run, cwd=tmp_path)
    assert again.returncode == EXIT_INCONCLUSIVE, again.stdout + again.stderr  # s1 errored
    assert "exact: 2/3" in again.stdout, again.stdout
