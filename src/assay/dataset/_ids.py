"""Sample ids met so far, to refuse the first one used twice, naming where both are.

Shared by every loader: a JSONL file's lines and a Python dataset's samples alike. The
ids are kept packed and their hashes in a compact table, so checking a million costs a
few megabytes, not a Python object each.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from assay.dataset._spill import HashSet, PackedText
from assay.errors import ConfigError

SMALL = 100_000
"""Ids checked in a Python ``set`` up to this many (about 3 MB more at its peak, while
the dataset is frozen: a C lookup each, a fifth of the ``HashSet``'s Python-level
probing; 0.7 µs a sample, 70 ms of a 100,000-sample run's start); past it they move to
the ``HashSet``, whose memory stays flat (a million-sample run)."""


class IdCheck:
    """Ids met so far, to refuse the first one used twice, naming both positions.

    Ids are kept packed, their hashes in a compact table: no Python object per sample
    (past the first ``SMALL``, held in a set while the check lasts).
    The positions (file lines) are dropped with the check; the ids are kept.
    """

    def __init__(self, display: str) -> None:
        self.display = display
        self.ids = PackedText()
        self.positions = array("Q")
        self._seen = HashSet()
        self._small: set[str] | None = set()

    def add(self, sample_id: str | int, position: int) -> None:
        """Record the id of the sample at *position* (a line, or a 1-based index)."""
        key = str(sample_id)
        small = self._small
        if small is not None:
            if key in small:
                self._refuse(key, sample_id, position)
            small.add(key)
            if len(small) > SMALL:
                self._small = None
                for held in small:
                    self._seen.add(hash(held))
        elif self._seen.add(hash(key)):
            self._refuse(key, sample_id, position)
        self.ids.append(key)
        self.positions.append(position)

    def add_batch(self, sample_ids: list[str | int], positions: Sequence[int]) -> None:
        """``add`` each of *sample_ids* (at *positions*), in order: while they fit the
        small set, the set's own ``update`` checks them (its size grows by all of them) (no Python
        frame an id); the first repeated one is refused as ``add`` would."""
        small, keys = self._small, list(map(str, sample_ids))
        if small is None or len(small) + len(keys) > SMALL:  # the hashes take over
            for sample_id, position in zip(sample_ids, positions, strict=True):
                self.add(sample_id, position)
            return
        held = len(small)
        small.update(keys)  # a repeated id, in the batch or before it, adds nothing
        fresh = len(small) == held + len(keys)
        self.ids.extend(keys)
        self.positions.extend(positions)
        if not fresh:
            self._refuse_first(keys, sample_ids, positions)

    def _refuse_first(
        self, keys: list[str], sample_ids: list[str | int], positions: Sequence[int]
    ) -> None:
        """Refuse the first of a batch's *keys* met before it (in the batch or earlier)."""
        first = len(self.ids) - len(keys)
        met = {self.ids[i] for i in range(first)}  # the error path: once a run at most
        for key, sample_id, position in zip(keys, sample_ids, positions, strict=True):
            if key in met:
                self._refuse(key, sample_id, position)
            met.add(key)

    def _refuse(self, key: str, sample_id: str | int, position: int) -> None:
        """Raise for *key* if it was met before (not just an equal hash)."""
        first = next((i for i, seen in enumerate(self.ids) if seen == key), None)
        if first is not None:
            raise ConfigError(
                "dataset.duplicate_id",
                path=self.display,
                line=position,
                sample_id=_short(sample_id),
                first=self.positions[first],
            )

    def done(self) -> PackedText:
        """The ids, in order; the hashes and positions are dropped."""
        self._seen = HashSet()
        self._small = None
        self.positions = array("Q")
        return self.ids


def _short(value: str | int) -> str | int:
    """An id as a message may quote it: at most 80 characters."""
    return value if not isinstance(value, str) or len(value) <= 80 else value[:77] + "..."
