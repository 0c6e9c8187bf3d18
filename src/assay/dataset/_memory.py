"""Python datasets: samples in memory, with the usual list operations.

A dataset in code becomes the same raw-line ``Dataset`` a JSONL file does before a run
(``freeze``): ids are filled in as 1..n where missing, duplicates are refused, and the
digest is taken over the canonical lines, so a Python dataset is pinned like a file.

Freezing streams: each sample is encoded and written to a scratch file as it is met,
so a run keeps an offset per sample, not a second copy of the dataset. A dataset
loaded from a file (``json_dataset``, ``csv_dataset``) is kept the same way from the
start (``LineSamples``), and ``filter``, ``sort``, ``shuffle``, slicing and ``select``
of such a dataset are views (``SampleView``: positions into it), so a sample becomes a
Python object only while something looks at it.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice, repeat
from operator import attrgetter
from pathlib import Path
from typing import Any, overload

import msgspec

from assay._digest import file_sha256
from assay.dataset._choices import dataset_seed, shuffled_choices
from assay.dataset._ids import IdCheck
from assay.dataset._jsonl import Dataset
from assay.dataset._sample import Sample
from assay.dataset._spill import PackedText, SpilledLines, positions_of
from assay.dataset._views import LineSamples, SampleView
from assay.errors import ConfigError

_encoder = msgspec.json.Encoder(order="sorted")
_encode, _encode_lines = _encoder.encode, _encoder.encode_lines

DEFAULT_NAME = "memory"

_ID, _INPUT = attrgetter("id"), attrgetter("input")

__all__ = ["DEFAULT_NAME", "LineSamples", "MemoryDataset", "SampleView", "freeze", "spill"]


def _is_lazy(samples: Sequence[Sample]) -> bool:
    return isinstance(samples, LineSamples | SampleView)


class MemoryDataset(Sequence[Sample]):
    """A list of samples with ``filter``, ``sort``, ``shuffle`` and slicing.

    Every operation returns a new dataset and leaves this one as it was, so a task can
    derive subsets of one loaded dataset without the subsets seeing each other.
    """

    def __init__(
        self,
        samples: Iterable[Sample],
        name: str | None = None,
        location: str | None = None,
        *,
        source: str | None = None,
    ) -> None:
        self.name = name or DEFAULT_NAME
        self.location = location  # the file's folder: sample files are read relative to it
        # Where the samples came from when the name alone does not say it (hf_dataset's
        # path, config, revision and split): a run records it as its dataset, in the spec.
        self.source = source
        if isinstance(samples, LineSamples | SampleView):
            self.samples: Sequence[Sample] = samples  # samples by construction
            return
        self.samples = list(samples)
        if all(issubclass(kind, Sample) for kind in set(map(type, self.samples))):
            return  # the types gathered in C: no Python step a sample (100,000 at a start)
        for index, sample in enumerate(self.samples):
            if not isinstance(sample, Sample):
                # Caught here, where the list was built, not deep inside a run.
                raise ConfigError(
                    "dataset.not_sample", name=self.name, index=index, kind=type(sample).__name__
                )

    def __repr__(self) -> str:
        return f"MemoryDataset(name={self.name!r}, samples={len(self.samples)})"

    def __len__(self) -> int:
        return len(self.samples)

    @overload
    def __getitem__(self, index: int) -> Sample: ...

    @overload
    def __getitem__(self, index: slice) -> MemoryDataset: ...

    def __getitem__(self, index: int | slice) -> Sample | MemoryDataset:
        if isinstance(index, slice):
            return self._derived(self.samples[index])
        return self.samples[index]

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def filter(self, predicate: Callable[[Sample], bool]) -> MemoryDataset:
        """The samples for which *predicate* is true."""
        if _is_lazy(self.samples):
            kept = [i for i, s in enumerate(self.samples) if predicate(s)]
            return self._view(kept)
        return self._derived([s for s in self.samples if predicate(s)])

    def sort(self, key: Callable[[Sample], Any], reverse: bool = False) -> MemoryDataset:
        """The samples ordered by *key*."""
        if _is_lazy(self.samples):
            keys = [key(s) for s in self.samples]
            return self._view(sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse))
        return self._derived(sorted(self.samples, key=key, reverse=reverse))

    def _view(self, positions: Sequence[int]) -> MemoryDataset:
        base = self.samples
        if isinstance(base, SampleView) and not base.number:  # a view of a view: one
            positions, base = [base.positions[p] for p in positions], base.base
        return self._derived(SampleView(base, positions_of(positions)))

    def _derived(self, samples: Iterable[Sample]) -> MemoryDataset:
        """A dataset of *samples* with this one's name, folder and source."""
        return MemoryDataset(samples, self.name, self.location, source=self.source)

    def shuffle(self, seed: int | None = None) -> MemoryDataset:
        """The samples in a random order; the same *seed* gives the same order anywhere.

        ``random.Random(seed)`` with an integer seed does not depend on the process or
        its hash seed, so a shuffled dataset is as reproducible as the seed is recorded.
        Without a seed, each call gives a new order.
        """
        if _is_lazy(self.samples):
            # shuffle depends only on the length: the same order a list would get
            order = list(range(len(self.samples)))
            random.Random(seed).shuffle(order)
            return self._view(order)
        shuffled = list(self.samples)
        random.Random(seed).shuffle(shuffled)
        return self._derived(shuffled)

    def shuffle_choices(self, seed: int | None = None) -> MemoryDataset:
        """The samples with their choices shuffled and their target letters remapped.

        A sample's new order depends only on *seed* and its id (see ``_choices``);
        without a seed, one is drawn for the whole call. As ``shuffle``, this returns a
        new dataset: write ``dataset = dataset.shuffle_choices(42)``.

        Raises:
            ConfigError: a sample with choices has a target that is not the letter of
                one of them (or a list of such letters).
        """
        drawn = dataset_seed(seed)
        shuffled = (
            shuffled_choices(sample, drawn, position, self.name)
            for position, sample in enumerate(self.samples, start=1)
        )
        if not _is_lazy(self.samples):
            return self._derived(list(shuffled))
        lines, digest, ids = spill(enumerate(shuffled, start=1), self.name)  # stays on disk
        return self._derived(LineSamples(lines, digest, ids))


def spill(
    samples: Iterable[tuple[int, Sample]], display: str
) -> tuple[SpilledLines, str, PackedText]:
    """Number, check and encode *samples* (each with the position errors name: a file
    line, or a 1-based index) into a scratch file, ``SPILL_BATCH`` at a time.

    A sample without an id gets its 1-based index. Returns the lines, the digest over
    them joined by newlines, and the ids.
    """
    spilled = _Spill(display)
    spilled.take(samples)
    return spilled.done()


SPILL_BATCH = 1024
"""Samples checked, digested and written at once by ``spill`` (a C call each, not one
a sample)."""


class _Spill:
    """``spill``'s batch: the lines, ids and positions since the last ``flush``."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.spilled = SpilledLines()
        self.check = IdCheck(display)
        self.digest = hashlib.sha256()
        self.lines: list[bytes] = []
        self.sample_ids: list[str | int] = []
        self.positions: list[int] = []
        self.pins: dict[int, bytes] = {}  # a line's image files' digests, by batch index

    def take(self, samples: Iterable[tuple[int, Sample]]) -> None:
        """Number, check and encode *samples*, one at a time, flushing every batch."""
        lines, ids, positions = self.lines, self.sample_ids, self.positions
        for number, (position, sample) in enumerate(samples, start=self.count + 1):
            if sample.id is None:
                sample = msgspec.structs.replace(sample, id=number)
            ids.append(sample.id)  # type: ignore[arg-type]  # set just above
            positions.append(position)
            try:
                line = _encode(sample)
            except (TypeError, msgspec.EncodeError) as exc:  # an image, an array: said here
                self.flush()  # a repeated id up to this sample is said first, as it comes first
                raise ConfigError(
                    "dataset.sample_json", path=self.display, line=position, reason=str(exc)
                ) from None
            if isinstance(sample.input, list):  # chat messages: they may name image files
                pins = [
                    b"\x00image " + i.encode() + b" " + _file_digest(i)
                    for i in _image_files(sample.input)
                ]
                if pins:
                    self.pins[len(lines)] = b"".join(pins)
            lines.append(line)
            if len(lines) == SPILL_BATCH:
                self.flush()

    def take_chunk(self, chunk: list[Sample]) -> None:
        """``take`` of *chunk* (a whole batch, numbered on from the samples before it):
        encoded, checked and digested in one C call each when every sample has an id
        and none has chat input (which may name image files); else one at a time."""
        first = self.count + 1
        ids = list(map(_ID, chunk))
        if self.lines or None in ids or _any_list(chunk):
            self.take(enumerate(chunk, start=first))
            return
        try:
            joined = _encode_lines(chunk)  # each line followed by a newline
        except (TypeError, msgspec.EncodeError):  # said by ``take``, at its sample
            self.take(enumerate(chunk, start=first))
            return
        lines = joined.split(b"\n")  # JSON text holds no raw newline: one a line
        lines.pop()
        self._store(lines, ids, range(first, first + len(chunk)), joined)

    @property
    def count(self) -> int:
        """Samples taken so far (each gives a line, or an error)."""
        return len(self.spilled) + len(self.lines)

    def flush(self) -> None:
        """Check the batch's ids, then digest and store its lines."""
        lines, pins = self.lines, self.pins
        if pins:  # each line followed by its images' digests
            pinned = b"\n".join([line + pins.get(i, b"") for i, line in enumerate(lines)])
            self._store(lines, self.sample_ids, self.positions, digested=pinned)
        else:
            self._store(lines, self.sample_ids, self.positions)
        lines.clear()
        self.sample_ids.clear()
        self.positions.clear()
        pins.clear()

    def _store(
        self,
        lines: list[bytes],
        ids: list[str | int],
        positions: Sequence[int],
        joined: bytes | None = None,
        digested: bytes | None = None,
    ) -> None:
        """Check *ids*, then digest and store the *lines*: *joined* is them each followed
        by a newline (made here when ``None``), *digested* what the digest takes for
        them when it is not *joined* without its last newline."""
        self.check.add_batch(ids, positions)
        if not lines:
            return
        if joined is None:
            joined = b"\n".join(lines) + b"\n"
        if len(self.spilled):
            self.digest.update(b"\n")
        self.digest.update(memoryview(joined)[:-1] if digested is None else digested)
        self.spilled.extend(lines, joined)

    def done(self) -> tuple[SpilledLines, str, PackedText]:
        """The last batch flushed: the lines, their digest and the ids."""
        self.flush()
        return self.spilled, "sha256:" + self.digest.hexdigest(), self.check.done()


def _any_list(chunk: list[Sample]) -> bool:
    """Whether any sample of *chunk* has a list as input (asked of its types, in C)."""
    return any(map(issubclass, set(map(type, map(_INPUT, chunk))), repeat(list)))


def _chunks(samples: Iterable[Sample]) -> Iterator[list[Sample]]:
    """*samples* in order, ``SPILL_BATCH`` at a time: a list's, or a view's of one, by
    slicing."""
    if isinstance(samples, MemoryDataset):
        samples = samples.samples
    if isinstance(samples, SampleView):
        return samples.chunks(SPILL_BATCH)
    walk = iter(samples)
    return iter(lambda: list(islice(walk, SPILL_BATCH)), [])


def _image_files(given: Any) -> Iterator[str]:
    """The image files a sample's chat input names (``ContentImage(image="x.png")``):
    the line holds their paths, so their bytes are pinned apart. Read by shape, not
    type (the model layer sits above this one); data URIs and URLs are in the line."""
    if not isinstance(given, list):
        return
    for message in given:
        content = getattr(message, "content", None)
        for part in content if isinstance(content, list) else []:
            image = getattr(part, "image", None)
            if isinstance(image, str) and not image.startswith(("data:", "http://", "https://")):
                yield image


def _file_digest(path: str) -> bytes:
    """The SHA-256 of the file at *path* (hex), or a marker when it cannot be read: the
    trial that sends it says why; the digest must only differ when the bytes do."""
    try:
        return file_sha256(Path(path).expanduser()).encode()
    except OSError:
        return b"unreadable"


def _frozen_already(samples: Iterable[Sample]) -> LineSamples | None:
    """The loaded lines *samples* are, all of them in order (or ``None``)."""
    if isinstance(samples, MemoryDataset):
        samples = samples.samples
    if isinstance(samples, SampleView) and samples.positions == range(len(samples.base)):
        samples = samples.base
    return samples if isinstance(samples, LineSamples) else None


def freeze(samples: Iterable[Sample], display: str) -> Dataset:
    """Number unnamed samples 1..n, refuse duplicate ids, and pin the result by digest.

    The samples are read once, in order, and written to a scratch file as they come;
    the whole of a loaded file's dataset, in file order, is frozen already.
    """
    frozen = _frozen_already(samples)
    if frozen is not None:
        return Dataset(display, frozen.digest, frozen.lines, frozen.ids)
    spilled = _Spill(display)
    for chunk in _chunks(samples):
        spilled.take_chunk(chunk)
    lines, digest, ids = spilled.done()
    if not len(lines):
        raise ConfigError("dataset.empty", path=display)
    return Dataset(display, digest, lines, ids)
