"""Epochs: how many times each sample runs, and how its scores are reduced to one."""

from __future__ import annotations

from typing import Any

import msgspec

from assay.score._reducers import reducer_name


class Epochs(msgspec.Struct, frozen=True):
    """Run each sample *epochs* times; reduce its scores with *reducer*: a name
    (``"mean"``, ``"pass_at_2"``, a ``@score_reducer``'s), a ``@score_reducer`` factory's
    product, or a list of those."""

    epochs: int = 1
    reducer: Any = "mean"

    @property
    def reducers(self) -> list[str]:
        """The reducer names as a list (what the run's spec records)."""
        given = self.reducer if isinstance(self.reducer, list | tuple) else [self.reducer]
        return [reducer_name(one) for one in given]
