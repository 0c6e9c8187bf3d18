"""Load a JSONL dataset: validate every line once, keep the raw lines, decode on demand.

Raw lines are far smaller than decoded Python objects, and they are kept in a scratch
file, so a dataset of a million samples costs a few megabytes of memory (its ids, packed,
and an offset per line), and each sample is decoded only when its trial runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import BinaryIO

import msgspec

from assay.dataset._ids import IdCheck
from assay.dataset._sample import Sample, StrictSample
from assay.dataset._spill import SpilledLines
from assay.errors import ConfigError

_sample_decoder = msgspec.json.Decoder(Sample)
_decode_sample, _decode_samples = _sample_decoder.decode, _sample_decoder.decode_lines
_validate_sample = msgspec.json.Decoder(StrictSample).decode


class Dataset:
    """Validated samples in file order, kept as raw JSON lines.

    *lines* is a scratch file (``_spill``) or any sequence of lines; *ids* are the
    samples' ids as trial-id text, in order.
    """

    def __init__(
        self, display: str, digest: str, lines: Sequence[bytes], ids: Sequence[str]
    ) -> None:
        self.display = display
        self.digest = digest
        self._lines = lines
        self.ids = ids
        self._next = 0  # the index ``_ahead`` gives next
        self._ahead = decoded(lines)

    def __len__(self) -> int:
        return len(self._lines)

    def sample(self, index: int) -> Sample:
        """Decode the sample at *index* (0-based, file order).

        A run asks in file order, once or a few times a sample: the first ask of the
        next sample takes it from ``_ahead`` (a block of lines decoded in one call);
        any other ask decodes its line. Each ask gets a sample of its own."""
        if index == self._next:
            self._next = index + 1
            return next(self._ahead)
        return _decode_sample(self._lines[index])

    def __iter__(self) -> Iterator[Sample]:
        return decoded(self._lines)


def decoded(lines: Sequence[bytes]) -> Iterator[Sample]:
    """The samples of *lines*, in order: a block of a scratch file's at a time."""
    if isinstance(lines, SpilledLines):
        return chain.from_iterable(map(_decode_samples, lines.blocks()))
    return map(_decode_sample, lines)


def load_jsonl(path: Path, display: str) -> Dataset:
    """Read and validate the JSONL dataset at *path*; *display* names it in errors.

    The file is read a line at a time into a scratch file (``_spill``), its ids packed:
    a million samples cost a few megabytes of memory, not the file's size several times.
    """
    try:
        with open(path, "rb") as handle:
            return _read_lines(handle, display)
    except OSError as exc:
        raise ConfigError("spec.unreadable", path=display, reason=exc.strerror) from None


def _read_lines(handle: BinaryIO, display: str) -> Dataset:
    digest = hashlib.sha256()
    lines = SpilledLines()
    ids = IdCheck(display)
    for number, raw in enumerate(handle, start=1):
        digest.update(raw)
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            reason = "it starts with a byte-order mark"
            raise ConfigError("spec.encoding", path=display, reason=reason)
        line = raw.strip()
        if not line:
            continue
        ids.add(_decode_line(line, display, number).id, number)
        lines.append(line)
    if not lines:
        raise ConfigError("dataset.empty", path=display)
    return Dataset(display, "sha256:" + digest.hexdigest(), lines, ids.done())


def _decode_line(line: bytes, display: str, number: int) -> StrictSample:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError("spec.encoding", path=f"{display}:{number}", reason=exc.reason) from None
    try:
        checked = _validate_sample(line)
    except msgspec.ValidationError as exc:
        raise ConfigError("dataset.sample", path=display, line=number, reason=str(exc)) from None
    except msgspec.DecodeError as exc:
        raise ConfigError("dataset.json", path=display, line=number, reason=str(exc)) from None
    except RecursionError:
        reason = "nested too deeply"
        raise ConfigError("dataset.json", path=display, line=number, reason=reason) from None
    return checked
