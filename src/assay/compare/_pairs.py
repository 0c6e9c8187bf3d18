"""Pair up score records (or report rows) and compare them, within a run or across two.

Within a run, the trials of one sample sit together in plan order (sample, then target,
then repetition), so a pair is complete soon after it starts: ``compare_targets`` keeps
only the pairs still open, and counts, whatever the run's size. A side that never scored
a pair the other side did counts as ``missing`` (not a pass), as in the rates.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import combinations
from typing import Any, Protocol

from assay.compare._mcnemar import (
    MAX_FLIPPED,
    FlippedSample,
    Pair,
    PairedComparison,
    compare_outcomes,
    summarize,
)

MISSING = "missing"


class HasScores(Protocol):
    """A report row: one trial with each scorer's status."""

    target_id: str
    sample_id: str
    repetition: int
    scores: dict[str, str]


Record = Mapping[str, Any] | HasScores
"""A ``scores.jsonl`` record (one scorer) or a report row (every scorer)."""


def statuses_of(records: Iterable[Record]) -> Iterator[tuple[str, str, Pair, str]]:
    """``(target, scorer, (sample, repetition), status)`` for each score in *records*."""
    for record in records:
        if isinstance(record, Mapping):
            pair = (str(record["sample_id"]), int(record["repetition"]))
            yield record["target_id"], record["scorer_id"], pair, record["status"]
        else:
            pair = (str(record.sample_id), int(record.repetition))
            for scorer_id, status in record.scores.items():
                yield record.target_id, scorer_id, pair, status


class _Tally:
    """The counts of one comparison, fed pair by pair."""

    def __init__(self) -> None:
        self.counts = [0, 0, 0, 0, 0]  # a passed, b passed, a only, b only, pairs
        self.flipped: list[FlippedSample] = []
        self.omitted = 0

    def add(self, pair: Pair, a: str, b: str) -> None:
        pass_a, pass_b = a == "passed", b == "passed"
        self.counts[0] += pass_a
        self.counts[1] += pass_b
        self.counts[4] += 1
        if pass_a != pass_b:
            self.counts[2 if pass_a else 3] += 1
            if len(self.flipped) < MAX_FLIPPED:
                self.flipped.append(FlippedSample(pair[0], pair[1], a, b))
            else:
                self.omitted += 1


def compare_targets(
    records: Iterable[Record], targets: list[str], scorers: list[str], level: float = 0.95
) -> list[PairedComparison]:
    """Every pair of *targets* (in spec order), per scorer, over the samples they share.

    Empty for a single-target run. *records* are ``scores.jsonl`` records or report rows.
    """
    if len(targets) < 2:
        return []
    tallies = {(a, b, s): _Tally() for a, b in combinations(targets, 2) for s in scorers}
    open_pairs: dict[tuple[str, Pair], dict[str, str]] = {}

    def close(scorer_id: str, pair: Pair, seen: dict[str, str]) -> None:
        for a, b in combinations(targets, 2):
            tally = tallies.get((a, b, scorer_id))
            if tally is not None:
                tally.add(pair, seen.get(a, MISSING), seen.get(b, MISSING))

    for target_id, scorer_id, pair, status in statuses_of(records):
        seen = open_pairs.setdefault((scorer_id, pair), {})
        seen[target_id] = status
        if len(seen) == len(targets):
            close(scorer_id, pair, open_pairs.pop((scorer_id, pair)))
    for (scorer_id, pair), seen in sorted(open_pairs.items()):
        close(scorer_id, pair, seen)
    return [
        summarize(
            (a, b),
            s,
            (t.counts[0], t.counts[1], t.counts[2], t.counts[3], t.counts[4]),
            sorted(t.flipped, key=_order),
            t.omitted,
            level,
        )
        for (a, b, s), t in tallies.items()
    ]


def _order(item: FlippedSample) -> tuple[str, int]:
    return item.sample_id, item.repetition


def compare_runs(
    records_a: Iterable[Record],
    records_b: Iterable[Record],
    matches: list[tuple[str, str]],
    level: float = 0.95,
) -> list[PairedComparison]:
    """Compare target pairs of two runs (*matches*: (target in A, target in B)) per scorer.

    Pairs are joined by sample id and repetition; a pair only one run scored counts as
    ``missing`` on the other side.
    """
    side_a = _by_target(records_a)
    side_b = _by_target(records_b)
    comparisons = []
    for target_a, target_b in matches:
        scorers = sorted(
            {s for t, s in side_a if t == target_a} & {s for t, s in side_b if t == target_b}
        )
        for scorer_id in scorers:
            a, b = side_a[(target_a, scorer_id)], side_b[(target_b, scorer_id)]
            outcomes = {p: (a.get(p, MISSING), b.get(p, MISSING)) for p in a.keys() | b.keys()}
            labels = (f"A:{target_a}", f"B:{target_b}")
            comparisons.append(compare_outcomes(labels, scorer_id, outcomes, level))
    return comparisons


def _by_target(records: Iterable[Record]) -> dict[tuple[str, str], dict[Pair, str]]:
    side: dict[tuple[str, str], dict[Pair, str]] = {}
    for target_id, scorer_id, pair, status in statuses_of(records):
        side.setdefault((target_id, scorer_id), {})[pair] = status
    return side
