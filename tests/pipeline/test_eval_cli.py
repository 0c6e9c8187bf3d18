"""A Python task end to end through the real ``assay`` command: run, list, score, verify,
models chosen on the command line, a missing task, and resuming an interrupted run."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from assay.evidence import read_manifest, verify_run
from tests.helpers import REPO, error_line, read_jsonl, run_cli, run_dirs, wait_for

ARITHMETIC = REPO / "examples" / "arithmetic" / "tasks.py"


@pytest.fixture(scope="module")
def arithmetic_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    log_dir = tmp_path_factory.mktemp("arith")
    proc = run_cli(
        "run", f"{ARITHMETIC}@arithmetic", "-T", "count=5", "-T", "epochs=2", "--log-dir", log_dir
    )
    (run,) = run_dirs(log_dir)
    return proc, run


def test_run_a_python_task_from_the_command_line(
    arithmetic_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    proc, run = arithmetic_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "== arithmetic × calculator/v1: success" in proc.stdout
    assert "match: accuracy 1.0000" in proc.stdout
    assert "includes: accuracy 1.0000" in proc.stdout
    # all right, but nothing was gated: the line says so rather than "passed"
    assert "gate: not gated: no minimum, min_effect or no_regression declared" in proc.stdout
    assert "passed" not in proc.stdout
    assert str(run) in proc.stdout
    assert verify_run(run).ok
    # -T arguments reached the task and are recorded, so the run can be rebuilt
    spec = json.loads((run / "spec.json").read_bytes())
    assert spec["task"]["name"] == "arithmetic"
    assert spec["task"]["args"] == {"count": 5, "epochs": 2}
    assert spec["repetitions"] == 2
    assert len(read_jsonl(run / "bundles.jsonl")) == 10


def test_assay_verify_accepts_the_run(
    arithmetic_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    _, run = arithmetic_run
    proc = run_cli("verify", run)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "10 trials" in proc.stdout


def test_assay_score_rescores_the_run_with_every_score_equal(
    arithmetic_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    _, run = arithmetic_run
    proc = run_cli("score", run)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "re-scored 20 scores from evidence: all equal the recorded ones" in proc.stdout
    assert "match: 10/10" in proc.stdout


def test_list_tasks_finds_the_example() -> None:
    proc = run_cli("list", "tasks", "examples", cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "examples/arithmetic/tasks.py@arithmetic" in proc.stdout.splitlines()


def test_a_missing_task_is_a_usage_error_in_one_line(tmp_path: Path) -> None:
    proc = run_cli("run", f"{ARITHMETIC}@missing", "--log-dir", tmp_path)
    assert proc.returncode == 2
    line = error_line(proc)
    assert "missing" in line and "arithmetic" in line
    assert not list(tmp_path.iterdir())  # nothing was run


@pytest.mark.doc(
    "docs/cli.md",
    "Python tasks (`run file.py@task`): `--model/-m provider/name` (repeatable), `-T key=value` "
    "(task arguments)",
)
def test_model_and_model_args_choose_the_model(tmp_path: Path) -> None:
    # q1 is 3 - 3 = 0, q2 is 6 * 4 = 24, q3 is 9 + 5 = 14: a fixed "24" gets one right
    proc = run_cli(
        "run",
        f"{ARITHMETIC}@arithmetic",
        "-T",
        "count=3",
        "-T",
        "epochs=1",
        "--model",
        "mock/fixed",
        "-M",
        "default_output=ANSWER: 24",
        "--log-dir",
        tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "== arithmetic × mock/fixed: success" in proc.stdout
    assert "match: accuracy 0.3333" in proc.stdout
    (run,) = run_dirs(tmp_path)
    assert verify_run(run).ok
    spec = json.loads((run / "spec.json").read_bytes())
    assert [t["model"] for t in spec["targets"]] == ["mock/fixed"]


@pytest.mark.doc(
    "docs/cli.md",
    "For Python tasks it is the directory of the one task × model unit; several units (or "
    "`--log-dir`'s default `runs/`) each get `<log-dir>/<task>-<model>-<UTC time>-<µs>`, and `-o` "
    "with several is refused (exit 2).",
)
def test_output_names_the_run_directory_of_one_unit(tmp_path: Path) -> None:
    task = f"{ARITHMETIC}@arithmetic"
    out = tmp_path / "here"
    proc = run_cli("run", task, "-T", "count=2", "-T", "epochs=1", "-o", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"evidence and reports: {out}" in proc.stdout
    assert verify_run(out).ok and not (tmp_path / "runs").exists()
    # one directory cannot hold two units' runs: one line, exit 2, nothing run
    two = run_cli("run", task, "-m", "mock/a", "-m", "mock/b", "-o", tmp_path / "two")
    assert two.returncode == 2
    assert "--output names one run directory, but" in error_line(two)
    assert not (tmp_path / "two").exists()


@pytest.mark.doc(
    "docs/cli.md",
    "`--dry-run` and `--sink` are for YAML specs: refused for Python tasks (exit 2).",
)
@pytest.mark.parametrize("option", [["--dry-run"], ["--sink", "http://127.0.0.1:9/"]])
def test_yaml_only_options_are_refused_for_python_tasks(option: list[str], tmp_path: Path) -> None:
    proc = run_cli("run", f"{ARITHMETIC}@arithmetic", *option, "--log-dir", tmp_path)
    assert proc.returncode == 2
    assert f"{option[0]}: is for YAML specs" in error_line(proc)
    assert run_dirs(tmp_path) == []


@pytest.mark.doc(
    "docs/cli.md",
    "For Python tasks it is the directory of the one task × model unit; several units (or "
    "`--log-dir`'s default `runs/`) each get `<log-dir>/<task>-<model>-<UTC time>-<µs>`, and `-o` "
    "with several is refused (exit 2).",
    "Python tasks (`run file.py@task`): `--model/-m provider/name` (repeatable)",
)
def test_several_models_on_the_command_line_are_separate_units(tmp_path: Path) -> None:
    proc = run_cli(
        "run",
        f"{ARITHMETIC}@arithmetic",
        "-T",
        "count=2",
        "-T",
        "epochs=1",
        "-m",
        "mock/a",
        "-m",
        "calculator/b",
        "--log-dir",
        tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "== arithmetic × mock/a: success" in proc.stdout
    assert "== arithmetic × calculator/b: success" in proc.stdout
    runs = run_dirs(tmp_path)
    assert len(runs) == 2 and all(verify_run(r).ok for r in runs)
    names = sorted(r.name for r in runs)
    pattern = r"arithmetic-(calculator-b|mock-a)-\d{8}T\d{6}Z-\d{6}"
    assert all(re.fullmatch(pattern, name) for name in names), names
    assert [n.split("-")[1] for n in names] == ["calculator", "mock"]


# -- resume -----------------------------------------------------------------------------

COUNT = 5000  # long enough (seconds) to be interrupted after its first flushed trials


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    """An arithmetic run stopped by Ctrl-C (SIGINT) once some trials are on disk."""
    log_dir = tmp_path_factory.mktemp("interrupted")
    args = ["run", f"{ARITHMETIC}@arithmetic", "-T", f"count={COUNT}", "-T", "epochs=1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", *args, "-j", "4", "--log-dir", str(log_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def some_trials_on_disk() -> bool:
        bundles = list(log_dir.glob("*/bundles.jsonl"))
        return bool(bundles) and bundles[0].stat().st_size > 0

    assert wait_for(some_trials_on_disk, timeout=60), "no trial reached the disk"
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    (run,) = run_dirs(log_dir)
    return proc.returncode, run


def test_resume_finishes_an_interrupted_python_task_run(interrupted: tuple[int, Path]) -> None:
    _, run = interrupted
    assert read_manifest(run)["status"] == "interrupted"
    assert verify_run(run).ok
    done_before = len(read_jsonl(run / "bundles.jsonl"))
    assert 0 < done_before < COUNT

    proc = run_cli("resume", run)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert read_manifest(run)["status"] == "complete"
    assert verify_run(run).ok
    bundles = read_jsonl(run / "bundles.jsonl")
    assert len(bundles) == COUNT
    assert len({b["trial"]["trial_id"] for b in bundles}) == COUNT
    # the same results as an uninterrupted run: the calculator errs when 7 divides a = 3i
    wrong = COUNT // 7
    scores = [s for s in read_jsonl(run / "scores.jsonl") if s["scorer_id"] == "match"]
    assert len(scores) == COUNT
    assert sum(s["status"] == "passed" for s in scores) == COUNT - wrong
    assert f"match: {COUNT - wrong}/{COUNT}" in proc.stdout


@pytest.mark.doc(
    "docs/cli.md",
    "| 130 | interrupted |",
)
def test_an_interrupted_python_task_run_exits_130(interrupted: tuple[int, Path]) -> None:
    code, _ = interrupted
    assert code == 130


def _in_memory_interrupted_run(tmp_path: Path) -> Path:
    from assay import Sample, Task, TaskState, eval
    from assay.solver import Generate

    async def broken(state: TaskState, generate: Generate) -> TaskState:
        raise RuntimeError("stop")

    task = Task(dataset=[Sample(input="q", target="x", id="s")], solver=broken, name="inmem")
    eval(task, model="mock/x", log_dir=tmp_path)  # stopped by fail_on_error
    (run,) = run_dirs(tmp_path)
    assert read_manifest(run)["status"] == "interrupted"
    return run


def test_resume_of_an_in_memory_task_run_is_refused_in_one_line(tmp_path: Path) -> None:
    proc = run_cli("resume", _in_memory_interrupted_run(tmp_path))
    assert proc.returncode == 2
    error_line(proc)


def test_resume_of_an_in_memory_task_run_says_why(tmp_path: Path) -> None:
    proc = run_cli("resume", _in_memory_interrupted_run(tmp_path))
    line = error_line(proc)
    assert "None" not in line
    assert "in memory" in line


@pytest.mark.doc(
    "docs/cli.md",
    "Python tasks (`run file.py@task`): `--model/-m provider/name` (repeatable), `-T key=value` "
    "(task arguments), `-M key=value` (model arguments; `GenerateConfig` fields such as "
    "`timeout`, `max_retries`, `temperature` set the model's config; keys are refused)",
)
def test_generate_config_epochs_limit_and_sample_ids_from_the_command_line(
    tmp_path: Path,
) -> None:
    task = f"{ARITHMETIC}@arithmetic"
    config = ("-M", "temperature=0.3", "-M", "timeout=7", "-M", "max_retries=2")
    chosen = ("--epochs", "2", "--limit", "4", "--max-connections", "3")
    proc = run_cli(
        "run", task, "-T", "count=6", "-m", "mock/a", *config, *chosen, "--log-dir", tmp_path / "a"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (run,) = run_dirs(tmp_path / "a")
    spec = json.loads((run / "spec.json").read_bytes())
    [target] = spec["targets"]
    assert target["config"] == {"max_retries": 2, "temperature": 0.3, "timeout": 7.0}
    assert spec["repetitions"] == 2 and spec["dataset"]["samples"] == 4
    ids = [b["trial"]["sample_id"] for b in read_jsonl(run / "bundles.jsonl")]
    assert sorted(ids) == ["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"]

    picked = ("--sample-id", "q2", "--sample-id", "q5", "--epochs", "1")
    proc = run_cli("run", task, "-T", "count=6", *picked, "--log-dir", tmp_path / "b")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (run,) = run_dirs(tmp_path / "b")
    assert sorted(b["trial"]["sample_id"] for b in read_jsonl(run / "bundles.jsonl")) == [
        "q2",
        "q5",
    ]
