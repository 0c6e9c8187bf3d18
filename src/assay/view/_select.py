"""Which of a table's trials a query keeps, and in what order: tests and sort keys made
once per query from the table's columns (small integers compared, no record read)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from assay.view._rows import Query

if TYPE_CHECKING:
    from assay.view._table import TrialTable


def predicate(table: TrialTable, query: Query) -> Callable[[int], bool]:
    """Whether the trial at a plan position passes every filter of *query*."""
    tests: list[Callable[[int], bool]] = []
    if query.target:
        target = table.targets.find(query.target)
        tests.append(lambda at: table.target_of[at] == target)
    if query.state:
        state = table.states.find(query.state)
        tests.append(lambda at: table.state_of[at] == state)
    if query.status:
        status = table.statuses.find(query.status)
        columns = [table.status_of[query.scorer]] if query.scorer in table.status_of else []
        columns = columns or ([] if query.scorer else list(table.status_of.values()))
        tests.append(lambda at: any(column[at] == status for column in columns))
    return lambda at: all(test(at) for test in tests)


def sort_key(table: TrialTable, sort: str, scorer: str) -> Callable[[int], Any]:
    """The key that orders plan positions by *sort* (ties in plan order)."""
    if sort == "sample":
        return lambda at: (table.sample_ids[at], at)
    if sort == "target":
        return lambda at: (table.targets.names[table.target_of[at]], at)
    if sort == "state":
        return lambda at: (table.states.names[table.state_of[at]], at)
    if sort == "score":
        values = table.value_of.get(scorer or (table.scorers[0] if table.scorers else ""))
        if values is not None:
            return lambda at: (-math.inf if math.isnan(values[at]) else values[at], at)
    return lambda at: at
