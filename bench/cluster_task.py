"""A Python task on a Dask cluster (``assay run file.py@task --cluster``): the driver's CPU.

It starts ``dask scheduler`` and ``dask worker --nworkers 2 --nthreads 2`` on 127.0.0.1
(as ``cluster.py`` does) and runs ``examples/arithmetic`` (chain of thought, a mock
model, two scorers; one epoch) in-process and on the cluster, alternating, each run a
fresh process. The driver's CPU (user + system, from ``wait4``) at N samples and at 100
gives its CPU per trial without the start-up: on the cluster the driver no longer runs
the solver and scorers, but it sends each attempt and replays what the worker recorded.
Reported only: there is no target to pass.

    python bench/cluster_task.py [--samples 2000] [--repeat 3] [--json F]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from _common import REPO, Row, assay_command, median, remove, run_process, scratch_dir, show_rows
from cluster import start_cluster, stop_cluster

TASK = REPO / "examples" / "arithmetic" / "tasks.py"
SMALL = 100


def driver_cpu(samples: int, out: Path, cluster: str | None) -> float:
    """CPU seconds of one ``assay run`` of the task over *samples* samples."""
    argv = [*assay_command(), "run", f"{TASK}@arithmetic", "-T", f"count={samples}"]
    argv += ["-T", "epochs=1", "-j", "64", "-o", str(out)]
    if cluster:
        argv += ["--cluster", cluster]
    remove(out)
    result = run_process(argv, dict(os.environ))
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {result.returncode}: {result.stderr[-500:]}")
    return result.cpu


def measure(samples: int, repeat: int) -> list[Row]:
    scratch = scratch_dir()
    cpu: dict[tuple[str, int], list[float]] = {}
    try:
        address, procs = start_cluster(scratch)
        try:
            for _ in range(repeat):  # A/B, alternating: the load drifts between runs
                for where, cluster in (("in-process", None), ("cluster", address)):
                    for n in (SMALL, samples):
                        used = driver_cpu(n, scratch / "run", cluster)
                        cpu.setdefault((where, n), []).append(used)
        finally:
            stop_cluster(procs)
    finally:
        remove(scratch)
    rows = []
    for where in ("in-process", "cluster"):
        big, small = median(cpu[(where, samples)]), median(cpu[(where, SMALL)])
        rows.append(
            Row(
                "cluster task: driver CPU per trial",
                f"{where}, N={samples:,} minus N={SMALL}",
                (big - small) / (samples - SMALL) * 1000,
                "ms",
                note=f"median of {repeat}; load {os.getloadavg()[0]:.1f}",
                extra={"cpu": {str(n): cpu[(where, n)] for n in (SMALL, samples)}},
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    show_rows(measure(args.samples, args.repeat), args.json)


if __name__ == "__main__":
    main()
