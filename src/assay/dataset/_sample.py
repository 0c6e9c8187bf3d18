"""A sample: one input to put to a target, and the value expected back."""

from __future__ import annotations

from typing import Any

import msgspec


class Sample(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One dataset row: ``id``, ``input`` for the target, ``expected`` for the scorer."""

    id: str | int
    input: Any
    expected: Any
    metadata: dict[str, Any] = {}

    def to_record(self, hidden: tuple[str, ...] = ()) -> dict[str, Any]:
        """The sample as plain JSON values, with *hidden* fields dropped everywhere."""
        record = {"id": self.id, "input": self.input, "expected": self.expected}
        if self.metadata:
            record["metadata"] = self.metadata
        return drop_fields(record, hidden) if hidden else record


def drop_fields(value: Any, hidden: tuple[str, ...]) -> Any:
    """Return *value* with every mapping key named in *hidden* removed, at any depth."""
    if isinstance(value, dict):
        return {k: drop_fields(v, hidden) for k, v in value.items() if k not in hidden}
    if isinstance(value, list):
        return [drop_fields(v, hidden) for v in value]
    return value
