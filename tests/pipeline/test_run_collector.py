"""The cyclic collector around a run's start and end (``assay._collector``): the
objects a run's start made are frozen while its trials run (no collection walks them),
given back when the call returns, and the collector is left as it was found."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

from assay._collector import collection_paused, freeze_survivors, survivors_frozen

TASK = """
import gc
import sys
from typing import Any

from assay import Sample, Task, generate, match, task
from assay.model import ChatMessage, GenerateConfig, MockAPI, modelapi

SEEN: list[int] = []


def echo(messages: list[ChatMessage]) -> str:
    if not SEEN:
        SEEN.append(gc.get_freeze_count())
        print(f"frozen at the first call: {SEEN[0]}", file=sys.stderr)
    return messages[-1].content


@modelapi("frozen-check")
def provider(name: str, config: GenerateConfig, **args: Any) -> MockAPI:
    return MockAPI(name, config, outputs=echo)


@task
def echoed() -> Task:
    samples = [Sample(input=f"q{i}", target=f"q{i}", id=f"s{i}") for i in range(20)]
    return Task(dataset=samples, solver=[generate()], scorer=match(), model="frozen-check/v1")
"""

CODE = """
import gc, sys
threshold = gc.get_threshold()
import assay
result = assay.eval(sys.argv[1], log_dir=sys.argv[2])[0]
assert result.status == "success", result.error
print(f"after: frozen {gc.get_freeze_count()}, enabled {gc.isenabled()},"
      f" threshold kept {gc.get_threshold() == threshold}", file=sys.stderr)
"""


def test_a_run_s_start_is_frozen_while_its_trials_run_and_given_back(tmp_path: Path) -> None:
    (tmp_path / "task.py").write_text(TASK)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    argv = [sys.executable, "-c", CODE, f"{tmp_path / 'task.py'}@echoed", str(tmp_path / "l")]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    frozen = int(done.stderr.split("frozen at the first call: ")[1].split()[0])
    assert frozen > 10_000  # the modules, the dataset, the plan
    assert "after: frozen 0, enabled True, threshold kept True" in done.stderr


def test_a_pause_freezes_what_exists_and_leaves_a_collector_that_was_off_as_it_was() -> None:
    try:
        with collection_paused():
            assert not gc.isenabled()
            made = [[] for _ in range(1000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= len(made)
        gc.disable()
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_survivors_are_frozen_only_inside_a_run_and_given_back_by_the_last_one() -> None:
    try:
        gc.unfreeze()
        freeze_survivors()  # outside a run: nothing
        assert gc.get_freeze_count() == 0
        with survivors_frozen():
            with survivors_frozen():  # runs nest or overlap
                freeze_survivors()
                assert gc.get_freeze_count() > 0
            assert gc.get_freeze_count() > 0  # the outer run still runs
        assert gc.get_freeze_count() == 0
        assert gc.get_count()[0] < 50  # the young generation left (nearly) empty
    finally:
        gc.unfreeze()
