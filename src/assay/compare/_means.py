"""Paired comparison of continuous scores: per-sample differences, bootstrapped.

Why per sample: a sample's repetitions share its difficulty, so the unit of evidence is
the sample; each side's value is its mean score over repetitions, and the difference of
those means is one observation. The interval on the mean difference is the percentile
bootstrap of those differences (seeded, order-independent: see ``assay.score``); the
p-value is the sign test (the exact binomial on how many samples each side won, ties
dropped), valid whatever the differences' distribution.

A tally keeps 24 bytes per sample and the ``MAX_FLIPPED`` largest differences, so a
comparison of 100,000 samples costs a few megabytes. Sums are exactly rounded
(``math.fsum``) and the bootstrap sorts its input, so the order in which samples arrive
(a resumed run) cannot change a digit.
"""

from __future__ import annotations

import heapq
import math
from array import array

from assay.compare._mcnemar import MAX_FLIPPED, FlippedSample, PairedComparison, mcnemar_p
from assay.score import bootstrap_mean, seed_of

SIGN_TEST = "sign-test"
PAIRED_BOOTSTRAP = "paired-bootstrap-percentile"
MEAN = "mean"


class MeanTally:
    """Per-sample means of two sides, fed one sample at a time."""

    def __init__(self) -> None:
        self.diffs = array("d")
        self.a = array("d")
        self.b = array("d")
        self.a_higher = 0
        self.b_higher = 0
        self.top: list[tuple[float, str, float, float]] = []  # min-heap of largest |d|

    def add(self, sample_id: str, a: float, b: float) -> None:
        """Count one sample whose mean scores are *a* and *b*."""
        diff = b - a
        self.diffs.append(diff)
        self.a.append(a)
        self.b.append(b)
        if diff == 0:
            return
        self.a_higher += diff < 0
        self.b_higher += diff > 0
        item = (abs(diff), sample_id, a, b)
        if len(self.top) < MAX_FLIPPED:
            heapq.heappush(self.top, item)
        elif item > self.top[0]:
            heapq.heapreplace(self.top, item)

    def summarize(self, labels: tuple[str, str], scorer_id: str, level: float) -> PairedComparison:
        """The comparison of B against A over the samples counted."""
        n = len(self.diffs)
        seed = seed_of("paired", labels[0], labels[1], scorer_id)
        difference, _, low, high = bootstrap_mean(self.diffs, level, seed)
        if n < 2:
            low, high = -1.0, 1.0
        different = self.a_higher + self.b_higher
        flipped = [
            FlippedSample(sample_id, 0, f"{a:.4g}", f"{b:.4g}")
            for _, sample_id, a, b in sorted(self.top, key=lambda t: (-t[0], t[1]))
        ]
        return PairedComparison(
            a=labels[0],
            b=labels[1],
            scorer_id=scorer_id,
            pairs=n,
            a_passed=0,
            b_passed=0,
            rate_a=math.fsum(self.a) / n if n else 0.0,
            rate_b=math.fsum(self.b) / n if n else 0.0,
            difference=difference,
            ci_low=low,
            ci_high=high,
            ci_level=level,
            ci_method=PAIRED_BOOTSTRAP,
            a_only=self.a_higher,
            b_only=self.b_higher,
            p_value=mcnemar_p(self.a_higher, self.b_higher),
            test=SIGN_TEST,
            flipped=flipped,
            flipped_omitted=max(0, different - len(flipped)),
            measure=MEAN,
        )
