"""Issue 19's targets, read off the rows the other workloads measured: PASS or FAIL each.

``run_all.py`` calls ``rows_for`` after every workload ran; a figure that was not
measured (a workload skipped or failed) is a FAIL saying so, never a silent pass.

1. trivial task (``sidebyside.py``, the Python task at N = 100,000): ≥ 15,000 samples/s
   and peak RSS ≤ 100 MB, one process;
2. network (``network.py``, 50 ms latency): ≥ 3,200 samples/s at 200 connections and
   ≥ 5,000/s at 500, client CPU ≤ 0.25 ms a sample at both;
3. persistent program target (``persistent_target.py``): ``protocol: jsonl`` with one
   worker ≥ 5,000 trials/s.
"""

from __future__ import annotations

from collections.abc import Callable

from _common import Row

WORKLOAD = "issue 19"
TRIVIAL_N = 100_000
TRIVIAL_RATE = 15_000.0  # samples/s
TRIVIAL_RSS_MB = 100.0
NETWORK_RATES = {200: 3_200.0, 500: 5_000.0}  # samples/s at C connections
NETWORK_CPU_MS = 0.25  # client CPU per sample
PERSISTENT_RATE = 5_000.0  # trials/s


def rows_for(rows: list[Row]) -> list[Row]:
    """One gated row per target of issue 19, from *rows* (every workload's)."""

    def find(workload: Callable[[str], bool], figure: Callable[[str], bool]) -> Row | None:
        found = [r for r in rows if workload(r.workload) and figure(r.figure)]
        return found[0] if found else None

    trivial = f"overhead, Python task N={TRIVIAL_N:,}"
    out = [
        _at_least(
            find(lambda w: w == trivial, lambda f: f.startswith("samples/s")),
            "trivial task: samples/s at N = 100,000",
            TRIVIAL_RATE,
        ),
        _at_most(
            find(lambda w: w == trivial, lambda f: f == "peak RSS"),
            "trivial task: peak RSS at N = 100,000",
            TRIVIAL_RSS_MB,
        ),
    ]
    cpu = find(lambda w: w == trivial, lambda f: f.startswith("CPU per sample"))
    if cpu is not None:  # what the rate needs on one core: 1 / 15,000 s = 67 µs
        out.append(Row(WORKLOAD, "trivial task: CPU per sample (info)", cpu.value * 1e3, "µs"))
    for connections, rate in NETWORK_RATES.items():
        name = f"network {connections} connections"
        out.append(
            _at_least(
                find(lambda w, n=name: w == n, lambda f: f.startswith("samples/s")),
                f"network: samples/s at {connections} connections",
                rate,
            )
        )
        out.append(
            _at_most(
                find(lambda w, n=name: w == n, lambda f: f == "harness CPU per sample"),
                f"network: client CPU per sample at {connections} connections",
                NETWORK_CPU_MS,
            )
        )
    out.append(
        _at_least(
            find(lambda w: w.startswith("jsonl, 1 worker"), lambda f: f.startswith("trials/s")),
            "persistent target (jsonl, 1 worker): trials/s",
            PERSISTENT_RATE,
        )
    )
    return out


def _at_least(row: Row | None, figure: str, minimum: float) -> Row:
    return _gated(row, figure, f">= {minimum:,.0f}", lambda v: v >= minimum)


def _at_most(row: Row | None, figure: str, maximum: float) -> Row:
    return _gated(row, figure, f"<= {maximum:g}", lambda v: v <= maximum)


def _gated(row: Row | None, figure: str, bound: str, holds: Callable[[float], bool]) -> Row:
    if row is None or row.value != row.value:  # missing, or NaN (not measured)
        return Row(WORKLOAD, figure, float("nan"), "", target=bound, ok=False, note="not measured")
    return Row(
        WORKLOAD,
        figure,
        row.value,
        row.unit,
        target=f"{bound} {row.unit}".rstrip(),
        ok=holds(row.value),
        note=f"from {row.workload}",
    )
