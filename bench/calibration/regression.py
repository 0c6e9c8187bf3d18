"""Calibration of ``no_regression``: false pass of a new run worse by exactly the margin.

Pass/fail, one repetition — exact. The gate's verdict depends on the paired table only
through the (baseline-only, new-only) counts among n pairs, and for D discordant pairs it
passes exactly when baseline-only ≤ c*(D) (monotone; ``tests/stats`` checks it by a full
scan). c*(D) is found by binary search on assay's own verdict (``judge_regression`` on
``paired_interval``), and then, for any discordance pattern (P(new only) = q, P(baseline
only) = q + margin), P(pass) = Σ_D Binomial(n, 2q + margin)(D) · P(Binomial(D, share) ≤
c*(D)): no simulation error. The worst case is taken over a grid of q from 0 (the new run
only breaks samples) to its largest value.

Repetitions — simulated: per-sample pass probabilities with intra-class correlation ICC
(Beta; 0/1 per sample at ICC 1), 5 repetitions, the new run worse by exactly the margin
either by losing samples outright or as another model with its own difficulty; the
verdict is assay's (``margin_p_values``, which agrees with the interval exactly).
"""

from __future__ import annotations

import math
import zlib
from functools import cache
from statistics import NormalDist
from typing import Any

import msgspec
import numpy as np
from assay.compare import margin_p_values, paired_interval, summarize
from assay.gate import judge_regression
from bench.calibration._row import Row
from scipy import stats  # type: ignore[import-untyped]

LEVEL = 0.95
SIZES = (50, 100, 200, 500, 1000)
MARGINS = (0.01, 0.02, 0.03, 0.05)
NEW_ONLY = (0.0, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.4)
PROMISED = f"≤ {(1 - LEVEL) / 2 + 0.005:.3f}"
TEMPLATE = summarize(("baseline", "new"), "s", (0, 0, 0, 0, 1), [], 0, LEVEL)


def agresti_min(a_only: int, b_only: int, pairs: int, level: float) -> tuple[float, float]:
    """The Wald-type interval no_regression used before issue 13 (for the "before" row)."""
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    total = pairs + 2.0
    p_a, p_b = (a_only + 0.5) / total, (b_only + 0.5) / total
    centre = p_b - p_a
    half = z * math.sqrt(max(0.0, (p_a + p_b - centre * centre) / total))
    return max(-1.0, centre - half), min(1.0, centre + half)


INTERVALS = {"score": paired_interval, "agresti-min": agresti_min}


def _passes(a_only: int, b_only: int, n: int, margin: float, method: str) -> bool:
    low, high = INTERVALS[method](a_only, b_only, n, LEVEL)
    comparison = msgspec.structs.replace(TEMPLATE, pairs=n, ci_low=low, ci_high=high)
    return judge_regression(comparison, margin)[0] == "passed"


@cache
def _threshold(n: int, margin: float, method: str = "score") -> Any:
    found = []
    for discordant in range(n + 1):
        low, high = -1, discordant
        while low < high:
            middle = (low + high + 1) // 2
            if _passes(middle, discordant - middle, n, margin, method):
                low = middle
            else:
                high = middle - 1
        found.append(low)
    return np.array(found)


def exact_false_pass(n: int, margin: float, new_only: float, method: str = "score") -> float:
    """P(passed) for a new run worse by exactly *margin*, P(new only) = *new_only*."""
    baseline_only = new_only + margin
    discordant = np.arange(n + 1)
    weight = stats.binom.pmf(discordant, n, new_only + baseline_only)
    threshold = _threshold(n, margin, method)
    share = baseline_only / (new_only + baseline_only)
    passing = np.where(threshold >= 0, stats.binom.cdf(threshold, discordant, share), 0.0)
    return float(np.sum(weight * passing))


def _pass_fail_rows() -> list[Row]:
    rows = []
    for n in SIZES:
        worst = max(
            (exact_false_pass(n, m, q), m, q) for m in MARGINS for q in NEW_ONLY if 2 * q + m <= 1
        )
        rate, margin, q = worst
        where = "new run only breaks samples" if q == 0 else f"P(new only)={q:g}"
        rows.append(
            Row(
                "no_regression false pass at the margin (pass/fail, worst case)",
                f"n={n}, margin={margin:g}, {where}",
                rate,
                PROMISED,
                "exact",
            )
        )
    return rows


def _before_row() -> Row:
    rate, n, margin = max(
        (exact_false_pass(n, m, 0.0, "agresti-min"), n, m) for n in (100, 200) for m in (0.01, 0.02)
    )
    return Row(
        "no_regression false pass at the margin, Agresti–Min interval (before issue 13)",
        f"n={n}, margin={margin:g}, new run only breaks samples",
        rate,
        "not used",
        "exact",
    )


def _difficulty(rng: Any, mean: float, icc: float, shape: tuple[int, int]) -> Any:
    if icc >= 1.0:
        return (rng.random(shape) < mean).astype(float)
    scale = (1 - icc) / icc
    return rng.beta(mean * scale, (1 - mean) * scale, size=shape)


def simulated_false_pass(n: int, icc: float, how: str, margin: float, runs: int) -> float:
    """False pass at the margin with 5 repetitions, by simulation (seeded)."""
    rng = np.random.default_rng(zlib.crc32(f"{n} {icc} {how} {margin}".encode()))
    reps, mean = 5, 0.8
    base = _difficulty(rng, mean, icc, (runs, n))
    if how == "breaks":
        new = base * (rng.random(base.shape) >= margin / mean)
    else:
        new = _difficulty(rng, mean - margin, icc, (runs, n))
    diff = (rng.binomial(reps, new) - rng.binomial(reps, base)) / reps
    a_mass = np.where(diff < 0, -diff, 0.0).sum(axis=1).tolist()
    b_mass = np.where(diff > 0, diff, 0.0).sum(axis=1).tolist()
    alpha = 1 - LEVEL
    passes = [
        margin_p_values(a, b, n, margin)[0] < alpha / 2 for a, b in zip(a_mass, b_mass, strict=True)
    ]
    return float(np.mean(passes))


def _repetition_rows(runs: int = 20_000) -> list[Row]:
    rows = []
    for icc in (0.1, 0.2, 0.5, 1.0):
        worst = max(
            (simulated_false_pass(n, icc, how, m, runs), n, how, m)
            for n in (50, 300)
            for how in ("breaks", "independent")
            for m in (0.02, 0.05)
        )
        rate, n, how, margin = worst
        rows.append(
            Row(
                "no_regression false pass at the margin (5 repetitions, worst case)",
                f"ICC={icc:g}, n={n} samples, margin={margin:g}, new run {how}",
                rate,
                PROMISED,
                str(runs),
            )
        )
    return rows


def rows() -> list[Row]:
    return [*_pass_fail_rows(), _before_row(), *_repetition_rows()]
