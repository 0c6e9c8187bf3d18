"""Epochs: how many times each sample runs, and how its scores are reduced to one."""

from __future__ import annotations

import msgspec


class Epochs(msgspec.Struct, frozen=True):
    """Run each sample *epochs* times; reduce its scores with *reducer* (name or names)."""

    epochs: int = 1
    reducer: str | list[str] = "mean"

    @property
    def reducers(self) -> list[str]:
        """The reducer names as a list."""
        return [self.reducer] if isinstance(self.reducer, str) else list(self.reducer)
