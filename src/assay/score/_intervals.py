"""Confidence intervals and standard errors for pass rates.

Why Wilson: the textbook Wald interval (rate ± z·stderr) collapses to zero width at 0 or
n passes and under-covers badly near the ends, which is where release gates live (rates
of 0.9 and above). Wilson's score interval keeps close to its declared coverage from
n = 20 up, is never empty and never leaves [0, 1]. The calibration tests in
``tests/stats`` hold it to that.

Why cluster by sample: with repetitions the trials of one sample are not independent (a
hard question stays hard), so the binomial stderr over trials is too small. The
cluster-robust stderr treats each sample's pass fraction as one observation.

scipy is imported inside the functions that need it: ``import assay`` must stay fast.
"""

from __future__ import annotations

import math

WILSON = "wilson"
DEFAULT_LEVEL = 0.95


def z_value(level: float) -> float:
    """The two-sided standard normal quantile for a confidence *level* (1.96 at 0.95).

    The standard library's ``NormalDist`` (Wichura's AS 241, within 1e-15 of scipy's
    ``norm.ppf``): every run and every ``assay score`` builds intervals, and importing
    ``scipy.stats`` for this one number cost them 0.5-1 s of CPU.
    """
    from statistics import NormalDist

    return NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)


def wilson_interval(passed: int, n: int, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """Wilson score interval for *passed* successes out of *n*; ``(0, 1)`` when n is 0."""
    if n <= 0:
        return 0.0, 1.0
    z = z_value(level)
    rate = passed / n
    z2n = z * z / n
    centre = (rate + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(rate * (1.0 - rate) / n + z2n / (4.0 * n))
    low = 0.0 if passed == 0 else max(0.0, centre - half)
    high = 1.0 if passed == n else min(1.0, centre + half)
    return low, high


def cluster_stderr(sum_means: float, sum_squares: float, clusters: int) -> float | None:
    """Cluster-robust stderr of the overall rate from per-sample pass fractions.

    *sum_means* and *sum_squares* are the sums of each sample's pass fraction and of its
    square (samples never scored add 0 to both); *clusters* is the planned sample count.
    """
    if clusters < 2:
        return None
    mean = sum_means / clusters
    variance = max(0.0, (sum_squares - clusters * mean * mean) / (clusters - 1))
    return math.sqrt(variance / clusters)
