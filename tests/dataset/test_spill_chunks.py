"""The fast paths of a run's start and of its trials' samples, pinned to the general ones.

``freeze`` encodes, checks and digests a batch of samples in one C call each when every
sample has an id and none has chat input; a frozen dataset's samples are decoded a block
of lines at a time when a run asks for them in order. Whatever a batch or a block holds,
the lines, ids, digest, errors and samples must be those of one sample at a time.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec
import pytest

from assay.dataset import MemoryDataset, Sample, freeze, select
from assay.dataset._jsonl import Dataset
from assay.dataset._memory import LineSamples, SampleView, spill
from assay.dataset._spill import SpilledLines
from assay.errors import ConfigError
from assay.model import ChatMessage, ContentImage

_encode = msgspec.json.Encoder(order="sorted").encode


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("assay.dataset._memory.SPILL_BATCH", 3)


def _general(samples: list[Sample]) -> tuple[list[bytes], str, list[str]]:
    """What one sample at a time (``spill``'s own loop) makes of *samples*."""
    lines, digest, ids = spill(enumerate(samples, start=1), "mem")
    return list(lines), digest, list(ids)


def _made(samples: list[Sample]) -> tuple[list[bytes], str, list[str]]:
    frozen = freeze(samples, "mem")
    return [frozen._lines[i] for i in range(len(frozen))], frozen.digest, list(frozen.ids)


def _varied(count: int) -> list[Sample]:
    ids: list[str | int] = ["s", "ü", 7, "a\nb", "x" * 100]
    return [
        Sample(
            input={"q": i, "text": "é\n"} if i % 2 else f"q{i}",
            target=[i] if i % 3 else "t",
            id=f"{ids[i % 5]}{i}" if i % 5 != 2 else 1000 + i,
            metadata={"k": i % 4} if i % 4 else {},
            choices=["a", "b"] if i % 6 == 1 else None,
        )
        for i in range(count)
    ]


@pytest.mark.parametrize("count", [1, 3, 4, 7, 9])
def test_batches_of_samples_with_ids_make_what_one_at_a_time_makes(count: int) -> None:
    samples = _varied(count)
    assert _made(samples) == _general(samples)


def test_a_batch_with_an_unnamed_sample_is_numbered_as_one_at_a_time() -> None:
    samples = _varied(7)
    samples[4] = msgspec.structs.replace(samples[4], id=None)
    made = _made(samples)
    assert made == _general(samples)
    assert made[2][4] == "5"


def test_a_chat_sample_s_images_are_pinned_in_a_batch_of_named_samples(tmp_path: Path) -> None:
    image = tmp_path / "red.png"
    image.write_bytes(b"red")
    chat = [ChatMessage("user", [ContentImage(str(image))])]
    samples = [Sample(input=chat if i == 4 else f"q{i}", id=f"s{i}") for i in range(6)]
    pin = b"\x00image " + str(image).encode() + b" " + hashlib.sha256(b"red").hexdigest().encode()
    lines = [_encode(s) + (pin if i == 4 else b"") for i, s in enumerate(samples)]
    assert _made(samples) == _general(samples)
    assert _made(samples)[1] == "sha256:" + hashlib.sha256(b"\n".join(lines)).hexdigest()


def test_an_unencodable_sample_in_a_batch_is_named_by_its_position() -> None:
    samples = [Sample(input=i, id=f"s{i}") for i in range(6)]
    samples[4] = Sample(input=object(), id="s4")
    with pytest.raises(ConfigError) as caught:
        freeze(samples, "mem")
    assert caught.value.key == "dataset.sample_json" and caught.value.params["line"] == 5


def test_a_repeated_id_across_batches_is_refused_naming_both() -> None:
    samples = [Sample(input=i, id=f"s{i}") for i in range(8)]
    samples[6] = Sample(input=6, id="s1")
    with pytest.raises(ConfigError) as caught:
        freeze(samples, "mem")
    assert (caught.value.params["line"], caught.value.params["first"]) == (7, 2)


def _views(tmp_path: Path) -> list[SampleView]:
    listed = [Sample(input=i, id=None if i % 3 == 0 else f"s{i}") for i in range(8)]
    lines, digest, ids = spill(enumerate(listed, start=1), "mem")
    loaded = LineSamples(lines, digest, ids)
    views = []
    for base in (listed, loaded):
        for number in (True, False):
            views += [
                SampleView(base, range(8), number=number),
                SampleView(base, range(2, 7), number=number),
                SampleView(base, msgspec.json.decode(b"[5,0,3,3]", type=list[int]), number=number),
            ]
    return views


def test_a_view_s_chunks_are_its_samples_one_by_one(tmp_path: Path) -> None:
    for view in _views(tmp_path):
        one_by_one = [view[i] for i in range(len(view))]
        for size in (1, 2, 3, 100):
            assert [s for chunk in view.chunks(size) for s in chunk] == one_by_one
        assert list(view) == one_by_one


def test_a_window_of_a_view_is_frozen_as_its_samples_one_by_one(tmp_path: Path) -> None:
    samples = [Sample(input=i, id=None if i % 3 == 0 else f"s{i}") for i in range(10)]
    chosen = select(MemoryDataset(samples), limit=(2, 9))
    frozen = freeze(chosen, "mem")
    assert list(frozen.ids) == [str(s.id) for s in chosen]  # numbered by position
    assert frozen.digest == _general(list(chosen))[1]


def _dataset(samples: list[Sample]) -> Dataset:
    return freeze(samples, "mem")


@pytest.mark.parametrize("ahead", [1, 40, 1 << 16])  # a line a block, a few, all
def test_samples_asked_in_any_order_are_their_lines_decoded(
    monkeypatch: pytest.MonkeyPatch, ahead: int
) -> None:
    monkeypatch.setattr("assay.dataset._spill.READ_AHEAD", ahead)
    samples = _varied(9)
    samples[5] = Sample(input="x" * 200, id="long")  # longer than a block
    asks = [0, 0, 1, 2, 2, 2, 7, 3, 4, 5, 5, 6, 8, 1, 0, 8]
    dataset = _dataset(samples)
    got = [dataset.sample(i) for i in asks]
    assert got == [samples[i] for i in asks]
    assert len({id(s) for s in got}) == len(asks)  # each ask a sample of its own
    assert list(dataset) == samples


def test_a_scratch_file_s_blocks_are_its_lines_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("assay.dataset._spill.READ_AHEAD", 10)
    lines = SpilledLines()
    given = [b"a", b"bbbbbbbbbbbbbbbbbbbb", b"", b"cc", b"d" * 9, b"e"]
    lines.append(given[0])
    lines.extend(given[1:3])
    lines.extend(given[3:], b"".join(line + b"\n" for line in given[3:]))
    assert list(lines) == given and [lines[i] for i in (5, 1, 0, 4)] == [
        given[i] for i in (5, 1, 0, 4)
    ]
    blocks = list(lines.blocks())
    assert b"".join(blocks) == b"".join(line + b"\n" for line in given)
    assert all(block.endswith(b"\n") for block in blocks) and len(blocks) > 1
    assert b"".join(lines.blocks(3)) == b"cc\nddddddddd\ne\n"
