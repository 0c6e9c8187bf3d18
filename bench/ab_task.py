"""The trivial task (issue 19, item 1) in fresh processes, variants taking turns: CPU µs
per trial (``getrusage`` of the ``assay.eval`` call), the figure a loaded machine moves
least, and samples/s.

    python bench/ab_task.py --variant main=/work/main/src --variant this=src \\
        [--variant nogc=src+no-gc] [--samples 100000] [--rounds 3]

A variant is ``NAME=SRC[+PATCH,...]``: the ``src`` folder put first on ``PYTHONPATH``
(so old code can be timed against new in the same minutes) and ``bench/_patches.py``
patches applied in the child. Each round runs every variant once, in the order given;
the medians are printed at the end with the load average.
"""

from __future__ import annotations

import os
import statistics
from pathlib import Path

from _common import BENCH, checked, remove, run_child, scratch_dir, turns_parser

TASK = f"{BENCH / 'tasks' / 'assay_overhead.py'}@overhead"


def once(src: Path, patches: str, samples: int, base: Path) -> tuple[float, float, float]:
    """One run: (CPU µs per trial, samples/s, peak RSS MB)."""
    out = base / "log"
    argv = ["task", TASK, str(out), str(samples), "16"]
    if patches:
        argv += ["--patch", patches]
    env = {"PYTHONPATH": os.pathsep.join([str(src.resolve()), os.environ.get("PYTHONPATH", "")])}
    result = checked(run_child(argv, env), f"trivial task at {src}")
    remove(out)
    report = result.report
    assert report["status"] == "success", report
    return (
        1e6 * report["cpu_s"] / samples,
        samples / report["total_s"],
        result.maxrss_mb,
    )


def main() -> None:
    parser = turns_parser(__doc__, 100_000, 3, "NAME=SRC[+PATCHES]")
    args = parser.parse_args()
    variants = []
    for text in args.variant:
        name, _, where = text.partition("=")
        src, _, patches = where.partition("+")
        variants.append((name, Path(src), patches))
    base = scratch_dir()
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name, _, _ in variants}
    try:
        for round_ in range(1, args.rounds + 1):
            for name, src, patches in variants:
                figures = once(src, patches, args.samples, base)
                results[name].append(figures)
                load = os.getloadavg()[0]
                print(
                    f"round {round_} {name}: {figures[0]:.1f} µs CPU/trial, "
                    f"{figures[1]:,.0f} samples/s, {figures[2]:.1f} MB, load {load:.1f}",
                    flush=True,
                )
    finally:
        remove(base)
    print_medians(results, args.samples, args.rounds)


def print_medians(
    results: dict[str, list[tuple[float, float, float]]], samples: int, rounds: int
) -> None:
    """Each variant's median CPU µs a trial, samples/s and peak RSS over its rounds."""
    print(f"\nN = {samples:,}, {rounds} rounds, medians:")
    for name, runs in results.items():
        cpu, rate, rss = (statistics.median(r[i] for r in runs) for i in range(3))
        print(f"  {name}: {cpu:.1f} µs CPU/trial, {rate:,.0f} samples/s, peak RSS {rss:.1f} MB")


if __name__ == "__main__":
    main()
