"""The collector's young threshold is raised while trials run and restored after,
also when runs nest or overlap, and when a run fails."""

from __future__ import annotations

import gc

import anyio
import pytest

from assay.run import execute
from assay.run._gc import YOUNG, collector_tuned


def test_the_threshold_is_raised_inside_and_restored_after() -> None:
    before = gc.get_threshold()
    with collector_tuned():
        assert gc.get_threshold() == (max(YOUNG, before[0]), *before[1:])
        with collector_tuned():  # a run inside a run
            assert gc.get_threshold()[0] == max(YOUNG, before[0])
        assert gc.get_threshold()[0] == max(YOUNG, before[0])  # the outer run still runs
    assert gc.get_threshold() == before


def test_trials_run_with_the_raised_threshold_and_a_failure_restores_it() -> None:
    before = gc.get_threshold()
    seen: list[int] = []

    async def work(item: int) -> None:
        seen.append(gc.get_threshold()[0])
        if item == 3:
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        anyio.run(execute, range(5), work, 1)
    assert seen and set(seen) == {max(YOUNG, before[0])}
    assert gc.get_threshold() == before
