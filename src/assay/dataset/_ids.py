"""Sample ids met so far, to refuse the first one used twice, naming where both are.

Shared by every loader: a JSONL file's lines and a Python dataset's samples alike. The
ids are kept packed and their hashes in a compact table, so checking a million costs a
few megabytes, not a Python object each.
"""

from __future__ import annotations

from array import array

from assay.dataset._spill import HashSet, PackedText
from assay.errors import ConfigError


class IdCheck:
    """Ids met so far, to refuse the first one used twice, naming both positions.

    Ids are kept packed, their hashes in a compact table: no Python object per sample.
    The positions (file lines) are dropped with the check; the ids are kept.
    """

    def __init__(self, display: str) -> None:
        self.display = display
        self.ids = PackedText()
        self.positions = array("Q")
        self._seen = HashSet()

    def add(self, sample_id: str | int, position: int) -> None:
        """Record the id of the sample at *position* (a line, or a 1-based index)."""
        key = str(sample_id)
        if self._seen.add(hash(key)):
            first = next((i for i, seen in enumerate(self.ids) if seen == key), None)
            if first is not None:  # not just two ids sharing a hash
                raise ConfigError(
                    "dataset.duplicate_id",
                    path=self.display,
                    line=position,
                    sample_id=_short(sample_id),
                    first=self.positions[first],
                )
        self.ids.append(key)
        self.positions.append(position)

    def done(self) -> PackedText:
        """The ids, in order; the hashes and positions are dropped."""
        self._seen = HashSet()
        self.positions = array("Q")
        return self.ids


def _short(value: str | int) -> str | int:
    """An id as a message may quote it: at most 80 characters."""
    return value if not isinstance(value, str) or len(value) <= 80 else value[:77] + "..."
