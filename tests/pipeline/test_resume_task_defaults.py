"""A task whose own default argument is not data (a function) resumes: the record holds
every argument, defaults too, frozen; a function's frozen form cannot be passed back,
but the task made again gets that default by itself. Only a value that is not data and
not the default is refused (the task would be made with something else)."""

from __future__ import annotations

from pathlib import Path

from assay.evidence import read_manifest, verify_run
from tests.helpers import error_line, run_cli, run_dirs, write_module

TASK = """
from pathlib import Path

from assay import Sample, Task, task
from assay.scorer import match
from assay.solver import generate, solver

STOP = Path(__file__).with_name("stop")


@solver
def stopping():
    async def solve(state, generate):
        if STOP.exists() and state.sample_id == "s3":
            raise RuntimeError("stopped on purpose")
        return state

    return solve


@task
def shouted(transform=str.upper, count: int = 6):
    texts = [transform(f"q{i}") for i in range(count)]
    samples = [Sample(input=t, target=t, id=f"s{i}") for i, t in enumerate(texts)]
    return Task(dataset=samples, solver=[stopping(), generate()], scorer=match())
"""


def test_a_task_with_a_function_default_is_resumed(tmp_path: Path) -> None:
    path = write_module(tmp_path / "task", "shouted", TASK)
    (tmp_path / "task" / "stop").touch()
    first = run_cli("run", f"{path}@shouted", "-m", "mock/echo", "--log-dir", tmp_path / "logs")
    (run,) = run_dirs(tmp_path / "logs")
    assert read_manifest(run)["status"] == "interrupted", first.stdout + first.stderr
    (tmp_path / "task" / "stop").unlink()
    proc = run_cli("resume", run)
    # finished (not refused, exit 2): inconclusive, as the stopped trial's error is kept
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert read_manifest(run)["status"] == "complete"
    assert verify_run(run).ok
    shown = run_cli("show", run, "s5")  # a trial the resume ran
    assert shown.returncode == 0, shown.stderr
    assert "  input: Q5\n" in shown.stdout  # the default, not a dict in its place


def test_a_function_that_is_not_the_default_is_still_refused(tmp_path: Path) -> None:
    path = write_module(tmp_path / "task", "shouted", TASK)
    edited = path.read_text().replace("transform=str.upper", "transform=str.lower")
    (tmp_path / "task" / "stop").touch()
    run_cli("run", f"{path}@shouted", "-m", "mock/echo", "--log-dir", tmp_path / "logs")
    (run,) = run_dirs(tmp_path / "logs")
    path.write_text(edited)  # the file changed: refused for that already, in one line
    proc = run_cli("resume", run)
    assert proc.returncode == 2
    error_line(proc)
