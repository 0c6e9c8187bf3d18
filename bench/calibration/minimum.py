"""The minimum check's one-sided error at the boundary, by exact enumeration.

For each minimum and n: how often a target exactly at the minimum is ``failed``, and how
often one just below it (minimum − 1e-9) is ``passed``; α = 0.05, so α/2 = 0.025 is the
promise (+0.005 allowed). Each row is the worse side over n ∈ {20, 50, 100, 1000}.
"""

from __future__ import annotations

from bench.calibration._gate import verdict_odds
from bench.calibration._row import Row

MINIMUMS = (0.5, 0.8, 0.9, 0.95, 0.99)
SIZES = (20, 50, 100, 1000)


def rows() -> list[Row]:
    found = []
    for minimum in MINIMUMS:
        worst = max(
            (verdict_odds(minimum, minimum, n, 0.95)["failed"], n, "at the minimum: failed")
            for n in SIZES
        )
        below = max(
            (verdict_odds(minimum, minimum - 1e-9, n, 0.95)["passed"], n, "just below: passed")
            for n in SIZES
        )
        for error, n, what in (worst, below):
            found.append(
                Row(
                    "minimum: boundary error (exact bounds)",
                    f"minimum={minimum:g}, {what}, worst n={n}",
                    error,
                    "≤ 0.030",
                    "exact",
                )
            )
    return found
