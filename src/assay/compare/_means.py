"""Paired comparison of mean scores per sample: continuous scores, or repetitions.

Why per sample: a sample's repetitions share its difficulty, so the unit of evidence is
the sample; each side's value is its mean score over repetitions, and the difference of
those means is one observation. Scores lie in [0, 1], so each difference d_i lies in
[−1, 1]; the interval on the mean difference is Tango's score interval with fractional
discordant masses (B's Σ max(0, d_i), A's Σ max(0, −d_i), over n samples; see
``_score``), the all-or-nothing case having the largest variance those means allow. It
never collapses to zero width (a percentile bootstrap of differences that are all zero
gives [0, 0]). The p-value is the sign test (the exact binomial on how many samples each
side won, ties dropped), valid whatever the differences' distribution.

A tally keeps 24 bytes per sample and the ``MAX_FLIPPED`` largest differences, so a
comparison of 100,000 samples costs a few megabytes. Sums are exactly rounded
(``math.fsum``), so the order in which samples arrive (a resumed run) cannot change a
digit.
"""

from __future__ import annotations

import heapq
import math
from array import array

from assay.compare._mcnemar import MAX_FLIPPED, FlippedSample, PairedComparison, mcnemar_p
from assay.compare._score import paired_interval

SIGN_TEST = "sign-test"
PAIRED_BOOTSTRAP = "paired-bootstrap-percentile"  # the interval before issue 13; kept as a name
TANGO_MEANS = "tango-score-means"
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

    def masses(self) -> tuple[float, float]:
        """The fractional discordant masses: (A's Σ max(0, −d_i), B's Σ max(0, d_i))."""
        a_mass = math.fsum(min(1.0, -d) for d in self.diffs if d < 0)
        b_mass = math.fsum(min(1.0, d) for d in self.diffs if d > 0)
        return a_mass, b_mass

    def summarize(self, labels: tuple[str, str], scorer_id: str, level: float) -> PairedComparison:
        """The comparison of B against A over the samples counted."""
        n = len(self.diffs)
        a_mass, b_mass = self.masses()
        difference = math.fsum(self.diffs) / n if n else 0.0
        low, high = paired_interval(a_mass, b_mass, n, level)
        p_value = mcnemar_p(self.a_higher, self.b_higher)
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
            ci_method=TANGO_MEANS,
            a_only=self.a_higher,
            b_only=self.b_higher,
            p_value=p_value,
            test=SIGN_TEST,
            flipped=flipped,
            flipped_omitted=max(0, different - len(flipped)),
            measure=MEAN,
            a_mass=a_mass,
            b_mass=b_mass,
            p_adjusted=p_value,
        )
