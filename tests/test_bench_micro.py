"""bench/micro.py still runs against the code it measures (a signature it calls changed
once, and only ``run_all.py`` found out): every micro-benchmark, a few operations each."""

from __future__ import annotations

import math
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_every_micro_benchmark_runs_and_measures_something(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH))  # micro.py imports its neighbours by name
    try:
        import micro

        rows = micro.measure(ops=20, batches=1, base=tmp_path)
    finally:
        sys.path.remove(str(BENCH))
    assert len(rows) >= 10
    names = [row.figure for row in rows]
    assert "judge one bundle (score, count, row)" in names
    for row in rows:
        assert math.isfinite(row.value) and row.value > 0, row
