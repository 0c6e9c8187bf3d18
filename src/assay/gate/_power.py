"""How many planned samples a gate needs before its verdict can mean anything.

A plan too small to detect the effect a team cares about yields a verdict that is mostly
noise; the ``min_samples`` policy (``min_effect`` with ``power``) says so up front and
names the n that would do, rather than letting a lucky small run pass.

Why samples, not trials: repetitions of one sample share its difficulty, so three
repetitions of 100 samples carry far less than 300 samples' evidence (exactly as much
as 100, when the target is deterministic). The check counts independent samples, which
errs on the safe side; the n it names is a number of samples.
"""

from __future__ import annotations

import math

from assay.score import MetricEstimate


def independent_samples(estimate: MetricEstimate) -> int:
    """The planned samples behind *estimate* (its denominator when not recorded)."""
    return estimate.samples or estimate.denominator


def samples_needed(baseline: float, effect: float, power: float, level: float) -> int:
    """Samples needed to tell *baseline* from *baseline ± effect* (normal approximation).

    Two-sided at ``1 - level``; the alternative is the side of *baseline* with room for
    the effect (upwards unless that would pass 1).
    """
    from scipy.stats import norm  # type: ignore[import-untyped]  # deferred: slow import

    alternative = baseline + effect if baseline + effect <= 1.0 else baseline - effect
    alternative = min(1.0, max(0.0, alternative))
    z_alpha = float(norm.ppf(1.0 - (1.0 - level) / 2.0))
    z_beta = float(norm.ppf(power))
    spread = z_alpha * math.sqrt(baseline * (1.0 - baseline)) + z_beta * math.sqrt(
        alternative * (1.0 - alternative)
    )
    return max(1, math.ceil((spread / effect) ** 2))
