"""Holm's step-down adjustment of the p-values of one report's comparisons.

Why: a report of 10 targets holds dozens of paired tests; read one by one at 0.05, some
"significant" difference shows up by chance in most such reports. Holm's adjustment
keeps the chance of any false "significant" in the family at most α, under any
dependence between the tests, and never rejects less than Bonferroni. ``p_adjusted``
sits beside the raw ``p_value``: compare the adjusted one with α.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from assay.compare._mcnemar import PairedComparison


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given.

    The i-th smallest p (from 0) is multiplied by (m − i), then made non-decreasing in
    that order and capped at 1.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [1.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def holm(comparisons: Sequence[PairedComparison]) -> list[PairedComparison]:
    """*comparisons* with ``p_adjusted`` set over them as one family."""
    adjusted = holm_adjusted([c.p_value for c in comparisons])
    return [
        msgspec.structs.replace(c, p_adjusted=p) for c, p in zip(comparisons, adjusted, strict=True)
    ]
