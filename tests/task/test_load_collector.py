"""A task's factory makes its dataset: objects that live as long as the run. Young
collections while it runs would walk them and free nothing, so ``load_tasks`` runs it
with the young generation raised, and in a run freezes what it made (no collection of
it either when the threshold is put back)."""

from __future__ import annotations

import gc
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay._collector import survivors_frozen
from assay.task import load_tasks
from assay.task._load import load_module

TASK = """
from assay import Sample, Task, task

@task
def many(samples: int = 3000) -> Task:
    return Task(dataset=[Sample(input=str(i), id=i, metadata={"k": [i]}) for i in range(samples)])
"""


@pytest.fixture
def low_threshold() -> Iterator[list[int]]:
    """CPython's default threshold (a young collection every 700 net allocations), and
    the generations of the collections that start meanwhile."""
    seen: list[int] = []

    def count(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    gc.callbacks.append(count)
    try:
        yield seen
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*saved)


def test_a_run_s_task_factory_sets_off_no_collection(
    tmp_path: Path, low_threshold: list[int]
) -> None:
    path = tmp_path / "many.py"
    path.write_text(textwrap.dedent(TASK))
    load_module(path)  # its import's own allocations are not the factory's
    with survivors_frozen():
        gc.collect()
        low_threshold.clear()
        ((made, _),) = load_tasks(f"{path}@many")
        assert low_threshold == []  # ~9,000 tracked objects: a dozen collections before
        assert gc.get_threshold() == (700, 10, 10)  # put back
    assert len(made.dataset) == 3000


def test_outside_a_run_the_threshold_is_put_back_and_collections_go_on(
    tmp_path: Path, low_threshold: list[int]
) -> None:
    path = tmp_path / "many.py"
    path.write_text(textwrap.dedent(TASK))
    ((made, _),) = load_tasks(f"{path}@many")
    assert gc.get_threshold() == (700, 10, 10)
    low_threshold.clear()
    junk = [[i] for i in range(2000)]  # young objects again: collected as before
    assert low_threshold and len(junk) == len(made.dataset) - 1000
