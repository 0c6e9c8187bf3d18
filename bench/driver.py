"""The driver's ceiling on a cluster (issue 18, item 6): its CPU per trial and its memory.

``assay run --cluster`` keeps every trial's life in the driver (plan, attempts, evidence,
scores, gate) and sends only the target calls to the workers, so the driver's own CPU per
trial bounds what any cluster can do, and its memory must not grow with the plan. This
starts ``dask scheduler`` and ``dask worker --nworkers 2 --nthreads 2`` on 127.0.0.1 (as
``cluster.py`` does) and runs the overhead workload's YAML spec (a callable that answers at
once, an ``exact`` scorer) of N samples on it, each run a fresh ``assay run`` process:

- **driver CPU per trial**: user + sys of that one process (``os.wait4``), over N; the
  workers' and the scheduler's CPU are not in it. Target: at most 0.25 ms.
- **peak RSS** of the driver (``ru_maxrss``). Target: at most 150 MB at 1,000,000 trials.
- **RSS growth per trial** between two sizes: what the driver still holds per trial.

``--local`` runs the same sizes in-process too (no cluster), for the same figures.
``--before SRC`` runs an older ``src`` folder first at each size (fresh processes, taking
turns), for a before/after comparison under the same load.

    python bench/driver.py [--trials 100000,300000] [--trials 1000000] [-j 256] [--json F]
"""

from __future__ import annotations

import argparse
import itertools
import os
from pathlib import Path

from _common import (
    REPO,
    Row,
    assay_command,
    make_spec,
    remove,
    run_process,
    scratch_dir,
    settle,
    show_rows,
)
from cluster import start_cluster, stop_cluster

TARGET_CPU_MS = 0.25  # driver CPU per trial on a cluster
TARGET_RSS_MB = 150.0  # driver peak RSS at 1,000,000 trials
TARGET_AT = 1_000_000


def driver_run(
    spec: Path, out: Path, jobs: int, cluster: str | None, src: Path
) -> dict[str, float]:
    """One ``assay run`` of *spec* with assay from *src*: its wall, CPU and peak RSS."""
    argv = [*assay_command(), "run", str(spec), "-o", str(out), "-j", str(jobs)]
    if cluster:
        argv += ["--cluster", cluster]
    remove(out)
    settle()
    env = {**os.environ, "PYTHONPATH": str(src)}
    result = run_process(argv, env)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {result.returncode}: {result.stderr[-500:]}")
    remove(out)
    return {"wall": result.wall, "cpu": result.cpu, "rss": result.maxrss_mb}


def measure(sizes: list[int], jobs: int, local: bool, before: Path | None) -> list[Row]:
    scratch = scratch_dir()
    sources = [("before", before)] if before else []
    sources.append(("after" if before else "", REPO / "src"))
    runs: dict[tuple[str, str], list[tuple[int, dict[str, float]]]] = {}
    try:
        address, procs = start_cluster(scratch)
        try:
            for size in sizes:
                spec = make_spec(scratch / f"spec-{size}", size)
                for where, cluster in [("cluster", address)] + ([("local", None)] if local else []):
                    for label, src in sources:
                        figures = driver_run(spec, scratch / "run", jobs, cluster, src)
                        runs.setdefault((where, label), []).append((size, figures))
                        print(where, label, size, figures, flush=True)
                remove(scratch / f"spec-{size}")
        finally:
            stop_cluster(procs)
    finally:
        remove(scratch)
    return [row for (where, label), done in runs.items() for row in _rows(where, label, done)]


def _rows(where: str, label: str, done: list[tuple[int, dict[str, float]]]) -> list[Row]:
    rows = []
    name = f"driver, {where}" + (f" ({label})" if label else "")
    for size, figures in done:
        gated = where == "cluster"
        cpu_ms = 1000 * figures["cpu"] / size
        rows.append(
            Row(
                name,
                f"CPU per trial, N={size:,}",
                cpu_ms,
                "ms",
                target=f"<= {TARGET_CPU_MS} ms" if gated else "",
                ok=cpu_ms <= TARGET_CPU_MS if gated else None,
                note=f"{size / figures['wall']:,.0f} trials/s, wall {figures['wall']:.0f} s",
            )
        )
        at_target = gated and size >= TARGET_AT
        rows.append(
            Row(
                name,
                f"peak RSS, N={size:,}",
                figures["rss"],
                "MB",
                target=f"<= {TARGET_RSS_MB:.0f} MB" if at_target else "",
                ok=figures["rss"] <= TARGET_RSS_MB if at_target else None,
            )
        )
    for (small, a), (big, b) in itertools.pairwise(done):
        growth = 1e6 * (b["rss"] - a["rss"]) / (big - small)  # MB → bytes, per trial
        rows.append(Row(name, f"RSS growth per trial, {small:,} → {big:,}", growth, "B"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--trials",
        default="100000,300000",
        help="sizes, comma-separated (1000000 for the issue's figure)",
    )
    parser.add_argument("-j", "--jobs", type=int, default=256)
    parser.add_argument("--local", action="store_true", help="also run each size in-process")
    parser.add_argument("--before", type=Path, help="an older src folder, run first at each size")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sizes = [int(size) for size in args.trials.split(",")]
    show_rows(measure(sizes, args.jobs, args.local, args.before), args.json)


if __name__ == "__main__":
    main()
