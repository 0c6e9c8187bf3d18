"""Pair up score records (or report rows) and compare two targets of one run.

Within a run, the trials of one sample sit together in plan order (sample, then target,
then repetition), so a pair is complete soon after it starts: ``compare_targets`` keeps
only the pairs and samples still open, and counts (plus 8 bytes a sample for the
continuous comparison), whatever the run's size. A side that never scored a pair the
other side did counts as ``missing`` (not a pass, value 0), as in the rates.

With repetitions the trials of a sample share its difficulty, so neither comparison
treats them as independent: the comparison of per-sample means (sign test) comes first,
and the pass-rate comparison's p-value is the clustered McNemar test (Durkalski et al.
2003: each sample's net discordance B − A, summed, over the root of its summed squares)
with the score interval over per-sample differences. McNemar over (sample, repetition)
pairs would count one hard sample five times and find "significant" differences between
identical targets several times as often as its level says.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator, Mapping
from itertools import combinations
from typing import Any, Protocol

import msgspec

from assay.compare._holm import holm
from assay.compare._mcnemar import MAX_FLIPPED, FlippedSample, Pair, PairedComparison, summarize
from assay.compare._means import TANGO_MEANS, MeanTally
from assay.compare._score import normal_two_sided_p, paired_interval

CLUSTERED_MCNEMAR = "clustered-mcnemar"

MISSING = "missing"

Score = tuple[str, str, Pair, str, float]
"""``(target, scorer, (sample, repetition), status, value)``."""


class HasScores(Protocol):
    """A report row: one trial with each scorer's status."""

    target_id: str
    sample_id: str
    repetition: int
    scores: dict[str, str]


Record = Mapping[str, Any] | HasScores
"""A ``scores.jsonl`` record (one scorer) or a report row (every scorer)."""


def value_of(status: str, value: Any) -> float:
    """A score's value for means: its recorded value, else 1 for a pass and 0 otherwise."""
    if value is None or status == "error":
        return 1.0 if status == "passed" else 0.0
    return float(value)


def statuses_of(records: Iterable[Record]) -> Iterator[Score]:
    """``(target, scorer, (sample, repetition), status, value)`` for each score.

    Report rows carry no values: a pass counts 1 there, anything else 0.
    """
    for record in records:
        if isinstance(record, Mapping):
            pair = (str(record["sample_id"]), int(record["repetition"]))
            status = record["status"]
            value = value_of(status, record.get("value"))
            yield record["target_id"], record["scorer_id"], pair, status, value
        else:
            pair = (str(record.sample_id), int(record.repetition))
            for scorer_id, status in record.scores.items():
                yield record.target_id, scorer_id, pair, status, value_of(status, None)


class Tally:
    """The pass/fail counts of one comparison, fed pair by pair.

    It lists the first ``MAX_FLIPPED`` discordant pairs in (sample, repetition) order,
    whatever order they arrive in, so a resumed run lists the same ones. *clustered*
    (repetitions) also keeps each sample's net discordance and pair count, for the
    clustered test.
    """

    def __init__(self, clustered: bool = False) -> None:
        self.counts = [0, 0, 0, 0, 0]  # a passed, b passed, a only, b only, pairs
        self.flipped: list[tuple[str, int, str, str]] = []  # kept sorted
        self.omitted = 0
        self.samples: dict[str, list[int]] | None = {} if clustered else None

    def add(self, pair: Pair, a: str, b: str) -> None:
        """Count one pair whose statuses are *a* and *b*."""
        pass_a, pass_b = a == "passed", b == "passed"
        self.counts[0] += pass_a
        self.counts[1] += pass_b
        self.counts[4] += 1
        if self.samples is not None:
            net = self.samples.setdefault(pair[0], [0, 0])
            net[0] += int(pass_b) - int(pass_a)
            net[1] += 1
        if pass_a != pass_b:
            self.counts[2 if pass_a else 3] += 1
            item = (pair[0], pair[1], a, b)
            if len(self.flipped) < MAX_FLIPPED:
                bisect.insort(self.flipped, item)
                return
            self.omitted += 1
            if item < self.flipped[-1]:
                bisect.insort(self.flipped, item)
                self.flipped.pop()

    def summarize(self, labels: tuple[str, str], scorer_id: str, level: float) -> PairedComparison:
        """The McNemar comparison of the pairs counted."""
        c = self.counts
        flipped = [FlippedSample(*item) for item in self.flipped]
        found = summarize(
            labels, scorer_id, (c[0], c[1], c[2], c[3], c[4]), flipped, self.omitted, level
        )
        return found if self.samples is None else self.clustered(found, level)

    def clustered(self, found: PairedComparison, level: float) -> PairedComparison:
        """*found* with its test and interval taken over samples, not trials."""
        assert self.samples is not None
        nets = [net for net, _ in self.samples.values()]
        diffs = [net / pairs for net, pairs in self.samples.values()]
        a_mass = math.fsum(-d for d in diffs if d < 0)
        b_mass = math.fsum(d for d in diffs if d > 0)
        low, high = paired_interval(a_mass, b_mass, len(diffs), level)
        p_value = clustered_mcnemar_p(nets)
        return msgspec.structs.replace(
            found,
            ci_low=low,
            ci_high=high,
            ci_method=TANGO_MEANS,
            p_value=p_value,
            p_adjusted=p_value,
            test=CLUSTERED_MCNEMAR,
            a_mass=a_mass,
            b_mass=b_mass,
        )


def clustered_mcnemar_p(nets: list[int]) -> float:
    """Durkalski's clustered McNemar p-value from each sample's net discordance (B − A).

    z = Σ net / √(Σ net²): the samples are the independent units, whatever their
    repetitions share; with one pair per sample it is McNemar's z.
    """
    spread = math.fsum(n * n for n in nets)
    if spread == 0:
        return 1.0
    return normal_two_sided_p(sum(nets) / math.sqrt(spread))


def is_continuous(value: float) -> bool:
    """Whether a score value is partial credit (neither 0 nor 1)."""
    return value not in (0.0, 1.0)


class _WithinRun:
    """The open pairs and samples of a run's stream, and the tallies they close into."""

    def __init__(self, targets: list[str], scorers: list[str], repetitions: int) -> None:
        self.targets = targets
        self.repetitions = repetitions
        keys = [(a, b, s) for a, b in combinations(targets, 2) for s in scorers]
        self.tallies = {k: Tally(clustered=repetitions > 1) for k in keys}
        self.means = {k: MeanTally() for k in keys}
        self.continuous: set[str] = set()
        self.open_pairs: dict[tuple[str, Pair], dict[str, str]] = {}
        # per (scorer, sample), each target's values until every repetition is in
        self.open_samples: dict[tuple[str, str], dict[str, list[float]]] = {}

    def add(self, score: Score) -> None:
        target_id, scorer_id, pair, status, value = score
        if is_continuous(value):
            self.continuous.add(scorer_id)
        seen = self.open_pairs.setdefault((scorer_id, pair), {})
        seen[target_id] = status
        if len(seen) == len(self.targets):
            self.close_pair(scorer_id, pair, self.open_pairs.pop((scorer_id, pair)))
        values = self.open_samples.setdefault((scorer_id, pair[0]), {})
        values.setdefault(target_id, []).append(value)
        if len(values) == len(self.targets) and all(
            len(v) >= self.repetitions for v in values.values()
        ):
            self.close_sample(scorer_id, pair[0], self.open_samples.pop((scorer_id, pair[0])))

    def close_pair(self, scorer_id: str, pair: Pair, seen: dict[str, str]) -> None:
        for a, b in combinations(self.targets, 2):
            tally = self.tallies.get((a, b, scorer_id))
            if tally is not None:
                tally.add(pair, seen.get(a, MISSING), seen.get(b, MISSING))

    def close_sample(self, scorer_id: str, sample_id: str, values: dict[str, list[float]]) -> None:
        reps = self.repetitions
        mean = {t: math.fsum(values.get(t, [])) / reps for t in self.targets}
        for a, b in combinations(self.targets, 2):
            tally = self.means.get((a, b, scorer_id))
            if tally is not None:
                tally.add(sample_id, mean[a], mean[b])

    def finish(self, level: float) -> list[PairedComparison]:
        for (scorer_id, pair), seen in sorted(self.open_pairs.items()):
            self.close_pair(scorer_id, pair, seen)
        for (scorer_id, sample_id), values in sorted(self.open_samples.items()):
            self.close_sample(scorer_id, sample_id, values)
        comparisons = []
        for (a, b, s), tally in self.tallies.items():
            pass_rate = tally.summarize((a, b), s, level)
            if self.repetitions > 1:  # the clustered comparison of means leads
                comparisons.append(self.means[(a, b, s)].summarize((a, b), s, level))
                comparisons.append(pass_rate)
                continue
            comparisons.append(pass_rate)
            if s in self.continuous:
                comparisons.append(self.means[(a, b, s)].summarize((a, b), s, level))
        return holm(comparisons)


def compare_targets(
    records: Iterable[Record],
    targets: list[str],
    scorers: list[str],
    level: float = 0.95,
    repetitions: int = 1,
) -> list[PairedComparison]:
    """Every pair of *targets* (in spec order), per scorer, over the samples they share.

    Each pair of targets gets the exact McNemar comparison of pass/fail per (sample,
    repetition); when the scorer's values are continuous, or *repetitions* > 1, also the
    comparison of mean scores per sample (score interval, sign test), which comes first
    with repetitions (and the pass rates are then tested clustered by sample). Every
    ``p_adjusted`` is Holm's over the comparisons returned. Empty for a single-target
    run. *records* are ``scores.jsonl`` records or report rows.
    """
    if len(targets) < 2:
        return []
    run = _WithinRun(targets, scorers, repetitions)
    for score in statuses_of(records):
        run.add(score)
    return run.finish(level)
