"""Target calls on a Dask cluster (``assay run --cluster``) against the same run in-process.

It starts ``dask scheduler`` and ``dask worker --nworkers 2 --nthreads 2`` on 127.0.0.1,
as a user would, then times ``assay run`` of two specs, in-process and on the cluster:

- **instant**: the overhead workload's target, which answers at once (N samples). What
  the cluster costs: a Dask round trip per chunk of up to 64 calls, plus the replay.
- **sleepy**: a sync callable that sleeps 50 ms (N // 5 samples), the shape of a slow
  program or endpoint. In-process, sync callables share one pool of 40 threads; on
  the cluster each worker process has its own.
- **tail**: the same, but 1 call in 64 (by a hash of its input) sleeps 3 s: a model's
  slow tail (issue 18, item 3: the cluster run within 1.3× of the in-process one, no
  chunk of calls waiting for its slowest).

This machine has two cores, so the cluster here shows what it costs and that it
spreads blocking calls; more cores are what it is for, and they are not here.
Reported only: there is no target to pass.

    python bench/cluster.py [--samples 10000] [--repeat 3] [--only tail] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from _common import (
    Row,
    assay_command,
    make_spec,
    median,
    remove,
    run_process,
    scratch_dir,
    settle,
    show_rows,
)

SLEEPY_PY = '''"""The sleepy workload's target: a blocking call of 50 ms."""
import time


def answer(text):
    time.sleep(0.05)
    return text
'''


TAIL_PY = '''"""The tail workload's target: 50 ms, and 3 s for 1 call in 64."""
import time
import zlib


def answer(text):
    time.sleep(3.0 if zlib.crc32(str(text).encode()) % 64 == 0 else 0.05)
    return text
'''


def start_cluster(folder: Path) -> tuple[str, list[subprocess.Popen[bytes]]]:
    """Start a scheduler and two worker processes; their address and processes."""
    loopback = ["--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"]
    address_file = folder / "scheduler.json"

    def dask(*args: str) -> subprocess.Popen[bytes]:
        log = open(folder / f"{args[0]}.log", "ab")  # noqa: SIM115 - the child keeps it
        return subprocess.Popen(
            [sys.executable, "-m", "dask", *args],
            stdout=log,
            stderr=log,
            cwd=folder,
            start_new_session=True,
        )

    procs = [dask("scheduler", *loopback, "--port", "0", "--scheduler-file", str(address_file))]
    deadline = time.monotonic() + 60
    while '"address"' not in (address_file.read_text() if address_file.exists() else ""):
        if time.monotonic() > deadline:
            raise SystemExit(f"the scheduler did not start: see {folder / 'scheduler.log'}")
        time.sleep(0.05)
    address = json.loads(address_file.read_text())["address"]
    procs.append(dask("worker", address, *loopback, "--nworkers", "2", "--nthreads", "2"))
    from distributed import Client

    with Client(address, timeout=30) as client:
        client.wait_for_workers(2, timeout=60)
    return address, procs


def stop_cluster(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in reversed(procs):
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def sleepy_spec(folder: Path, samples: int, source: str = SLEEPY_PY) -> Path:
    """The overhead spec, with the 50 ms target (or *source*'s) instead of the instant one."""
    spec = make_spec(folder, samples)
    (folder / "bench_answer.py").write_text(source, encoding="utf-8")
    return spec


def timed_run(spec: Path, out: Path, jobs: int, cluster: str | None) -> float:
    """Wall seconds of one ``assay run`` (its exit is the gate's: 0 here)."""
    argv = [*assay_command(), "run", str(spec), "-o", str(out), "-j", str(jobs)]
    if cluster:
        argv += ["--cluster", cluster]
    remove(out)
    settle()
    result = run_process(argv, dict(os.environ))
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {result.returncode}: {result.stderr[-500:]}")
    return result.wall


def measure(samples: int, repeat: int, only: str | None = None) -> list[Row]:
    scratch = scratch_dir()
    rows: list[Row] = []
    try:
        address, procs = start_cluster(scratch)
        try:
            slow = samples // 5
            workloads = [
                ("instant", make_spec(scratch / "instant", samples), samples, (16, 256)),
                ("sleepy 50 ms", sleepy_spec(scratch / "sleepy", slow), slow, (256,)),
                ("tail", sleepy_spec(scratch / "tail", slow, TAIL_PY), slow, (256,)),
            ]
            workloads = [w for w in workloads if only is None or w[0].startswith(only)]
            for name, spec, n, job_counts in workloads:
                for jobs in job_counts:
                    for where, cluster in (("in-process", None), ("cluster", address)):
                        walls = [
                            timed_run(spec, scratch / "run", jobs, cluster) for _ in range(repeat)
                        ]
                        rows.append(
                            Row(
                                f"cluster: {name}",
                                f"{where}, N={n:,}, -j {jobs}",
                                n / median(walls),
                                "samples/s",
                                note=f"median of {repeat}",
                                extra={"walls": walls},
                            )
                        )
        finally:
            stop_cluster(procs)
    finally:
        remove(scratch)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", help="the workloads whose name starts with this")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    show_rows(measure(args.samples, args.repeat, args.only), args.json)


if __name__ == "__main__":
    main()
