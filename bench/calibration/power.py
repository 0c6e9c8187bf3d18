"""``min_effect`` with ``power``: does the n the gate names give the power it promises?

For each minimum, effect and power: n = the gate's ``n_needed``; then the exact chance,
under exact Clopper–Pearson bounds computed with scipy (independently of assay's code),
that a target at minimum + effect is ``passed`` and one at minimum − effect is
``failed``, at n and every size up to n + n/20. Each row is the worst over that range,
both sides, the effects and the powers, as a margin over the declared power (≥ 0 kept).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from assay.gate import samples_needed
from bench.calibration._row import Row
from scipy import stats  # type: ignore[import-untyped]

MINIMUMS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.99)
EFFECTS = (0.01, 0.02, 0.05, 0.1)
POWERS = (0.8, 0.9)
LEVEL = 0.95


def exact_power(n: int, minimum: float, rate: float, level: float = LEVEL) -> float:
    """P(the exact bounds decide a target at *rate* the right way) with n trials."""
    tail = (1 - level) / 2
    k = np.arange(n + 1)
    if rate > minimum:
        low = np.where(k == 0, 0.0, stats.beta.ppf(tail, np.maximum(k, 1), n - k + 1))
        right: Any = low >= minimum
    else:
        high = np.where(k == n, 1.0, stats.beta.ppf(1 - tail, k + 1, np.maximum(n - k, 1)))
        right = high < minimum
    return float(stats.binom.pmf(k, n, rate)[right].sum())


def worst_margin(minimum: float, effect: float, power: float) -> tuple[float, int, float]:
    """(worst power − declared power, n needed, the side's rate) over n .. n + n/20."""
    needed = samples_needed(minimum, effect, power, LEVEL)
    sides = [r for r in (minimum + effect, minimum - effect) if 0 <= r <= 1]
    step = max(1, needed // 200)
    worst = min(
        (exact_power(n, minimum, rate) - power, needed, rate)
        for n in range(needed, needed + needed // 20 + 1, step)
        for rate in sides
    )
    return worst


def rows() -> list[Row]:
    found = []
    for minimum in MINIMUMS:
        results = [
            (*worst_margin(minimum, effect, power), effect, power)
            for effect in EFFECTS
            for power in POWERS
        ]
        margin, n, rate, effect, power = min(results)
        found.append(
            Row(
                "min_effect: power − declared power (both sides)",
                f"minimum={minimum:g}, worst: effect={effect:g}, power={power:g}, "
                f"rate={rate:g}, n={n}",
                margin,
                "≥ 0",
                "exact",
            )
        )
    return found
