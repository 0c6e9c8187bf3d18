"""Calibration of the sequential gate: false pass over every look, and the trials saved.

False pass: a target exactly at its minimum, looked at after every 10 samples of a plan
of 1,000 (100 looks), with and without clustered repetitions; the first decisive look
must say `passed` at most α/2 of the time. Cost: the mean number of samples a run spends
before it stops, for a target well above, well below and at its minimum, computed both
vectorised (numpy/scipy, many runs) and through the real ``Monitor`` (fewer runs).
"""

from __future__ import annotations

import math

import numpy as np
from assay.gate._sequential import Monitor, SequentialPlan, prior_for, threshold
from assay.spec import DatasetRef, EvalSpec, GatePolicy, ScorerSpec, TargetSpec
from bench.calibration._row import Row
from scipy.special import betaln

ALPHA = 0.05
EVERY = 10
PLANNED = 1000
RUNS = 20_000
CHUNK = 2_000  # runs simulated at once (memory: CHUNK × PLANNED floats)


def _fractions(
    rng: np.random.Generator, runs: int, rate: float, repetitions: int, icc: float
) -> np.ndarray:
    if repetitions == 1 or icc == 0:
        own = np.full((runs, PLANNED), rate)
    else:
        strength = (1 - icc) / icc
        own = rng.beta(rate * strength, (1 - rate) * strength, size=(runs, PLANNED))
    return rng.binomial(repetitions, own) / repetitions


def _procedure(fractions: np.ndarray, minimum: float) -> tuple[np.ndarray, np.ndarray]:
    """Each run's first decision (+1 passed, −1 failed, 0 none) and samples spent."""
    a, b = prior_for(minimum)
    sums = np.cumsum(fractions, axis=1)[:, EVERY - 1 :: EVERY]
    t = np.arange(EVERY, PLANNED + 1, EVERY, dtype=float)[None, :]
    log_m = (
        betaln(a + sums, b + t - sums)
        - betaln(a, b)
        - sums * math.log(minimum)
        - (t - sums) * math.log1p(-minimum)
    )
    decisive = log_m >= threshold(ALPHA, 1)
    anywhere = decisive.any(axis=1)
    first = decisive.argmax(axis=1)
    rows = np.arange(len(fractions))
    above = sums[rows, first] / t[0, first] > minimum
    decision = np.where(anywhere, np.where(above, 1, -1), 0)
    spent = np.where(anywhere, (first + 1) * EVERY, PLANNED)
    return decision, spent


def _simulate(
    rate: float, minimum: float, repetitions: int = 1, icc: float = 0.0
) -> tuple[float, float, float]:
    """(false-or-true pass rate, fail rate, mean samples spent) over RUNS runs."""
    rng = np.random.default_rng(abs(hash((rate, minimum, repetitions, icc))) % 2**32)
    passes = fails = spent = 0.0
    for _ in range(RUNS // CHUNK):
        decision, used = _procedure(_fractions(rng, CHUNK, rate, repetitions, icc), minimum)
        passes += float(np.sum(decision == 1))
        fails += float(np.sum(decision == -1))
        spent += float(np.sum(used))
    return passes / RUNS, fails / RUNS, spent / RUNS


def _through_the_monitor(rate: float, minimum: float, runs: int = 200) -> float:
    """Mean samples spent by the real ``Monitor`` (the code a run uses), seeded."""
    spec = EvalSpec(
        evaluation="calibration",
        dataset=DatasetRef("data.jsonl", "sha256:0", PLANNED),
        targets=(TargetSpec("t", "callable", callable="m:f"),),
        scorers=(ScorerSpec("exact", "exact"),),
        gate=GatePolicy(minimum=minimum, confidence=1 - ALPHA, sequential=True),
    )
    rng = np.random.default_rng(2026)
    spent = 0
    for _ in range(runs):
        monitor = Monitor(SequentialPlan(spec, ["exact"]))
        passes = rng.random(PLANNED) < rate
        for index in range(PLANNED):
            status = "passed" if passes[index] else "failed"
            monitor.add(index, "t", "completed", {"exact": status})
            if monitor.stopped:
                break
        spent += monitor.looks[-1].samples
    return spent / runs


def rows() -> list[Row]:
    found: list[Row] = []
    worst: tuple[float, str] = (-1.0, "")
    for minimum in (0.5, 0.8, 0.9, 0.95, 0.99):
        for repetitions, icc in ((1, 0.0), (5, 0.3)):
            false_pass, _, _ = _simulate(minimum, minimum, repetitions, icc)
            setting = f"minimum={minimum}, reps={repetitions}, ICC={icc}"
            worst = max(worst, (false_pass, setting))
    found.append(
        Row(
            "sequential false pass over 100 looks (worst)",
            f"{worst[1]}; 1,000 samples, every 10",
            worst[0],
            f"≤ {ALPHA / 2:g}",
            f"{RUNS} per setting",
        )
    )
    for rate, minimum in ((0.97, 0.9), (0.8, 0.9), (0.9, 0.9)):
        _, _, spent = _simulate(rate, minimum)
        found.append(
            Row(
                "sequential samples spent (mean)",
                f"p={rate}, minimum {minimum}, 1,000 planned, every 10",
                spent,
                "≤ 1000 (the fixed-n plan)",
                str(RUNS),
            )
        )
    found.append(
        Row(
            "sequential samples spent (mean), the real Monitor",
            "p=0.97, minimum 0.9, 1,000 planned, every 10",
            _through_the_monitor(0.97, 0.9),
            "≤ 1000 (the fixed-n plan)",
            "200",
        )
    )
    return found


if __name__ == "__main__":
    for row in rows():
        print(row)
