"""Family-wise error of the run's gated checks under Holm (and, for contrast, without).

10 targets × 3 scorers, n = 100 each, every check exactly at its minimum and independent
of the others (the hardest case for Holm): how often does some check come out
``failed``? The p-values are assay's (``gate_bounds``), one per count, and the
adjustment assay's ``holm``; 10,000 seeded runs per row.
"""

from __future__ import annotations

import numpy as np
from assay.gate._bounds import gate_bounds
from assay.gate._multiplicity import holm, two_sided
from bench.calibration._row import Row

RUNS, CHECKS, N, LEVEL = 10_000, 30, 100, 0.95


def family_wise_error(minimum: float, adjust: bool, seed: int) -> float:
    """How often at least one of the 30 checks at their minimum is ``failed``."""
    alpha = 1 - LEVEL
    table = [gate_bounds(k, N, N, None, LEVEL, minimum) for k in range(N + 1)]
    p_value = np.array([two_sided(b.p_pass, b.p_fail) for b in table])
    failed_alone = np.array([b.p_fail < alpha / 2 for b in table])
    counts = np.random.default_rng(seed).binomial(N, minimum, size=(RUNS, CHECKS))
    wrong = failed_alone[counts]
    if adjust:
        adjusted = np.array([holm(row) for row in p_value[counts].tolist()])
        wrong &= adjusted <= alpha
    return float(np.mean(wrong.any(axis=1)))


def rows() -> list[Row]:
    found = []
    for seed, minimum in enumerate((0.8, 0.9, 0.95)):
        for adjust, label, promise in ((True, "holm", "≤ 0.05"), (False, "none", "— (opt-out)")):
            found.append(
                Row(
                    f"multiplicity: family-wise error ({label})",
                    f"10 targets × 3 scorers, n=100, all at minimum={minimum:g}",
                    family_wise_error(minimum, adjust, seed),
                    promise,
                    f"{RUNS:,}",
                )
            )
    return found
