"""MemoryDataset's list operations, the shuffle's determinism, and freeze's id rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.dataset import MemoryDataset, Sample, freeze
from assay.errors import ConfigError


def _dataset(n: int = 10, name: str | None = "ten") -> MemoryDataset:
    return MemoryDataset([Sample(input=i, target=i % 3) for i in range(n)], name)


def _inputs(dataset: MemoryDataset) -> list[object]:
    return [s.input for s in dataset]


# --- list operations ---------------------------------------------------------------


def test_a_dataset_is_a_sequence() -> None:
    dataset = _dataset()
    assert len(dataset) == 10
    assert dataset[0].input == 0 and dataset[-1].input == 9
    assert _inputs(dataset) == list(range(10))
    assert dataset[3] in dataset
    assert dataset.index(dataset[4]) == 4
    assert repr(dataset) == "MemoryDataset(name='ten', samples=10)"


def test_default_name_and_any_iterable() -> None:
    dataset = MemoryDataset(Sample(input=i) for i in range(3))
    assert dataset.name == "memory"
    assert len(dataset) == 3


def test_slicing_gives_a_new_dataset() -> None:
    dataset = _dataset()
    part = dataset[2:8:2]
    assert isinstance(part, MemoryDataset)
    assert part.name == "ten"
    assert _inputs(part) == [2, 4, 6]
    assert _inputs(dataset[-2:]) == [8, 9]
    assert _inputs(dataset) == list(range(10))


def test_filter_sort_and_shuffle_leave_the_original_alone() -> None:
    dataset = _dataset()
    kept = dataset.filter(lambda s: s.target == 0)
    ordered = dataset.sort(key=lambda s: (s.target, -s.input))
    backwards = dataset.sort(key=lambda s: s.input, reverse=True)
    shuffled = dataset.shuffle(seed=1)
    assert _inputs(kept) == [0, 3, 6, 9]
    assert _inputs(ordered) == [9, 6, 3, 0, 7, 4, 1, 8, 5, 2]
    assert _inputs(backwards) == list(range(9, -1, -1))
    assert sorted(_inputs(shuffled)) == list(range(10)) != _inputs(shuffled)
    assert _inputs(dataset) == list(range(10))
    assert {d.name for d in (kept, ordered, backwards, shuffled)} == {"ten"}


def test_derived_datasets_do_not_share_their_list() -> None:
    dataset = _dataset()
    for derived in (dataset[:], dataset.filter(lambda s: True), dataset.shuffle(seed=0)):
        derived.samples.append(Sample(input="new"))
    assert len(dataset) == 10


def test_shuffle_without_a_seed_still_permutes() -> None:
    dataset = _dataset(50)
    assert sorted(_inputs(dataset.shuffle())) == list(range(50))


@pytest.mark.parametrize("item", [{"input": 1}, "text", None])
def test_items_must_be_samples(item: object) -> None:
    with pytest.raises(ConfigError) as info:
        MemoryDataset([Sample(input=0), item], "mine")  # type: ignore[list-item]
    assert info.value.key == "dataset.not_sample"
    assert "mine: samples[1]" in str(info.value)


# --- the shuffle is deterministic --------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(), max_size=60), st.integers(min_value=-(2**64), max_value=2**64))
def test_shuffle_is_a_deterministic_permutation(values: list[int], seed: int) -> None:
    dataset = MemoryDataset([Sample(input=v) for v in values])
    first = dataset.shuffle(seed)
    again = dataset.shuffle(seed)
    assert _inputs(first) == _inputs(again)
    assert sorted(_inputs(first)) == sorted(values)
    assert _inputs(dataset) == values


_CHILD = """
import json, sys
from assay.dataset import MemoryDataset, Sample
dataset = MemoryDataset([Sample(input=i) for i in range(100)])
print(json.dumps([s.input for s in dataset.shuffle(int(sys.argv[1]))]))
"""


@pytest.mark.parametrize("hash_seed", ["0", "1", "random"])
def test_shuffle_is_the_same_in_another_process(hash_seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, "42"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    assert json.loads(proc.stdout) == _inputs(_dataset(100).shuffle(42))


def test_shuffle_order_is_pinned() -> None:
    """The order for a seed is part of a run's identity: it must not drift between versions."""
    assert _inputs(_dataset().shuffle(42)) == [7, 3, 2, 8, 5, 6, 9, 4, 0, 1]


# --- freeze ------------------------------------------------------------------------


def test_freeze_numbers_missing_ids_by_position() -> None:
    frozen = freeze([Sample(input="a"), Sample(input="b", id="x"), Sample(input="c")], "set")
    assert frozen.ids == ["1", "x", "3"]
    assert [s.id for s in frozen] == [1, "x", 3]
    assert frozen.display == "set"


def test_freeze_digest_is_stable_and_content_bound() -> None:
    samples = [Sample(input="a", target="1"), Sample(input="b", target="2")]
    assert freeze(samples, "one").digest == freeze(list(samples), "two").digest
    changed = [samples[0], Sample(input="b", target="3")]
    assert freeze(changed, "one").digest != freeze(samples, "one").digest


def _duplicate(samples: list[Sample]) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        freeze(samples, "set")
    assert info.value.key == "dataset.duplicate_id"
    return info.value


def test_duplicate_ids_name_both_positions() -> None:
    error = _duplicate([Sample(input=0, id="a"), Sample(input=1, id="b"), Sample(input=2, id="a")])
    assert (error.params["line"], error.params["first"], error.params["sample_id"]) == (3, 1, "a")
    assert "set:3" in str(error) and "line 1" in str(error) and "'a'" in str(error)


def test_an_explicit_id_colliding_with_a_number_is_a_duplicate() -> None:
    error = _duplicate([Sample(input=0), Sample(input=1), Sample(input=2, id=2)])
    assert (error.params["line"], error.params["first"]) == (3, 2)


@pytest.mark.parametrize(("first", "second"), [(7, "7"), ("7", 7)])
def test_int_and_str_spellings_of_an_id_collide(first: int | str, second: int | str) -> None:
    error = _duplicate([Sample(input=0, id=first), Sample(input=1, id=second)])
    assert (error.params["line"], error.params["first"]) == (2, 1)


def test_freezing_nothing_is_an_error() -> None:
    with pytest.raises(ConfigError) as info:
        freeze(MemoryDataset([]), "set")
    assert info.value.key == "dataset.empty"
