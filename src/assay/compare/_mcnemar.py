"""Paired comparison of two sets of pass/fail outcomes over the same samples.

Why paired: two models answering the same questions share the questions' difficulty, so
comparing their two pass rates as if independent wastes most of the evidence. Only the
discordant pairs (one passed, the other did not) carry information about the
difference; exact McNemar tests them with a binomial test (pure Python), which stays
valid with few discordant pairs, where the chi-square version does not.

The interval on the difference is Tango's score interval (see ``_score``): it tests
each candidate difference with the variance that difference implies, so it stays honest
at the edges (no discordant pair, or a new side that only loses samples) where a
Wald-type interval such as Agresti–Min's is too narrow.
"""

from __future__ import annotations

import msgspec

from assay.compare._score import TANGO, binomial_half_tail, paired_interval

MAX_FLIPPED = 50
MCNEMAR = "exact-mcnemar"

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

    Across two runs only pairs both runs have *and measured* (passed or failed) are
    compared; ``unpaired_a`` / ``unpaired_b`` count each run's pairs (samples, for means)
    left out — absent from the other run, or blocked, unscorable or errored in either —
    ``only_in_a`` / ``only_in_b`` name up to ``MAX_FLIPPED`` of their samples, and
    ``unpaired_samples`` counts the distinct samples left out.

    ``a_mass`` / ``b_mass`` are the discordant masses the interval rests on: the counts
    ``a_only`` / ``b_only`` for pass rates; for means, Σ max(0, −d_i) and Σ max(0, d_i)
    over the per-sample differences d_i. ``p_adjusted`` is ``p_value`` Holm-adjusted
    over the family of comparisons it was reported with (see ``holm``).
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
    a_mass: float = 0.0
    b_mass: float = 0.0
    p_adjusted: float = 1.0
    unpaired_samples: int = 0


def mcnemar_p(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of the discordant split at 1/2.

    The same test is the sign test of paired continuous scores (samples where A scored
    higher against those where B did; ties dropped). At 1/2 the binomial is symmetric,
    so the two-sided p-value is twice the smaller tail (capped at 1), which is what
    ``scipy.stats.binomtest`` returns, without importing scipy.
    """
    if a_only + b_only == 0:
        return 1.0
    tail = binomial_half_tail(min(a_only, b_only), a_only + b_only)
    return min(1.0, 2.0 * tail)


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
    p_value = mcnemar_p(a_only, b_only)
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
        ci_method=TANGO,
        a_only=a_only,
        b_only=b_only,
        p_value=p_value,
        test=MCNEMAR,
        flipped=flipped,
        flipped_omitted=omitted,
        a_mass=float(a_only),
        b_mass=float(b_only),
        p_adjusted=p_value,
    )
