"""Tango's score interval for a paired difference of proportions, and exact binomial tails.

Why Tango's: the difference d = rate B − rate A of two paired pass/fail sides depends
only on the discordant pairs (``a_only`` passed by A alone, ``b_only`` by B alone).
A Wald-type interval (Agresti–Min) estimates the variance at the observed counts, so
with no discordant pair it is barely wider than the half pairs it adds and "proves" a
margin the data cannot support. The score interval instead tests each candidate d with
the variance *under that d* (the restricted maximum likelihood estimate of the paired
table, in closed form) and keeps the d it does not reject: with no discordant pair out
of n its lower bound is −z²/(n + z²), not −z·√(1/n)/2. Exact enumeration over the
trinomial of (A only, B only, concordant) pairs (``tests/stats``, ``bench/calibration``)
shows its one-sided error at a margin within 0.5 point of nominal for n ≥ 50.

Counts may be fractional: for means over repetitions (or partial credit in [0, 1]), a
sample whose mean difference is d_i adds max(0, d_i) to B's mass and max(0, −d_i) to
A's. Given those two means, a pair that is all-or-nothing (the trinomial) has the
largest variance a difference in [−1, 1] can have, so the interval stays on the safe
side; it never collapses to zero width, whatever the data.

Pure Python (``math``, ``statistics.NormalDist``): small runs must not pay for scipy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist

TANGO = "tango-score"
BISECTIONS = 60
EXACT_LIMIT = 2000  # up to this many discordant pairs, the binomial tail in exact integers


def normal_quantile(level: float) -> float:
    """The two-sided normal critical value of a *level* interval (1.96 at 0.95)."""
    return NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)


def normal_two_sided_p(z: float) -> float:
    """The two-sided p-value of a standard normal statistic *z*."""
    return min(1.0, 2.0 * NormalDist().cdf(-abs(z)))


def score_statistic(a_only: float, b_only: float, pairs: float, d: float) -> float:
    """Tango's z for H0: rate B − rate A = *d*, from the discordant masses.

    The variance is n·(2·q + d·(1 − d)) with q the restricted MLE of P(A only) given
    d (the root of a quadratic); positive z is evidence that the difference exceeds d.
    """
    n = float(pairs)
    quad_a = 2.0 * n
    quad_b = -b_only - a_only + (2.0 * n - b_only + a_only) * d
    quad_c = -a_only * d * (1.0 - d)
    root = math.sqrt(max(0.0, quad_b * quad_b - 4.0 * quad_a * quad_c))
    q = max(0.0, (root - quad_b) / (2.0 * quad_a))
    variance = n * (2.0 * q + d * (1.0 - d))
    excess = b_only - a_only - n * d
    if variance <= 0.0:
        return 0.0 if excess == 0 else math.copysign(math.inf, excess)
    return excess / math.sqrt(variance)


def paired_interval(
    a_only: float, b_only: float, pairs: float, level: float = 0.95
) -> tuple[float, float]:
    """Tango's score interval for rate B − rate A: the d the score test does not reject."""
    if pairs <= 0:
        return -1.0, 1.0
    z = normal_quantile(level)
    observed = (b_only - a_only) / pairs
    low = _bisect(lambda d: score_statistic(a_only, b_only, pairs, d) > z, -1.0, observed)
    high = _bisect(lambda d: score_statistic(a_only, b_only, pairs, d) >= -z, observed, 1.0)
    return low, high


def _bisect(below: Callable[[float], bool], start: float, end: float) -> float:
    """The point in [start, end] where ``below(d)`` turns from true to false.

    The score statistic falls as d grows, so each side of the interval is one crossing.
    """
    if not below(start):
        return start
    if below(end):
        return end
    for _ in range(BISECTIONS):
        middle = (start + end) / 2.0
        if below(middle):
            start = middle
        else:
            end = middle
    return (start + end) / 2.0


def margin_p_values(
    a_only: float, b_only: float, pairs: float, margin: float
) -> tuple[float, float]:
    """One-sided p-values at d = −*margin* (A the baseline, B the new side).

    ``p_pass`` tests H0 "d ≤ −margin": small is evidence of no regression. ``p_fail``
    tests H0 "d ≥ −margin": small is evidence of one. Both come from the same score
    statistic as the interval, so the interval's lower bound is above −margin exactly
    when ``p_pass`` < (1 − level)/2, and its upper bound below −margin exactly when
    ``p_fail`` < (1 − level)/2.
    """
    if pairs <= 0:
        return 1.0, 1.0
    z = score_statistic(a_only, b_only, pairs, -margin)
    normal = NormalDist()
    return 1.0 - normal.cdf(z), normal.cdf(z)


def pairs_needed(margin: float, level: float) -> int | None:
    """The fewest pairs with which identical sides (no discordant pair) pass at *margin*.

    With no discordant pair the score statistic at −margin is √(n·m/(1 − m)), so n must
    exceed z²·(1 − m)/m. ``None`` for a margin of 0, which no sample can certify.
    """
    if margin <= 0.0:
        return None
    z = normal_quantile(level)
    n = max(1, math.floor(z * z * (1.0 - margin) / margin))
    while score_statistic(0.0, 0.0, n, -margin) <= z:  # the formula, checked against the test
        n += 1
    while n > 1 and score_statistic(0.0, 0.0, n - 1, -margin) > z:
        n -= 1
    return n


def binomial_half_tail(k: int, n: int) -> float:
    """P(X ≤ k) for X ~ Binomial(n, 1/2), exact in integers up to ``EXACT_LIMIT``.

    Above it the terms are summed downwards from the largest (k ≤ n/2) by their ratio
    and scaled by the log of the largest (``math.lgamma``): relative error near 1e-10.
    """
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if n <= EXACT_LIMIT:
        binomial = count = 1  # C(n, 0), then each C(n, i) from the last
        for i in range(1, k + 1):
            binomial = binomial * (n - i + 1) // i
            count += binomial
        return count / (1 << n)
    if 2 * k > n:
        return 1.0 - binomial_half_tail(n - k - 1, n)
    total = term = 1.0
    for i in range(k, 0, -1):
        term *= i / (n - i + 1)
        total += term
        if term < 1e-17 * total:
            break
    log_top = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return math.exp(log_top - n * math.log(2.0)) * total
