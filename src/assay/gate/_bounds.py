"""The bounds the gate decides a minimum with: exact Clopper–Pearson, clustered by sample.

Why Clopper–Pearson and not Wilson: a gate lives near 1 (minimums of 0.9 to 0.99), where
Wilson's interval is too short on the side that matters: a target exactly at a minimum
of 0.99 was ``failed`` 8–9% of the time at n = 50–100 against 2.5% promised. The exact
bounds invert the binomial tail itself, so at the boundary each one-sided error is at
most α/2 by construction (conservative, never liberal).

Why Korn–Graubard with repetitions: the trials of one sample share its difficulty, so
the binomial over trials overstates the evidence. The effective n is the one whose
binomial variance equals the cluster-robust variance of the pass rate (per-sample pass
fractions), kept between the number of samples and of trials and shrunk by (z/t)² with
as many degrees of freedom as samples hold the rarer outcome, less one; Clopper–Pearson
then runs on the fractional (x*, n*) through the regularized incomplete beta function.

Why pure Python: every run gates, and ``scipy.special`` alone costs 0.7 s to import.
``betainc`` is the Lentz continued fraction (Numerical Recipes, 6.4) with ``lgamma``;
``betaincinv`` is safeguarded Newton. Both are checked against scipy over a grid.

The one-sided p-values come from the same tails, so they agree with the bounds exactly:
the lower bound reaches m ⟺ ``p_pass`` ≤ α/2, the upper bound is below m ⟺
``p_fail`` < α/2.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist
from typing import NamedTuple

CLOPPER_PEARSON = "clopper-pearson"
KORN_GRAUBARD = "clopper-pearson (korn-graubard, clustered by sample)"
_TINY = 1e-300
_EPSILON = 1e-15


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and x in [0, 1]."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _continued_fraction(a, b, x) / a
    return 1.0 - front * _continued_fraction(b, a, 1.0 - x) / b


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b), by the modified Lentz method."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    result = d
    for m in range(1, 10_000 + int(20 * math.sqrt(max(a, b)))):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            step = c * d
            result *= step
        if abs(step - 1.0) < _EPSILON:
            break
    return result


def betaincinv(a: float, b: float, q: float) -> float:
    """The x in [0, 1] with I_x(a, b) = q: Newton steps kept inside a shrinking bracket."""
    if q <= 0.0:
        return 0.0
    if q >= 1.0:
        return 1.0
    low, high = 0.0, 1.0
    log_norm = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    x = _first_guess(a, b, q)
    for _ in range(200):
        error = betainc(a, b, x) - q
        if abs(error) <= 1e-15 * min(q, 1.0 - q):
            return x
        if error > 0:
            high = x
        else:
            low = x
        density = math.exp(log_norm + (a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x))
        step = x - error / density if density > 0 and math.isfinite(density) else -1.0
        if low < step < high:
            if abs(step - x) <= 1e-14 * x:
                return step
            x = step
        else:
            x = (low + high) / 2.0
        if high - low <= 1e-15 * x:
            break
    return x


def _first_guess(a: float, b: float, q: float) -> float:
    """A start for Newton: the normal approximation to the beta, kept inside (0, 1)."""
    mean = a / (a + b)
    spread = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
    guess = mean + NormalDist().inv_cdf(q) * spread
    return min(1.0 - 1e-12, max(1e-12, guess))


@lru_cache(maxsize=1024)
def t_quantile(probability: float, df: float) -> float:
    """Student's t quantile for *probability* > 0.5 with *df* degrees of freedom."""
    tail = 2.0 * (1.0 - probability)  # P(|T| > t) = I_{df/(df+t²)}(df/2, 1/2)
    x = betaincinv(df / 2.0, 0.5, tail)
    return math.sqrt(df * (1.0 / x - 1.0))


class Bounds(NamedTuple):
    """The interval the gate decides with, the evidence it rests on, and its p-values.

    ``successes`` and ``trials`` are the (possibly fractional, effective) binomial counts
    the bounds were computed from; ``p_pass`` is the one-sided p-value of H0 "rate ≤
    minimum" (small: evidence the minimum is met), ``p_fail`` of H0 "rate ≥ minimum".
    """

    low: float
    high: float
    method: str
    successes: float
    trials: float
    p_pass: float
    p_fail: float


def effective_counts(
    passed: int,
    trials: int,
    samples: int,
    cluster_stderr: float | None,
    level: float,
    informative: int = 0,
) -> tuple[float, float, str]:
    """The binomial (x*, n*) the bounds use: the counts themselves without repetitions,
    else Korn–Graubard's effective counts from the cluster-robust stderr.

    *informative* is the number of samples holding the rarer outcome (min of the samples
    with a pass and those with a non-pass; 0 when unknown). The variance of a rate near
    1 rests on the few samples that ever fail, so the t correction takes its degrees of
    freedom from them rather than from all samples (at 50 samples, rate 0.95, ICC 0.6,
    ``samples − 1`` let a target at the minimum pass 6% of the time). n* never falls
    below the samples, shrunk by their own t correction: the deterministic case.
    """
    if trials <= 0:
        return 0.0, 0.0, CLOPPER_PEARSON
    if samples <= 0 or samples >= trials:
        return float(passed), float(trials), CLOPPER_PEARSON
    rate = passed / trials
    n = float(samples)  # all passed or all failed: no variance to read, count samples
    if 0 < passed < trials and cluster_stderr:
        n = min(float(trials), max(float(samples), rate * (1.0 - rate) / cluster_stderr**2))
    if samples >= 2:
        floor = samples * _shrink(level, samples - 1.0)
        n = max(floor, n * _shrink(level, max(1.0, informative - 1.0)))
    return rate * n, n, KORN_GRAUBARD


def _shrink(level: float, df: float) -> float:
    """Korn–Graubard's (z / t_df)²: fewer degrees of freedom, less effective evidence."""
    probability = 1.0 - (1.0 - level) / 2.0
    return (NormalDist().inv_cdf(probability) / t_quantile(probability, df)) ** 2


def clopper_pearson(successes: float, trials: float, level: float) -> tuple[float, float]:
    """The exact two-sided interval at *level* for (possibly fractional) binomial counts."""
    if trials <= 0:
        return 0.0, 1.0
    tail = (1.0 - level) / 2.0
    low = 0.0 if successes <= 0 else betaincinv(successes, trials - successes + 1.0, tail)
    high = (
        1.0 if successes >= trials else 1.0 - betaincinv(trials - successes, successes + 1.0, tail)
    )
    return low, high


def one_sided_p(successes: float, trials: float, minimum: float) -> tuple[float, float]:
    """(p_pass, p_fail) at *minimum*: P(X ≥ x | minimum) and P(X ≤ x | minimum)."""
    if trials <= 0:
        return 1.0, 1.0
    if minimum <= 0.0:
        p_pass = 0.0  # every rate meets a minimum of 0
    else:
        p_pass = 1.0 if successes <= 0 else betainc(successes, trials - successes + 1.0, minimum)
    fails = trials - successes
    p_fail = 1.0 if fails <= 0 else betainc(fails, successes + 1.0, 1.0 - minimum)
    return p_pass, p_fail


@lru_cache(maxsize=4096)
def gate_bounds(
    passed: int,
    trials: int,
    samples: int,
    cluster_stderr: float | None,
    level: float,
    minimum: float | None,
    informative: int = 0,
) -> Bounds:
    """The gate's interval at *level* and its p-values at *minimum* (1, 1 without one).

    Cached: a calibration or a run with many targets asks for the same counts often.
    """
    x, n, method = effective_counts(passed, trials, samples, cluster_stderr, level, informative)
    low, high = clopper_pearson(x, n, level)
    p_pass, p_fail = one_sided_p(x, n, minimum) if minimum is not None else (1.0, 1.0)
    return Bounds(low, high, method, x, n, p_pass, p_fail)
