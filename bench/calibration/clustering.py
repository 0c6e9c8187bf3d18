"""The gate's interval with repetitions (Korn–Graubard, clustered by sample).

Each sample has its own pass probability, beta-distributed with the given intra-sample
correlation (ICC 0: all equal; ICC 1: each sample always passes or always fails), and 5
repetitions. For each ICC: the worst coverage of the 95% interval and the worst chance
that a target exactly at the minimum is ``passed``, over samples ∈ {50, 100, 200} and
rates 0.5–0.95; 10,000 seeded runs per setting.
"""

from __future__ import annotations

from bench.calibration._gate import coverage_and_false_pass
from bench.calibration._row import Row

ICCS = (0.0, 0.1, 0.3, 0.6, 1.0)
SAMPLES = (50, 100, 200)
RATES = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
RUNS = 10_000


def rows() -> list[Row]:
    found = []
    for icc in ICCS:
        grid = [(samples, rate) for samples in SAMPLES for rate in RATES]
        results = [
            (*coverage_and_false_pass(seed, RUNS, samples, 5, rate, icc, 0.95), samples, rate)
            for seed, (samples, rate) in enumerate(grid, start=int(icc * 1000))
        ]
        coverage = min(results)
        false_pass = max(results, key=lambda r: r[1])
        found.append(
            Row(
                "repetitions: interval coverage",
                f"ICC={icc:g}, worst at samples={coverage[2]}, p={coverage[3]:g}",
                coverage[0],
                "≥ 0.93",
                f"{RUNS:,} × {len(results)}",
            )
        )
        found.append(
            Row(
                "repetitions: false pass at the minimum",
                f"ICC={icc:g}, worst at samples={false_pass[2]}, p={false_pass[3]:g}",
                false_pass[1],
                "≤ 0.030",
                f"{RUNS:,} × {len(results)}",
            )
        )
    return found
