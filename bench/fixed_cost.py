"""The fixed CPU cost of a run (issue 19, item 2): before its first model call and after
its last answer, on the trivial task in fresh processes, variants taking turns.

    python bench/fixed_cost.py --variant main=/work/main/src --variant this=src \\
        [--samples 5000] [--rounds 5]

A variant is ``NAME=SRC``, the ``src`` folder put first on ``PYTHONPATH``. The child
times (``os.times``, user + system, the whole process with its threads) the
``assay.eval`` call of ``bench/tasks/assay_overhead.py`` split at the model's first
call and its last answer: *start* (task load, dataset, plan, evidence opened), *end*
(metrics, reports, indexes, compaction, manifest), and ``conclude`` alone, and the
wall time of the end and of ``conclude`` (compaction compresses on two threads: less
wall, the same CPU); the medians are printed at the end with the load average. The network run
(``network.py``) pays the same start and end; its model calls differ.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

from _common import child_figures, source_variants, turns_parser

BENCH = Path(__file__).resolve().parent
TASK = f"{BENCH / 'tasks' / 'assay_overhead.py'}@overhead"

CHILD = """
import json, os, sys, time
from pathlib import Path

def cpu():
    t = os.times()
    return t.user + t.system

samples, out = int(sys.argv[1]), Path(sys.argv[2])
import assay
from assay.model import MockAPI
from assay.pipeline import _execute

marks = {}
generate = MockAPI.generate

async def timed(self, *args, **kwargs):
    marks.setdefault("first", cpu())
    try:
        return await generate(self, *args, **kwargs)
    finally:
        marks["last"], marks["last_wall"] = cpu(), time.perf_counter()

MockAPI.generate = timed
conclude = _execute.conclude

def concluded(*args, **kwargs):
    begin, wall = cpu(), time.perf_counter()
    try:
        return conclude(*args, **kwargs)
    finally:
        marks["conclude"] = cpu() - begin
        marks["conclude_wall"] = time.perf_counter() - wall

_execute.conclude = concluded
begin = cpu()
assay.eval(sys.argv[3], task_args={"samples": samples}, log_dir=out,
           max_samples=16, max_connections=16)
end, end_wall = cpu(), time.perf_counter()
print(json.dumps({"start": marks["first"] - begin, "end": end - marks["last"],
                  "conclude": marks["conclude"], "total": end - begin,
                  "end_wall": end_wall - marks["last_wall"],
                  "conclude_wall": marks["conclude_wall"]}))
"""


def once(src: Path, samples: int, base: Path) -> dict[str, float]:
    """One fresh process: its start, end, conclude and total CPU seconds."""
    out = base / "log"
    env = {**os.environ, "PYTHONPATH": str(src.resolve())}
    return child_figures([sys.executable, "-c", CHILD, str(samples), str(out), TASK], env, out)


def main() -> None:
    parser = turns_parser(__doc__, 5_000, 5)
    args = parser.parse_args()
    variants = source_variants(args.variant)
    results: dict[str, list[dict[str, float]]] = {name: [] for name, _ in variants}
    print(f"load average at the start: {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="assay-fixed-") as base:
        for round_ in range(1, args.rounds + 1):
            for name, src in variants:
                figures = once(src, args.samples, Path(base))
                results[name].append(figures)
                shown = "  ".join(f"{k} {v:.3f}s" for k, v in figures.items())
                print(f"round {round_} {name:>8}: {shown}", flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print(f"medians (CPU s) at N = {args.samples:,}:")
    for name, rows in results.items():
        medians = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        per = 1e6 * medians["total"] / args.samples
        shown = "  ".join(f"{k} {v:.3f}" for k, v in medians.items())
        print(f"  {name:>8}: {shown}  ({per:.1f} µs a trial in all)")


if __name__ == "__main__":
    main()
