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
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import msgspec

from assay._digest import file_sha256
from assay.dataset._choices import dataset_seed, shuffled_choices
from assay.dataset._ids import IdCheck
from assay.dataset._jsonl import Dataset
from assay.dataset._sample import Sample
from assay.dataset._spill import PackedText, SpilledLines, positions_of
from assay.errors import ConfigError

_encode = msgspec.json.Encoder(order="sorted").encode
_decode = msgspec.json.Decoder(Sample).decode

DEFAULT_NAME = "memory"


class LineSamples(Sequence[Sample]):
    """Samples kept as encoded lines in a scratch file, decoded when read.

    The lines are already what ``freeze`` would write (numbered, checked, canonical),
    so freezing all of them in order reuses the file, its *digest* and *ids* as they are.
    """

    def __init__(self, lines: SpilledLines, digest: str, ids: PackedText) -> None:
        self.lines = lines
        self.digest = digest
        self.ids = ids

    def __len__(self) -> int:
        return len(self.lines)

    @overload
    def __getitem__(self, index: int) -> Sample: ...
    @overload
    def __getitem__(self, index: slice) -> SampleView: ...
    def __getitem__(self, index: int | slice) -> Sample | SampleView:
        if isinstance(index, slice):
            return SampleView(self, range(len(self))[index])
        return _decode(self.lines[index])

    def __iter__(self) -> Iterator[Sample]:
        for line in self.lines:
            yield _decode(line)


class SampleView(Sequence[Sample]):
    """Some samples of *base*, by position; with *number*, a sample without an id gets
    its position in *base* + 1 (the id ``select`` promises, whatever is selected)."""

    def __init__(
        self, base: Sequence[Sample], positions: range | array[int], *, number: bool = False
    ) -> None:
        self.base = base
        self.positions = positions
        self.number = number

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, index: int) -> Sample: ...
    @overload
    def __getitem__(self, index: slice) -> SampleView: ...
    def __getitem__(self, index: int | slice) -> Sample | SampleView:
        if isinstance(index, slice):
            return SampleView(self.base, self.positions[index], number=self.number)
        position = self.positions[index]
        sample = self.base[position]
        if self.number and sample.id is None:
            return msgspec.structs.replace(sample, id=position + 1)
        return sample

    def __iter__(self) -> Iterator[Sample]:
        # what ``self[index]`` gives, without its call and checks a sample: a run's
        # start walks a task's samples twice (sandboxes, then the freeze)
        base, number = self.base, self.number
        for position in self.positions:
            sample = base[position]
            if number and sample.id is None:
                sample = msgspec.structs.replace(sample, id=position + 1)
            yield sample


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
    lines, ids, positions = spilled.lines, spilled.sample_ids, spilled.positions
    for number, (position, sample) in enumerate(samples, start=1):
        if sample.id is None:
            sample = msgspec.structs.replace(sample, id=number)
        ids.append(sample.id)  # type: ignore[arg-type]  # set just above
        positions.append(position)
        try:
            line = _encode(sample)
        except (TypeError, msgspec.EncodeError) as exc:  # an image, an array: said here
            spilled.flush()  # a repeated id up to this sample is said first, as it comes first
            raise ConfigError(
                "dataset.sample_json", path=display, line=position, reason=str(exc)
            ) from None
        if isinstance(sample.input, list):  # chat messages: they may name image files
            pins = [
                b"\x00image " + i.encode() + b" " + _file_digest(i)
                for i in _image_files(sample.input)
            ]
            if pins:
                spilled.pins[len(lines)] = b"".join(pins)
        lines.append(line)
        if len(lines) == SPILL_BATCH:
            spilled.flush()
    spilled.flush()
    return spilled.spilled, "sha256:" + spilled.digest.hexdigest(), spilled.check.done()


SPILL_BATCH = 1024
"""Samples checked, digested and written at once by ``spill`` (a C call each, not one
a sample)."""


class _Spill:
    """``spill``'s batch: the lines, ids and positions since the last ``flush``."""

    def __init__(self, display: str) -> None:
        self.spilled = SpilledLines()
        self.check = IdCheck(display)
        self.digest = hashlib.sha256()
        self.lines: list[bytes] = []
        self.sample_ids: list[str | int] = []
        self.positions: list[int] = []
        self.pins: dict[int, bytes] = {}  # a line's image files' digests, by batch index

    def flush(self) -> None:
        """Check the batch's ids, then digest and store its lines."""
        lines = self.lines
        self.check.add_batch(self.sample_ids, self.positions)
        if lines:
            if len(self.spilled):
                self.digest.update(b"\n")
            if self.pins:  # each line followed by its images' digests
                pins = self.pins
                lines = [line + pins.get(i, b"") for i, line in enumerate(lines)]
            self.digest.update(b"\n".join(lines))
            self.spilled.extend(self.lines)
        self.lines.clear()
        self.sample_ids.clear()
        self.positions.clear()
        self.pins.clear()


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
    lines, digest, ids = spill(enumerate(samples, start=1), display)
    if not len(lines):
        raise ConfigError("dataset.empty", path=display)
    return Dataset(display, digest, lines, ids)
