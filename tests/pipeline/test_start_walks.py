"""The start's walks over a task's samples asked in C (a sample's type, whether it
names a sandbox) must still find the one sample among many that matters."""

from __future__ import annotations

import pytest

from assay import Task
from assay.dataset import MemoryDataset, Sample
from assay.errors import ConfigError
from assay.pipeline._task_prepare import _sandboxes


def _many(last: Sample) -> list[Sample]:
    return [*(Sample(input=f"q{i}", id=f"s{i}") for i in range(500)), last]


def test_one_sample_naming_a_sandbox_after_many_that_do_not_is_seen() -> None:
    samples = _many(Sample(input="x", id="boxed", sandbox="local"))
    specs, sampled = _sandboxes(Task(dataset=samples), samples)
    assert sampled and specs == ()
    plain = samples[:-1]
    assert _sandboxes(Task(dataset=plain), plain) == ((), False)


def test_an_unknown_provider_on_the_last_sample_is_refused_naming_it() -> None:
    samples = _many(Sample(input="x", id="boxed", sandbox="dockr"))
    with pytest.raises(ConfigError) as caught:
        _sandboxes(Task(dataset=samples), samples)
    assert "dockr" in str(caught.value)


def test_an_item_that_is_not_a_sample_after_many_is_refused_at_its_index() -> None:
    with pytest.raises(ConfigError) as caught:
        MemoryDataset([*_many(Sample(input="x")), {"input": 1}], "mine")  # type: ignore[list-item]
    assert caught.value.key == "dataset.not_sample"
    assert "mine: samples[501]" in str(caught.value)
