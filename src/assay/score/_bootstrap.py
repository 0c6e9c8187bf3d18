"""Bootstrap intervals for means of continuous scores (partial credit, F1, graded values).

Why a bootstrap: a mean of scores in [0, 1] has no tidy sampling distribution (a pile of
zeros and a few partial credits is nothing like a normal curve at n = 100), and the
percentile bootstrap assumes none. It is scipy's ``stats.bootstrap`` (vectorised,
resampling in batches so memory stays bounded at 100,000 samples); BCa is not used
because its jackknife costs n² at that size.

Why sorted and seeded: a re-score, or a resumed run, must reproduce the interval byte for
byte. The mean depends only on the multiset of values, so the values are sorted before
resampling (their arrival order cannot matter) and the generator is seeded from the
estimate's own name (target, scorer), which gives each estimate its own stream.

Why by sample: with repetitions the values of one sample are not independent. The
callers pass one value per sample (its mean over repetitions), which is the cluster
bootstrap for equal cluster sizes; the method is then named ``cluster-bootstrap-…``.

numpy and scipy are imported inside the functions: ``import assay`` must stay fast.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import msgspec

BOOTSTRAP = "bootstrap-percentile"
CLUSTER_BOOTSTRAP = "cluster-bootstrap-percentile"
RESAMPLES = 1000
_CELLS_PER_BATCH = 1_000_000  # resampled values drawn at once: ~8 MB of indices


class MeanEstimate(msgspec.Struct, frozen=True):
    """The mean score of one target × scorer over its planned samples, with its interval.

    ``samples`` is the number of independent units resampled (planned samples; with
    repetitions each is its mean over them); a sample never scored counts as 0.
    """

    target_id: str
    scorer_id: str
    value: float
    samples: int
    denominator: int
    stderr: float
    ci_low: float
    ci_high: float
    ci_level: float
    ci_method: str
    resamples: int = RESAMPLES
    seed: int = 0


def seed_of(*names: str) -> int:
    """A stable 63-bit seed from *names*: the same on every machine and every day."""
    digest = hashlib.sha256("\x00".join(names).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def bootstrap_mean(
    values: Iterable[float], level: float, seed: int, resamples: int = RESAMPLES
) -> tuple[float, float, float, float]:
    """``(mean, stderr, low, high)``: the percentile bootstrap of the mean of *values*.

    Fewer than two values give no spread to resample: the interval is then ``(0, 1)``,
    the whole range of a score, and the stderr 0.
    """
    import numpy as np

    data = np.sort(np.fromiter(values, dtype=np.float64))
    if data.size == 0:
        return 0.0, 0.0, 0.0, 1.0
    mean = float(np.mean(data))
    if data.size < 2:
        return mean, 0.0, 0.0, 1.0
    low, high, stderr = bootstrap_means(data[np.newaxis, :], level, seed, resamples)
    return mean, float(stderr[0]), float(low[0]), float(high[0])


def bootstrap_means(data: Any, level: float, seed: int, resamples: int = RESAMPLES) -> Any:
    """Percentile bootstrap of the mean along the last axis of a 2-D array, row by row.

    Returns ``(low, high, stderr)`` arrays. Used with one row by ``bootstrap_mean`` and
    with thousands of simulated runs at once by the calibration tests.
    """
    import warnings

    import numpy as np
    from scipy import stats  # type: ignore[import-untyped]  # deferred: slow import

    rows, n = data.shape
    batch = max(1, _CELLS_PER_BATCH // max(1, rows * n))
    with warnings.catch_warnings():
        # identical values (a constant score) are "degenerate": the interval is a point
        warnings.simplefilter("ignore", category=stats.DegenerateDataWarning)
        result = stats.bootstrap(
            (data,),
            np.mean,
            n_resamples=resamples,
            batch=batch,
            vectorized=True,
            axis=-1,
            confidence_level=level,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    low, high = result.confidence_interval
    return np.atleast_1d(low), np.atleast_1d(high), np.atleast_1d(result.standard_error)
