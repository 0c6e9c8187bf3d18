"""Paired comparison of two sets of pass/fail outcomes over the same samples.

Why paired: two models answering the same questions share the questions' difficulty, so
comparing their two pass rates as if independent wastes most of the evidence. Only the
discordant pairs (one passed, the other did not) carry information about the
difference; exact McNemar tests them with a binomial test (scipy), which stays valid
with few discordant pairs, where the chi-square version does not.

The interval on the difference is Agresti–Min's (a Wald interval on the paired table
with half a pair added to each cell): simple, and it does not collapse to zero width when
no pair is discordant.
"""

from __future__ import annotations

import math

import msgspec

MAX_FLIPPED = 50
MCNEMAR = "exact-mcnemar"
AGRESTI_MIN = "agresti-min"

Pair = tuple[str, int]
"""A pair's key: sample id and repetition."""


class FlippedSample(msgspec.Struct, frozen=True):
    """A pair the two sides disagree on."""

    sample_id: str
    repetition: int
    a: str
    b: str


class PairedComparison(msgspec.Struct, frozen=True):
    """B against A over their common pairs: ``difference`` is rate B − rate A.

    With ``measure == "pass_rate"`` a pair is a (sample, repetition): ``b_only`` counts
    pairs A failed and B passed, ``a_only`` the reverse (McNemar's c and b), and
    ``flipped`` lists up to ``MAX_FLIPPED`` discordant pairs, in pair order.

    With ``measure == "mean"`` (continuous scores, or repetitions) a pair is a sample,
    each side's value its mean score over repetitions: ``rate_a`` / ``rate_b`` are the
    mean scores, ``a_only`` / ``b_only`` count the samples where A / B scored higher
    (the sign test's counts), ``a_passed`` / ``b_passed`` are 0, and ``flipped`` lists
    the samples that differ most (their values as text, repetition 0).

    Across two runs only pairs both runs have are compared; ``unpaired_a`` /
    ``unpaired_b`` count those only one run has, ``only_in_a`` / ``only_in_b`` name up
    to ``MAX_FLIPPED`` of their samples.
    """

    a: str
    b: str
    scorer_id: str
    pairs: int
    a_passed: int
    b_passed: int
    rate_a: float
    rate_b: float
    difference: float
    ci_low: float
    ci_high: float
    ci_level: float
    ci_method: str
    a_only: int
    b_only: int
    p_value: float
    test: str
    flipped: list[FlippedSample]
    flipped_omitted: int = 0
    measure: str = "pass_rate"
    unpaired_a: int = 0
    unpaired_b: int = 0
    only_in_a: list[str] = []
    only_in_b: list[str] = []


def mcnemar_p(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of the discordant split at 1/2.

    The same test is the sign test of paired continuous scores (samples where A scored
    higher against those where B did; ties dropped). At 1/2 the binomial is symmetric,
    so the two-sided p-value is twice the smaller tail (capped at 1), which is what
    ``scipy.stats.binomtest`` returns, at a tenth of its cost.
    """
    if a_only + b_only == 0:
        return 1.0
    from scipy.stats import binom  # type: ignore[import-untyped]  # deferred: slow import

    tail = float(binom.cdf(min(a_only, b_only), a_only + b_only, 0.5))
    return min(1.0, 2.0 * tail)


def paired_interval(
    a_only: int, b_only: int, pairs: int, level: float = 0.95
) -> tuple[float, float]:
    """Agresti–Min interval for rate B − rate A from the discordant counts."""
    if pairs <= 0:
        return -1.0, 1.0
    from scipy.stats import norm  # deferred: scipy is slow to import

    z = float(norm.ppf(1.0 - (1.0 - level) / 2.0))
    total = pairs + 2.0
    p_a, p_b = (a_only + 0.5) / total, (b_only + 0.5) / total
    centre = p_b - p_a
    half = z * math.sqrt(max(0.0, (p_a + p_b - centre * centre) / total))
    return max(-1.0, centre - half), min(1.0, centre + half)


def compare_outcomes(
    labels: tuple[str, str],
    scorer_id: str,
    outcomes: dict[Pair, tuple[str, str]],
    level: float = 0.95,
) -> PairedComparison:
    """Compare two sides' statuses per pair; only ``"passed"`` counts as a pass."""
    a_passed = b_passed = a_only = b_only = 0
    flipped: list[FlippedSample] = []
    omitted = 0
    for (sample_id, repetition), (a, b) in sorted(outcomes.items()):
        pass_a, pass_b = a == "passed", b == "passed"
        a_passed += pass_a
        b_passed += pass_b
        if pass_a == pass_b:
            continue
        a_only += pass_a
        b_only += pass_b
        if len(flipped) < MAX_FLIPPED:
            flipped.append(FlippedSample(sample_id, repetition, a, b))
        else:
            omitted += 1
    return summarize(
        labels,
        scorer_id,
        (a_passed, b_passed, a_only, b_only, len(outcomes)),
        flipped,
        omitted,
        level,
    )


def summarize(
    labels: tuple[str, str],
    scorer_id: str,
    counts: tuple[int, int, int, int, int],
    flipped: list[FlippedSample],
    omitted: int,
    level: float,
) -> PairedComparison:
    """The comparison from its counts: (a passed, b passed, a only, b only, pairs)."""
    a_passed, b_passed, a_only, b_only, pairs = counts
    rate_a = a_passed / pairs if pairs else 0.0
    rate_b = b_passed / pairs if pairs else 0.0
    low, high = paired_interval(a_only, b_only, pairs, level)
    return PairedComparison(
        a=labels[0],
        b=labels[1],
        scorer_id=scorer_id,
        pairs=pairs,
        a_passed=a_passed,
        b_passed=b_passed,
        rate_a=rate_a,
        rate_b=rate_b,
        difference=rate_b - rate_a,
        ci_low=low,
        ci_high=high,
        ci_level=level,
        ci_method=AGRESTI_MIN,
        a_only=a_only,
        b_only=b_only,
        p_value=mcnemar_p(a_only, b_only),
        test=MCNEMAR,
        flipped=flipped,
        flipped_omitted=omitted,
    )
