"""Loaded and frozen datasets keep an offset per sample, not a Python object per sample.

What must not change: the samples a loader gives, their order after filter / sort /
shuffle / slicing / select, the frozen lines and digest (the spec digest), and the
duplicate-id and empty-dataset errors.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import msgspec
import pytest

from assay.dataset import MemoryDataset, Sample, freeze, json_dataset, select
from assay.dataset._spill import HashSet, PackedText, SpilledLines
from assay.errors import ConfigError

_encode = msgspec.json.Encoder(order="sorted").encode


def _records(count: int) -> list[dict[str, object]]:
    records: list[dict[str, object]] = []
    for i in range(count):
        record: dict[str, object] = {"input": f"q{i}", "target": str(i % 3), "k": i % 4}
        if i % 5:  # some without an id: numbered by position
            record["id"] = f"s{i}"
        records.append(record)
    return records


def _loaded(tmp_path: Path, count: int = 40) -> MemoryDataset:
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records(count)))
    return json_dataset(path)


def _in_memory(dataset: MemoryDataset) -> MemoryDataset:
    return MemoryDataset(list(dataset), dataset.name)


def _old_digest(samples: list[Sample]) -> str:
    """The digest freeze gave when it held every line in a list."""
    numbered = [
        s if s.id is not None else msgspec.structs.replace(s, id=n)
        for n, s in enumerate(samples, start=1)
    ]
    return "sha256:" + hashlib.sha256(b"\n".join(_encode(s) for s in numbered)).hexdigest()


def test_a_loaded_dataset_is_not_a_list_of_samples(tmp_path: Path) -> None:
    dataset = _loaded(tmp_path)
    assert not isinstance(dataset.samples, list)
    assert len(dataset) == 40
    assert dataset[7] == Sample(input="q7", target="1", id="s7", metadata={"k": 3})
    assert dataset[5].id == 6  # no id in the file: its position
    assert dataset[-1] == list(dataset)[-1]


def test_views_give_what_the_list_gives(tmp_path: Path) -> None:
    lazy = _loaded(tmp_path)
    eager = _in_memory(lazy)
    for derive in (
        lambda d: d.filter(lambda s: s.metadata["k"] == 1),
        lambda d: d.sort(lambda s: (s.target, str(s.id)), reverse=True),
        lambda d: d.shuffle(seed=7),
        lambda d: d[3:30:2],
        lambda d: d.shuffle(seed=3)[5:9].filter(lambda s: s.target != "0"),
        lambda d: select(d, sample_id=["s3", 6, "s39"]),
        lambda d: select(d.shuffle(seed=1), limit=(2, 12)),
    ):
        got, want = derive(lazy), derive(eager)
        assert not isinstance(got.samples, list)
        assert list(got) == list(want)
        assert freeze(got, "x").digest == freeze(want, "x").digest


@pytest.mark.parametrize("number", [False, True])
def test_walking_a_view_gives_what_indexing_it_gives(number: bool) -> None:
    """A view's walk (a run's start walks its samples twice) is its items by index:
    with *number*, a sample without an id gets its position in the base + 1."""
    from assay.dataset._memory import SampleView

    base = [Sample(input=i, id=None if i % 3 else f"s{i}") for i in range(20)]
    view = SampleView(base, range(1, 20, 2), number=number)
    assert list(view) == [view[i] for i in range(len(view))]
    named = {3: "s3", 9: "s9", 15: "s15"}
    want = [named.get(p, p + 1 if number else None) for p in range(1, 20, 2)]
    assert [sample.id for sample in view] == want


def test_freezing_a_loaded_dataset_keeps_the_digest_it_always_had(tmp_path: Path) -> None:
    lazy = _loaded(tmp_path)
    samples = list(lazy)
    frozen = freeze(select(lazy), "set")
    assert frozen.digest == _old_digest(samples) == freeze(samples, "set").digest
    assert list(frozen.ids) == [str(s.id) for s in samples]
    assert [frozen.sample(i) for i in range(len(frozen))] == samples


def test_select_numbers_by_position_in_the_whole_dataset() -> None:
    dataset = MemoryDataset([Sample(input=i) for i in range(10)])
    chosen = select(dataset, sample_id=[3, "7"], limit=1)
    assert [(s.id, s.input) for s in chosen] == [(3, 2)]
    assert [s.id for s in dataset] == [None] * 10  # the user's samples are left alone


def test_duplicate_ids_are_still_refused_with_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    lines = [{"id": "a", "input": 1}, {"id": "b", "input": 2}, {}, {"id": "a", "input": 3}]
    path.write_text("\n".join(json.dumps(r) for r in lines[:2]) + "\n\n" + json.dumps(lines[3]))
    with pytest.raises(ConfigError) as caught:
        json_dataset(path)
    assert caught.value.params["line"] == 4 and caught.value.params["first"] == 1
    with pytest.raises(ConfigError) as frozen:
        freeze([Sample(input=1), Sample(input=2, id="1")], "mem")
    assert frozen.value.params["line"] == 2 and frozen.value.params["first"] == 1


def test_a_hash_collision_is_not_a_duplicate(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.dataset import _memory

    monkeypatch.setattr(_memory, "hash", lambda value: 42, raising=False)  # all collide
    frozen = freeze([Sample(input=i, id=f"x{i}") for i in range(50)], "mem")
    assert len(frozen) == 50
    with pytest.raises(ConfigError):
        freeze([Sample(input=1, id="x"), Sample(input=2, id="y"), Sample(input=3, id="x")], "m")


@pytest.mark.parametrize("first", [2, 6])  # met while in the set, or past it
def test_ids_past_the_small_set_are_checked_by_their_hashes(
    monkeypatch: pytest.MonkeyPatch, first: int
) -> None:
    """The first ``SMALL`` ids are held in a set, the rest by hash (and the set's moved
    there): a duplicate is refused wherever the two fall, with both positions."""
    from assay.dataset import _ids

    monkeypatch.setattr(_ids, "SMALL", 4)
    samples = [Sample(input=i, id=f"x{i}") for i in range(1, 10)]
    assert len(freeze(samples, "mem")) == 9
    again = Sample(input=0, id=f"x{first}")
    with pytest.raises(ConfigError) as caught:
        freeze([*samples, again], "mem")
    assert caught.value.params["line"] == 10 and caught.value.params["first"] == first
    monkeypatch.setattr(_ids, "hash", lambda value: 42, raising=False)  # all collide
    assert len(freeze(samples, "mem")) == 9


def test_the_compact_stores() -> None:
    lines = SpilledLines()
    for i in range(3000):
        lines.append(b"line %d" % i)
    assert len(lines) == 3000 and lines[1234] == b"line 1234" and lines[-1] == b"line 2999"
    assert list(lines)[:2] == [b"line 0", b"line 1"] and lines[1:3] == [b"line 1", b"line 2"]
    with pytest.raises(IndexError):
        lines[3000]
    text = PackedText()
    for word in ["a", "ünï", "", "x" * 300]:
        text.append(word)
    assert list(text) == ["a", "ünï", "", "x" * 300] == text
    assert text[1] == "ünï" and text[-1] == "x" * 300
    seen = HashSet()
    added = [seen.add(v) for v in (1, 2, 1, -5, 2**62 + 3, -5)]
    assert added == [False, False, True, False, False, True]
    assert not any(seen.add(v) for v in range(10, 5000))  # grows past its first table
    assert all(seen.add(v) for v in range(10, 5000))


def test_spilled_lines_read_in_order_random_and_while_appending() -> None:
    # lines read in order come from a block read ahead: lines appended after that read,
    # lines longer than the block, and reads out of order must all give what was appended
    lines = SpilledLines()
    written = [(b"%d," % i) * (1 + (i * 7919) % 9000) for i in range(400)]
    for line in written[:150]:
        lines.append(line)
    assert [lines[i] for i in range(100)] == written[:100]
    for line in written[150:]:
        lines.append(line)
    assert [lines[i] for i in range(100, 400)] == written[100:]
    order = [(i * 131) % 400 for i in range(400)]
    assert [lines[i] for i in order] == [written[i] for i in order]
    assert lines[-1] == written[-1] and lines[10:14] == written[10:14]
