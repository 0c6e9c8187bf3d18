"""Usage summed per target from every judged bundle's record, a batch at a time.

A report sums the usage of every trial, listed or not: at 100,000 trials that was a
``Usage.add_record`` a trial (about 1 µs of Python). Here a target's records wait in a
list and are summed a batch at a time by C loops (``map``, ``sum``, ``reduce``), to
the same totals: integers add up the same in any grouping, and costs are added one by
one in order, ``None`` (unknown) as soon as one is, as ``add_record`` does.
"""

from __future__ import annotations

from functools import reduce
from operator import add, itemgetter
from typing import Any

from assay.evidence import Usage

BATCH = 512
"""Records a target's list holds before they are summed."""

_COUNTS = tuple(
    itemgetter(field) for field in ("input_tokens", "output_tokens", "calls", "cached_calls")
)
_COST, _CACHED_COST = itemgetter("cost"), itemgetter("cached_cost")


class UsageSums:
    """Per-target ``Usage`` totals fed bundles' usage records (``record``) and whole
    ``Usage`` values (``add``), in the order given."""

    def __init__(self) -> None:
        self._totals: dict[str, Usage] = {}
        self._pending: dict[str, list[dict[str, Any]]] = {}

    def record(self, target_id: str, record: dict[str, Any] | None) -> None:
        """Count a bundle's usage *record* (``Usage.record()``'s form; none: nothing
        but the target, whose totals are made at its first bundle)."""
        pending = self._pending.get(target_id)
        if pending is None:
            pending = self._start(target_id)
        if record:
            pending.append(record)
            if len(pending) >= BATCH:
                self._sum(target_id, pending)

    def add(self, target_id: str, usage: Usage | None) -> None:
        """Count a whole *usage* (none: only make the target's totals)."""
        pending = self._pending.get(target_id)
        if pending is None:
            pending = self._start(target_id)
        if usage is not None:
            self._sum(target_id, pending)  # the records before it first: the same order
            self._totals[target_id].add(usage)

    def by_target(self) -> dict[str, Usage]:
        """Every target's totals so far (each target's first ``Usage`` object, kept)."""
        for target_id, pending in self._pending.items():
            self._sum(target_id, pending)
        return self._totals

    def _start(self, target_id: str) -> list[dict[str, Any]]:
        self._totals[target_id] = Usage()
        pending: list[dict[str, Any]] = []
        self._pending[target_id] = pending
        return pending

    def _sum(self, target_id: str, pending: list[dict[str, Any]]) -> None:
        """Add *pending* to the target's totals, ``add_record`` by ``add_record``'s
        arithmetic; then empty it."""
        if not pending:
            return
        totals = self._totals[target_id]
        summed = _summed(totals, pending)
        if summed is None:  # an older bundle's record may lack a field: its default
            for record in pending:
                totals.add_record(record)
        else:
            read, written, calls, cached, cost, cached_cost = summed
            totals.input_tokens += read
            totals.output_tokens += written
            totals.total_tokens += read + written
            totals.calls += calls
            totals.cached_calls += cached
            totals.cost, totals.cached_cost = cost, cached_cost
        pending.clear()


def _summed(totals: Usage, pending: list[dict[str, Any]]) -> tuple[Any, ...] | None:
    """The counts of *pending* (ints, as ``int()`` leaves them) and the totals' costs
    with theirs added; ``None`` when a record lacks a field or holds a count that is
    not an int (``add_record`` then reads each)."""
    try:
        counts = [sum(map(get, pending)) for get in _COUNTS]
        cost = _plus_all(totals.cost, pending, _COST)
        cached_cost = _plus_all(totals.cached_cost, pending, _CACHED_COST)
    except (KeyError, TypeError):
        return None
    if not all(type(count) is int for count in counts):
        return None
    return (*counts, cost, cached_cost)


def _plus_all(
    total: float | None, pending: list[dict[str, Any]], cost_of: itemgetter[str]
) -> float | None:
    """``total`` plus each record's cost in turn; ``None`` once either is (unknown)."""
    if total is None:
        return None
    try:
        return reduce(add, map(float, map(cost_of, pending)), total)
    except TypeError:
        if any(cost_of(record) is None for record in pending):
            return None
        raise
