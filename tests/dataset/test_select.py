"""select(): limit and sample_id, on numbered and unnumbered datasets of every kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.dataset import MemoryDataset, Sample, freeze, load_jsonl, select
from assay.errors import ConfigError


def _unnumbered(n: int = 10) -> MemoryDataset:
    return MemoryDataset([Sample(input=f"q{i}") for i in range(1, n + 1)], "set")


def _ids(dataset: MemoryDataset) -> list[object]:
    return [s.id for s in dataset]


def _error(dataset: object, **options: object) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        select(dataset, **options)  # type: ignore[arg-type]
    return info.value


def test_nothing_asked_keeps_everything_numbered() -> None:
    dataset = _unnumbered(3)
    selected = select(dataset)
    assert _ids(selected) == [1, 2, 3]
    assert selected.name == "set"
    assert _ids(dataset) == [None, None, None]


def test_limit_keeps_the_first_n() -> None:
    assert _ids(select(_unnumbered(), limit=3)) == [1, 2, 3]
    assert _ids(select(_unnumbered(), limit=0)) == []
    assert len(select(_unnumbered(), limit=99)) == 10


def test_limit_pair_is_a_slice_and_ids_stay_those_of_the_whole() -> None:
    assert _ids(select(_unnumbered(), limit=(5, 8))) == [6, 7, 8]
    assert _ids(select(_unnumbered(), limit=(8, 20))) == [9, 10]
    assert _ids(select(_unnumbered(), limit=(4, 4))) == []


def test_sample_id_on_an_unnumbered_dataset() -> None:
    (sample,) = select(_unnumbered(), sample_id=3)
    assert (sample.id, sample.input) == (3, "q3")


def test_sample_ids_keep_dataset_order_and_match_as_text() -> None:
    dataset = MemoryDataset(
        [Sample(input="a", id="x"), Sample(input="b", id=5), Sample(input="c")], "set"
    )
    assert _ids(select(dataset, sample_id=["3", "x", 5])) == ["x", 5, 3]
    assert _ids(select(dataset, sample_id="5")) == [5]
    assert _ids(select(dataset, sample_id=("x",))) == ["x"]


def test_sample_id_then_limit() -> None:
    assert _ids(select(_unnumbered(), sample_id=[9, 2, 5, 7], limit=2)) == [2, 5]
    assert _ids(select(_unnumbered(), sample_id=[9, 2, 5, 7], limit=(1, 3))) == [5, 7]
    # a run's record read back from JSON gives the pair as a list: the same window
    assert _ids(select(_unnumbered(), sample_id=[9, 2, 5, 7], limit=[1, 3])) == [5, 7]


def test_unknown_sample_ids_are_all_named() -> None:
    error = _error(_unnumbered(), sample_id=[2, 11, "zz"])
    assert error.key == "dataset.unknown_id"
    text = str(error)
    assert text.startswith("set: no sample has the id 11, 'zz'")
    assert "numbered 1..n" in text


def test_unknown_single_id() -> None:
    assert "'q1'" in str(_error(_unnumbered(), sample_id="q1"))


@pytest.mark.parametrize(
    "limit",
    [-1, True, 1.5, "3", (1,), (1, 2, 3), (3, 1), (-1, 2), (0, None), [0, None], [1], [0, 2, 3]],
)
def test_malformed_limits(limit: object) -> None:
    error = _error(_unnumbered(), limit=limit)
    assert error.key == "dataset.limit"
    assert repr(limit) in str(error)


def test_a_limit_pair_read_back_from_json_is_a_list_and_selects_the_same() -> None:
    assert _ids(select(_unnumbered(), limit=[3, 5])) == _ids(select(_unnumbered(), limit=(3, 5)))
    assert _ids(select(_unnumbered(), limit=[3, 5])) == [4, 5]


def test_select_leaves_the_dataset_alone() -> None:
    dataset = _unnumbered(4)
    select(dataset, limit=2)
    select(dataset, sample_id=[1])
    assert len(dataset) == 4 and _ids(dataset) == [None] * 4


def test_selected_ids_survive_freeze() -> None:
    """Numbering in select and in freeze agree, so a subset plans the ids of the whole."""
    assert freeze(select(_unnumbered(), limit=(3, 5)), "set").ids == ["4", "5"]


def test_select_from_a_jsonl_dataset(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    records = [{"id": f"s{i}", "input": i, "expected": i} for i in range(5)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    selected = select(load_jsonl(path, "set.jsonl"), sample_id=["s3", "s1"])
    assert _ids(selected) == ["s1", "s3"]
    assert selected.name == "set.jsonl"


def test_select_from_a_plain_list() -> None:
    selected = select([Sample(input="a"), Sample(input="b")], sample_id=2)
    assert (selected.name, _ids(selected)) == ("memory", [2])
