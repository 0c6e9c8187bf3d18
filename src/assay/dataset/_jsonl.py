"""Load a JSONL dataset: validate every line once, keep the raw lines, decode on demand.

Raw lines are far smaller than decoded Python objects, so a dataset of 100,000 samples
costs a few megabytes, and each sample is decoded only when its trial runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec

from assay.dataset._sample import Sample, StrictSample
from assay.errors import ConfigError

_decode_sample = msgspec.json.Decoder(Sample).decode
_validate_sample = msgspec.json.Decoder(StrictSample).decode


class Dataset:
    """Validated samples in file order, kept as raw JSON lines.

    *lines* is a list (a JSONL file's own lines) or a scratch file (a frozen Python
    dataset, see ``_spill``); *ids* are the samples' ids as trial-id text, in order.
    """

    def __init__(
        self, display: str, digest: str, lines: Sequence[bytes], ids: Sequence[str]
    ) -> None:
        self.display = display
        self.digest = digest
        self._lines = lines
        self.ids = ids

    def __len__(self) -> int:
        return len(self._lines)

    def sample(self, index: int) -> Sample:
        """Decode the sample at *index* (0-based, file order)."""
        return _decode_sample(self._lines[index])

    def __iter__(self) -> Iterator[Sample]:
        for line in self._lines:
            yield _decode_sample(line)


def load_jsonl(path: Path, display: str) -> Dataset:
    """Read and validate the JSONL dataset at *path*; *display* names it in errors."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError("spec.unreadable", path=display, reason=exc.strerror) from None
    if data.startswith(b"\xef\xbb\xbf"):
        raise ConfigError("spec.encoding", path=display, reason="it starts with a byte-order mark")
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    lines: list[bytes] = []
    ids: list[str] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        sample = _decode_line(line, display, number)
        key = str(sample.id)
        if key in first_line:
            raise ConfigError(
                "dataset.duplicate_id",
                path=display,
                line=number,
                sample_id=_short(sample.id),
                first=first_line[key],
            )
        first_line[key] = number
        lines.append(line)
        ids.append(key)
    if not lines:
        raise ConfigError("dataset.empty", path=display)
    return Dataset(display, digest, lines, ids)


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


def _short(value: str | int) -> str | int:
    """An id as a message may quote it: at most 80 characters."""
    return value if not isinstance(value, str) or len(value) <= 80 else value[:77] + "..."
