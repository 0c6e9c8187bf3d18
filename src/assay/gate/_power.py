"""How many planned samples a gate needs before its verdict can mean anything.

A plan too small to detect the effect a team cares about yields a verdict that is mostly
noise; the ``min_samples`` policy (``min_effect`` with ``power``) says so up front and
names the n that would do, rather than letting a lucky small run pass.

Why both directions: a gate must be able to pass a target that is ``min_effect`` above
the minimum *and* to fail one that is ``min_effect`` below it. Near 1 the binomial is
skewed, so the two need different n; sizing one side only left the power to fail a
target at minimum − effect as low as 0.45. The n named is the larger.

Why exact: the n is found with the gate's own decision rule (the exact bounds of
``_bounds``) and the exact binomial distribution, not a normal approximation, so the
power promised is the power the gate has. The discrete test's power is a sawtooth in n;
the n named keeps the power over the next n/20 sizes too (at most 100: the teeth
shrink as n grows).

Why samples, not trials: repetitions of one sample share its difficulty, so three
repetitions of 100 samples carry far less than 300 samples' evidence (exactly as much
as 100, when the target is deterministic). With repetitions the n is sized for that
worst case (a deterministic target, judged by its clustered bounds).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from statistics import NormalDist

from assay.gate._bounds import betainc, effective_counts, one_sided_p
from assay.score import MetricEstimate

_LARGEST = 10_000_000


def independent_samples(estimate: MetricEstimate) -> int:
    """The planned samples behind *estimate* (its denominator when not recorded)."""
    return estimate.samples or estimate.denominator


@lru_cache(maxsize=256)
def samples_needed(
    baseline: float, effect: float, power: float, level: float, clustered: bool = False
) -> int:
    """Samples the gate needs to pass *baseline* + *effect* and fail *baseline* − *effect*.

    Each with probability at least *power*, under the gate's exact test at *level*
    (two-sided, so α/2 on each side); a side that would leave [0, 1] is skipped.
    *clustered* sizes for repetitions of a deterministic target (its clustered bounds).
    """
    sides = [a for a in (baseline + effect, baseline - effect) if 0.0 <= a <= 1.0]
    if not sides:
        sides = [min(1.0, max(0.0, baseline + effect))]
    n = max(1, _normal_approximation(baseline, effect, power, level) // 2)
    while n < _LARGEST and not _enough(n, baseline, sides, power, level, clustered):
        n = max(n + 1, int(n * 1.25))
    n = _smallest_enough(n, baseline, sides, power, level, clustered)
    window = max(5, min(n // 20, 100))  # the sawtooth's teeth shrink as n grows
    while n < _LARGEST:
        dip = next(
            (k for k in range(n + 1, n + window + 1)
             if not _enough(k, baseline, sides, power, level, clustered)),
            None,
        )  # fmt: skip
        if dip is None:
            return n
        n = dip + 1
        while not _enough(n, baseline, sides, power, level, clustered):
            n += 1
    return n


def _smallest_enough(
    high: int, baseline: float, sides: list[float], power: float, level: float, clustered: bool
) -> int:
    """Bisect down from an *high* that is enough to the smallest n that looks enough."""
    low = max(0, int(high / 1.25) - 1)
    while high - low > 1:
        middle = (low + high) // 2
        if _enough(middle, baseline, sides, power, level, clustered):
            high = middle
        else:
            low = middle
    return high


def _enough(
    n: int, baseline: float, sides: list[float], power: float, level: float, clustered: bool
) -> bool:
    return all(power_at(n, baseline, s, level, clustered) >= power for s in sides)


@lru_cache(maxsize=65_536)
def power_at(n: int, minimum: float, rate: float, level: float, clustered: bool = False) -> float:
    """The exact chance that the gate at *level* decides a target at *rate* the right way.

    Right way: ``passed`` when *rate* is above *minimum*, ``failed`` when below; *n*
    samples (one trial each, or, *clustered*, repetitions of a deterministic target).
    """
    alpha = (1.0 - level) / 2.0
    if rate >= minimum:  # passed when p_pass <= α/2: from some count of passes upwards
        first = _first_count(n, lambda k: _p(n, k, minimum, level, clustered)[0] <= alpha)
        return _upper_tail(first, n, rate)
    last = _first_count(n, lambda k: _p(n, k, minimum, level, clustered)[1] >= alpha) - 1
    return 1.0 - _upper_tail(last + 1, n, rate)


def _p(n: int, passed: int, minimum: float, level: float, clustered: bool) -> tuple[float, float]:
    """The gate's (p_pass, p_fail) for *passed* of *n* samples."""
    if clustered:  # repetitions of a deterministic target: 2·passed of 2·n trials, say
        informative = min(passed, n - passed)
        x, trials, _ = effective_counts(2 * passed, 2 * n, n, None, level, informative)
        return one_sided_p(x, trials, minimum)
    return one_sided_p(float(passed), float(n), minimum)


def _first_count(n: int, holds: Callable[[int], bool]) -> int:
    """The smallest count k in [0, n] for which the monotone *holds(k)* is true (n + 1: none)."""
    low, high = -1, n + 1
    while high - low > 1:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle
    return high


def _upper_tail(k: int, n: int, rate: float) -> float:
    """P(X ≥ k) for X ~ Binomial(n, rate)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return betainc(k, n - k + 1.0, rate)


def _normal_approximation(baseline: float, effect: float, power: float, level: float) -> int:
    """A first guess at n: the textbook normal approximation for the wider side."""
    normal = NormalDist()
    z_alpha = normal.inv_cdf(1.0 - (1.0 - level) / 2.0)
    z_beta = normal.inv_cdf(power)
    guesses = []
    for alternative in (baseline + effect, baseline - effect):
        other = min(1.0, max(0.0, alternative))
        spread = z_alpha * math.sqrt(baseline * (1.0 - baseline)) + z_beta * math.sqrt(
            other * (1.0 - other)
        )
        guesses.append(math.ceil((spread / effect) ** 2))
    return max(1, *guesses)
