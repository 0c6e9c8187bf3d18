"""The geometry of the HTML report's interval chart, computed here, drawn by the template.

Why an inline SVG: the report must open offline and under a CSP that forbids every
external resource and script, so the chart is plain shapes. Only numbers are computed
here; every label goes through the template's autoescaping.
"""

from __future__ import annotations

import msgspec

from assay.report._model import Report

WIDTH = 640
LEFT = 220
RIGHT = 20
ROW = 26
TOP = 22


class ChartRow(msgspec.Struct, frozen=True):
    """One target × scorer: its label, and x positions of the rate and its interval."""

    label: str
    y: float
    x_rate: float
    x_low: float
    x_high: float
    x_minimum: float | None
    text: str


class Chart(msgspec.Struct, frozen=True):
    """The chart's size, its axis ticks and its rows."""

    width: int
    height: int
    left: int
    right: int
    ticks: list[tuple[float, str]]
    rows: list[ChartRow]


def _x(rate: float) -> float:
    return round(LEFT + max(0.0, min(1.0, rate)) * (WIDTH - LEFT - RIGHT), 2)


def interval_chart(report: Report) -> Chart:
    """Each target's pass rate with its interval (and minimum), one row per scorer."""
    rows: list[ChartRow] = []
    for decision in report.gate.targets:
        for scorer_id in report.scorers:
            est = report.metrics.estimate(decision.target_id, scorer_id)
            label = (
                decision.target_id if len(report.scorers) == 1 else f"{est.target_id} · {scorer_id}"
            )
            minimum = decision.minimum
            rows.append(
                ChartRow(
                    label=label,
                    y=TOP + len(rows) * ROW + ROW / 2,
                    x_rate=_x(est.value),
                    x_low=_x(est.ci_low),
                    x_high=_x(est.ci_high),
                    x_minimum=None if minimum is None else _x(minimum),
                    text=f"{est.value:.3f} [{est.ci_low:.3f}, {est.ci_high:.3f}]",
                )
            )
    ticks = [(_x(t / 4), f"{t / 4:g}") for t in range(5)]
    height = TOP + len(rows) * ROW + 10
    return Chart(WIDTH, height, LEFT, WIDTH - RIGHT, ticks, rows)
