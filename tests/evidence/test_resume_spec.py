"""A run is resumed with exactly what it started with: a YAML run with the same spec file
(refused, naming the changed fields, if it changed), a Python-task run with its pinned
task file; and what the resume adds goes to a new pack, the old ones left as they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from assay.errors import EXIT_CONFIG, EXIT_PASSED, EXIT_RUN
from assay.evidence import verify_run
from tests.helpers import (
    error_line,
    read_jsonl,
    run_cli,
    run_dirs,
    run_spec_at,
    unique_callable_spec,
    write_module,
)

STOPPING = """
from pathlib import Path


class Stop(BaseException):
    \"\"\"Stands for a crash: not an error of the target, it stops the run.\"\"\"


def answer(text):
    if text == "stop" and Path({flag!r}).exists():
        raise Stop()
    return text
"""


def stopped_yaml_run(folder: Path) -> tuple[Path, Path]:
    """A YAML run stopped at its second sample (while *folder*/stop exists); its spec
    file and its run directory."""
    flag = folder / "stop"
    flag.write_text("")
    samples = [
        {"id": "a", "input": "a", "expected": "a"},
        {"id": "b", "input": "stop", "expected": "stop"},
        {"id": "c", "input": "c", "expected": "c"},
    ]
    source = STOPPING.format(flag=str(flag))
    spec = unique_callable_spec(folder / "spec", source, samples=samples)
    run = folder / "run"
    with pytest.raises(BaseException) as info:
        run_spec_at(spec, run, max_concurrency=1)
    assert "Stop" in repr(info.value)
    assert json.loads((run / "manifest.json").read_bytes())["status"] != "complete"
    flag.unlink()  # the resume runs to the end
    return spec, run


@pytest.mark.doc(
    "docs/evidence.md",
    "A YAML run is resumed with the same spec file (refused, naming the changed fields, if it",
    "A resumed run appends to a new pack (the next number) and leaves the earlier packs",
)
@pytest.mark.doc(
    "docs/evidence.md",
    "Packs are numbered from `0001` with four digits, and each process that writes the run "
    "opens one new pack.",
)
def test_a_yaml_run_resumes_only_with_its_spec_and_appends_a_new_pack(tmp_path: Path) -> None:
    spec, run = stopped_yaml_run(tmp_path)
    original = spec.read_bytes()
    changed = yaml.safe_load(original)
    changed["gate"] = {"minimum": 0.5}
    changed["repetitions"] = 2
    spec.write_text(yaml.safe_dump(changed, sort_keys=False))
    refused = run_cli("resume", run)
    assert refused.returncode == EXIT_RUN, refused.stdout + refused.stderr
    assert "changed: gate, repetitions" in error_line(refused)
    assert len(read_jsonl(run / "bundles.jsonl")) == 1  # nothing ran

    spec.write_bytes(original)
    packs = {p.name: p.read_bytes() for p in (run / "artifacts").glob("pack-*.bin")}
    assert list(packs) == ["pack-0001.bin"]
    resumed = run_cli("resume", run)
    assert resumed.returncode == EXIT_PASSED, resumed.stdout + resumed.stderr
    assert verify_run(run).ok
    assert len(read_jsonl(run / "bundles.jsonl")) == 3
    assert (run / "artifacts" / "pack-0001.bin").read_bytes() == packs["pack-0001.bin"]
    assert (run / "artifacts" / "pack-0002.bin").stat().st_size > 0


TASK = """
from assay import Sample, Task, match, task


async def stops_at_s1(state, generate):
    if state.sample_id == "s1":
        raise RuntimeError("stop")
    return await generate(state)


@task
def pinned():
    samples = [Sample(input=f"q{i}", target="4", id=f"s{i}") for i in range(3)]
    return Task(dataset=samples, solver=stops_at_s1, scorer=match())
"""


@pytest.mark.doc("docs/evidence.md", "a Python-task run with its pinned task file.")
def test_a_python_task_run_resumes_only_with_its_pinned_task_file(tmp_path: Path) -> None:
    task_file = write_module(tmp_path, "pinned_task", TASK)
    args = (f"{task_file}@pinned", "-m", "mock/x", "-j", "1", "--log-dir", tmp_path / "runs")
    ran = run_cli("run", *args)
    assert ran.returncode == EXIT_RUN, ran.stdout + ran.stderr  # stopped by fail_on_error
    (run,) = run_dirs(tmp_path / "runs")
    assert json.loads((run / "manifest.json").read_bytes())["status"] == "interrupted"
    task_file.write_text(TASK.replace('target="4"', 'target="5"'))
    refused = run_cli("resume", run)
    assert refused.returncode == EXIT_CONFIG, refused.stdout + refused.stderr
    line = error_line(refused)
    assert str(task_file) in line and "changed since the run" in line, line
