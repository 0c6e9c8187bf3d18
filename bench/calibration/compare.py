"""Calibration of ``assay compare`` with repetitions: false positives of identical targets.

Two equally good targets, each with its own per-sample difficulty (Beta with intra-class
correlation ICC, so a target's repetitions of a sample agree more than chance), 5
repetitions. A comparison reports a "significant" difference when its p-value is below
α = 0.05. The lead test with repetitions is the sign test on per-sample means; the pass
rates are tested with the clustered McNemar (Durkalski). The McNemar test over
(sample, repetition) pairs, which led before issue 13, is shown for reference: it counts
one sample's repetitions as independent evidence. Each p-value is assay's own.
"""

from __future__ import annotations

import zlib
from functools import cache
from typing import Any

import numpy as np
from assay.compare import mcnemar_p
from assay.compare._pairs import clustered_mcnemar_p
from bench.calibration._row import Row

ALPHA = 0.05
REPS = 5
RUNS = 10_000
PROMISED = f"≤ {ALPHA + 0.01:.2f}"


def _difficulty(rng: Any, icc: float, shape: tuple[int, ...]) -> Any:
    scale = (1 - icc) / icc
    return rng.beta(0.7 * scale, 0.3 * scale, size=shape)


def false_positives(n: int, icc: float) -> dict[str, float]:
    """The share of runs each test calls "significant" (seeded)."""
    rng = np.random.default_rng(zlib.crc32(f"compare {n} {icc}".encode()))
    shape = (RUNS, n, REPS)
    a = rng.random(shape) < _difficulty(rng, icc, (RUNS, n, 1))
    b = rng.random(shape) < _difficulty(rng, icc, (RUNS, n, 1))
    net = b.sum(axis=2).astype(int) - a.sum(axis=2).astype(int)
    sign_p = cache(mcnemar_p)
    higher = zip((net < 0).sum(1).tolist(), (net > 0).sum(1).tolist(), strict=True)
    sign = np.array([sign_p(x, y) for x, y in higher])
    clustered = np.array([clustered_mcnemar_p(row) for row in net.tolist()])
    a_only = (a & ~b).sum(axis=(1, 2)).tolist()
    b_only = (b & ~a).sum(axis=(1, 2)).tolist()
    trials = np.array([sign_p(x, y) for x, y in zip(a_only, b_only, strict=True)])
    return {
        "sign test on per-sample means (leads)": float(np.mean(sign < ALPHA)),
        "clustered McNemar on pass rates": float(np.mean(clustered < ALPHA)),
        "McNemar over (sample, repetition) pairs (before)": float(np.mean(trials < ALPHA)),
    }


def rows() -> list[Row]:
    found: dict[tuple[str, float], tuple[float, int]] = {}
    for icc in (0.2, 0.5):
        for n in (20, 50, 100, 300):
            for test, rate in false_positives(n, icc).items():
                if rate >= found.get((test, icc), (-1.0, 0))[0]:
                    found[(test, icc)] = (rate, n)
    return [
        Row(
            f"compare false positives, 5 repetitions: {test}",
            f"ICC={icc:g}, n={n} samples (worst of 20–300)",
            rate,
            "not used" if "before" in test else PROMISED,
            str(RUNS),
        )
        for (test, icc), (rate, n) in found.items()
    ]
