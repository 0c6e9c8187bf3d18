"""``spill`` checks, digests and writes samples a batch at a time: the lines, ids, digest
and errors must be those of one sample at a time, wherever the batches' edges fall."""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec
import pytest

from assay.dataset import Sample, freeze
from assay.dataset._memory import spill
from assay.errors import ConfigError
from assay.model import ChatMessage, ContentImage, ContentText

_encode = msgspec.json.Encoder(order="sorted").encode


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("assay.dataset._memory.SPILL_BATCH", 3)


def _one_at_a_time(samples: list[Sample], pins: dict[int, bytes]) -> str:
    """The digest of the lines joined by newlines, each followed by its images' pins."""
    numbered = [
        s if s.id is not None else msgspec.structs.replace(s, id=n)
        for n, s in enumerate(samples, start=1)
    ]
    lines = [_encode(s) + pins.get(i, b"") for i, s in enumerate(numbered)]
    return "sha256:" + hashlib.sha256(b"\n".join(lines)).hexdigest()


@pytest.mark.parametrize("count", [1, 2, 3, 4, 6, 7])
def test_batches_give_the_lines_ids_and_digest_of_one_sample_at_a_time(count: int) -> None:
    samples = [
        Sample(input=f"q{i}", target="t", id=[f"s{i}", None, f"ü{i}", i + 100][i % 4])
        for i in range(count)
    ]
    frozen = freeze(samples, "mem")
    numbered = [s.id if s.id is not None else n for n, s in enumerate(samples, start=1)]
    assert list(frozen.ids) == [str(i) for i in numbered]
    assert frozen.digest == _one_at_a_time(samples, {})
    assert [frozen._lines[i] for i in range(count)] == [
        _encode(msgspec.structs.replace(s, id=n)) for s, n in zip(samples, numbered, strict=True)
    ]


def test_images_of_a_sample_are_pinned_after_its_line_in_any_batch(tmp_path: Path) -> None:
    red, blue = tmp_path / "red.png", tmp_path / "blue.png"
    red.write_bytes(b"red")
    blue.write_bytes(b"blue")
    both = ChatMessage("user", [ContentImage(str(red)), ContentText("?"), ContentImage(str(blue))])
    samples = [
        Sample(input=[both] if i in (2, 4) else "plain", target="t", id=f"s{i}") for i in range(6)
    ]
    pin = b"".join(
        b"\x00image " + str(p).encode() + b" " + hashlib.sha256(p.read_bytes()).hexdigest().encode()
        for p in (red, blue)
    )
    _, digest, _ = spill(enumerate(samples, start=1), "mem")
    assert digest == _one_at_a_time(samples, {2: pin, 4: pin})


@pytest.mark.parametrize(
    ("ids", "line", "first"),
    [
        (["a", "b", "a", "c"], 3, 1),  # within a batch
        (["a", "b", "c", "d", "b"], 5, 2),  # across batches
        (["a", "b", "c", "d", "e", "e", "a"], 6, 5),  # the first repeat, not a later one
        (["a", 7, "7"], 3, 2),  # an int id and its text are the same id
    ],
)
def test_the_first_repeated_id_is_refused_naming_both_positions(
    ids: list[str | int], line: int, first: int
) -> None:
    with pytest.raises(ConfigError) as caught:
        freeze([Sample(input=i, id=sid) for i, sid in enumerate(ids)], "mem")
    assert caught.value.key == "dataset.duplicate_id"
    assert (caught.value.params["line"], caught.value.params["first"]) == (line, first)


def test_a_repeated_id_before_an_unencodable_sample_in_its_batch_is_said_first() -> None:
    """One at a time, the repeated id comes first; the batch must say the same."""
    samples = [Sample(input=1, id="a"), Sample(input=2, id="a"), Sample(input=object(), id="c")]
    with pytest.raises(ConfigError) as caught:
        freeze(samples, "mem")
    assert caught.value.key == "dataset.duplicate_id"
    with pytest.raises(ConfigError) as encoding:
        freeze([samples[0], samples[2]], "mem")
    assert encoding.value.key == "dataset.sample_json"
    assert encoding.value.params["line"] == 2
