"""Compare the targets of two runs over the samples both have, streaming the second run.

Why streaming: at 100,000 trials a run's score records are ~1.5 kB each as parsed JSON.
Run A is read once into a table of what the tests need — per sample, its values and
the status of each repetition (~300 bytes a sample) — and run B's records are then
matched against it one at a time, keeping only B's samples whose repetitions are still
coming (a handful, in plan order).

Pairs are joined by sample id (and repetition, for pass/fail). Only pairs both runs have
*and measured* (passed or failed) are compared: a pair one run lacks, or one that was
blocked, unscorable or errored in either run, is left unpaired — counted and named in the
comparison, never treated as a pass or a failure of either side (the evidence rule: a
trial that could not be measured is not a failure). For means, a sample is compared only
when every repetition of it was measured in both runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import msgspec

from assay.compare._holm import holm
from assay.compare._mcnemar import MAX_FLIPPED, PairedComparison
from assay.compare._means import MeanTally
from assay.compare._pairs import Record, Tally, is_continuous, statuses_of

MEASURED = frozenset({"passed", "failed"})


class _Entry:
    """Run A's sample: its values, whether B had it, each repetition's status.

    A status is set to ``None`` once B's matching repetition has been counted, so what is
    left at the end is what only A has.
    """

    __slots__ = ("measured", "paired", "statuses", "values")

    def __init__(self) -> None:
        self.values: list[float] = []
        self.paired = False
        self.measured = True  # every repetition passed or failed
        self.statuses: list[str | None] = []

    def set(self, rep: int, status: str, value: float) -> None:
        self.values.append(value)
        self.measured = self.measured and status in MEASURED
        self.statuses.extend([None] * (rep - len(self.statuses)))
        self.statuses[rep - 1] = status

    def take(self, rep: int) -> str | None:
        """The status of repetition *rep*, marked as paired (``None`` if A lacks it)."""
        if rep > len(self.statuses):
            return None
        status, self.statuses[rep - 1] = self.statuses[rep - 1], None
        return status


class _Side:
    """Run A's table: per (target, scorer), per sample, what pairing needs."""

    def __init__(self, records: Iterable[Record], targets: set[str]) -> None:
        self.tables: dict[tuple[str, str], dict[str, _Entry]] = {}
        self.continuous: set[str] = set()
        for target_id, scorer_id, (sample, rep), status, value in statuses_of(records):
            if target_id not in targets:
                continue
            if is_continuous(value):
                self.continuous.add(scorer_id)
            table = self.tables.setdefault((target_id, scorer_id), {})
            entry = table.get(sample)
            if entry is None:
                entry = table[sample] = _Entry()
            entry.set(rep, status, value)


class _Versus:
    """One comparison (target A × target B × scorer) being fed run B's records."""

    def __init__(self, table: dict[str, _Entry], repetitions: tuple[int, int]) -> None:
        self.table = table
        self.reps_a, self.reps_b = repetitions
        self.tally = Tally(clustered=max(repetitions) > 1)
        self.means = MeanTally()
        self.open: dict[str, tuple[list[float], list[bool]]] = {}
        self.unpaired_b = 0
        self.unpaired_a = 0  # pairs both runs have that one of them did not measure
        self.unpaired_of_b: set[str] = set()  # rare: B's samples with a pair left out
        self.unpaired_of_a: set[str] = set()  # A's samples with a pair left out (so far)
        self.means_left_b: set[str] = set()  # B's samples left out of the means

    def add(self, sample: str, rep: int, status: str, value: float) -> None:
        entry = self.table.get(sample)
        if entry is None:
            self.unpaired_b += 1
            self.unpaired_of_b.add(sample)
            self.means_left_b.add(sample)
            return
        status_a = entry.take(rep)
        if status_a is None:
            self.unpaired_b += 1
            self.unpaired_of_b.add(sample)
        elif status_a in MEASURED and status in MEASURED:
            self.tally.add((sample, rep), status_a, status)
        else:
            self.unpaired_a += 1
            self.unpaired_b += 1
            self.unpaired_of_a.add(sample)
            self.unpaired_of_b.add(sample)
        values, measured = self.open.setdefault(sample, ([], []))
        values.append(value)
        measured.append(status in MEASURED)
        if len(values) >= self.reps_b:
            self.close(sample, *self.open.pop(sample))

    def close(self, sample: str, values: list[float], measured: list[bool]) -> None:
        """Count a sample's means (exactly rounded sums: arrival order cannot matter)."""
        entry = self.table[sample]
        entry.paired = True
        complete = len(entry.values) >= self.reps_a and len(values) >= self.reps_b
        if not (entry.measured and all(measured) and complete):
            self.means_left_b.add(sample)
            entry.paired = False
            return
        mean_a = math.fsum(entry.values) / self.reps_a
        self.means.add(sample, mean_a, math.fsum(values) / self.reps_b)

    def finish(
        self, labels: tuple[str, str], scorer_id: str, level: float, with_means: bool
    ) -> list[PairedComparison]:
        for sample, (values, measured) in sorted(self.open.items()):  # B cut short
            self.close(sample, values, measured)
        for sample, entry in self.table.items():
            left = sum(1 for st in entry.statuses if st is not None)
            if left:
                self.unpaired_a += left
                self.unpaired_of_a.add(sample)
        trials = self._unpaired(self.unpaired_of_a, self.unpaired_of_b)
        trials.update(unpaired_a=self.unpaired_a, unpaired_b=self.unpaired_b)
        pass_rate = msgspec.structs.replace(
            self.tally.summarize(labels, scorer_id, level), **trials
        )
        if not with_means:
            return [pass_rate]
        means_left_a = {s for s, e in self.table.items() if not e.paired}
        samples = self._unpaired(means_left_a, self.means_left_b)
        samples.update(unpaired_a=len(means_left_a), unpaired_b=len(self.means_left_b))
        means = msgspec.structs.replace(self.means.summarize(labels, scorer_id, level), **samples)
        if max(self.reps_a, self.reps_b) > 1:  # the clustered comparison of means leads
            return [means, pass_rate]
        return [pass_rate, means]

    @staticmethod
    def _unpaired(of_a: set[str], of_b: set[str]) -> dict[str, object]:
        return {
            "only_in_a": sorted(of_a)[:MAX_FLIPPED],
            "only_in_b": sorted(of_b)[:MAX_FLIPPED],
            "unpaired_samples": len(of_a | of_b),
        }


def compare_runs(
    records_a: Iterable[Record],
    records_b: Iterable[Record],
    matches: list[tuple[str, str]],
    level: float = 0.95,
    repetitions: tuple[int, int] = (1, 1),
    labels: tuple[str, str] = ("A:", "B:"),
) -> list[PairedComparison]:
    """Compare target pairs of two runs (*matches*: (target in A, target in B)) per scorer.

    *repetitions* are the two runs' repetitions; *labels* prefix the target ids in the
    comparisons' ``a`` and ``b``. Each scorer both sides have gets the exact McNemar
    comparison over (sample, repetition) pairs and, when its values are continuous or
    either run repeats samples, the comparison of per-sample mean scores — first, when
    either run repeats samples (the pass rates are then tested clustered by sample).
    Every ``p_adjusted`` is Holm's over the comparisons returned. *records_b* is read
    once, one record at a time.
    """
    side = _Side(records_a, {a for a, _ in matches})
    to_a = {b: a for a, b in matches}
    versus: dict[tuple[str, str, str], _Versus] = {}
    continuous = set(side.continuous)
    for target_b, scorer_id, (sample, rep), status, value in statuses_of(records_b):
        target_a = to_a.get(target_b)
        table = side.tables.get((target_a or "", scorer_id))
        if target_a is None or table is None:
            continue
        if is_continuous(value):
            continuous.add(scorer_id)
        key = (target_a, target_b, scorer_id)
        if key not in versus:
            versus[key] = _Versus(table, repetitions)
        versus[key].add(sample, rep, status, value)
    order = {match: i for i, match in enumerate(matches)}
    comparisons = []
    for (target_a, target_b, scorer_id), item in sorted(
        versus.items(), key=lambda kv: (order[(kv[0][0], kv[0][1])], kv[0][2])
    ):
        with_means = scorer_id in continuous or max(repetitions) > 1
        names = (f"{labels[0]}{target_a}", f"{labels[1]}{target_b}")
        comparisons += item.finish(names, scorer_id, level, with_means)
    return holm(comparisons)
