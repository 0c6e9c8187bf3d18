"""A Python task end to end: samples/s, CPU and peak RSS as the dataset grows.

    python bench/python_task.py                       # jsonl and memory, N = 1k, 10k, 100k
    python bench/python_task.py --dataset jsonl --sizes 10000,100000
    python bench/python_task.py --tracemalloc 10000,100000   # where the memory goes

Columns: samples/s is N over the wall time of ``assay.eval`` (what a user waits for);
per CPU s is N over the CPU time of that call, which a machine shared with other work
does not inflate as much; CPU s is the whole child's (interpreter start included); RSS
MB is the child's peak, built MB its peak once the task and dataset were built (before
``assay.eval``), so RSS − built is what the run itself added.

The task is ``generate()`` + ``match()`` (metrics ``accuracy`` and ``stderr``) against
the built-in mock model, which answers at once, so what is measured is assay itself:
task freeze, plan, trials, evidence, scores, metrics, gate and reports. Each N runs in
a fresh child process; its peak RSS and CPU time come from ``os.wait4`` (that one
child's rusage). Two datasets:

- ``jsonl``: ``json_dataset("data.jsonl")``, a file written by the parent before the
  child starts (so its writing is not measured);
- ``memory``: a ``MemoryDataset`` of ``Sample`` objects the child builds itself (the
  user's own memory; what matters is what assay adds on top).

``--tracemalloc A,B`` runs the jsonl workload at two sizes under ``tracemalloc`` and
prints the allocation sites whose peak-time size grew most from A to B (a snapshot is
taken as the run finishes, just before reports are rendered).

Standalone on purpose: it uses no other bench module.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

SIZES = (1_000, 10_000, 100_000)
TASK_NAME = "bench_python_task"


def _records(count: int) -> Iterator[dict[str, object]]:
    """Half the targets match the mock's default answer ("... from the mock model").

    A generator: the parent must stay small, because a child's ``ru_maxrss`` starts at
    the size of the process it was forked from.
    """
    for i in range(count):
        yield {
            "id": f"s{i:07d}",
            "input": f"question {i}: what does the mock model say?",
            "target": "mock model" if i % 2 == 0 else "something else",
            "metadata": {"difficulty": i % 5},
        }


def write_jsonl(path: Path, count: int) -> None:
    """The jsonl dataset of *count* samples."""
    with open(path, "w", encoding="utf-8") as handle:
        for record in _records(count):
            handle.write(json.dumps(record, separators=(",", ":")) + "\n")


# ---------------------------------------------------------------- child side


def _task(kind: str, count: int, data: Path) -> object:
    from assay import Sample, Task, accuracy, generate, match, stderr
    from assay.dataset import MemoryDataset, json_dataset

    if kind == "jsonl":
        dataset: object = json_dataset(data, name="bench")
    else:
        samples = [
            Sample(
                input=r["input"],
                target=r["target"],
                id=str(r["id"]),
                metadata=dict(r["metadata"]),  # type: ignore[call-overload]
            )
            for r in _records(count)
        ]
        dataset = MemoryDataset(samples, "bench")
    return Task(
        dataset=dataset,
        solver=[generate()],
        scorer=[match()],
        metrics=[accuracy(), stderr()],
        name=TASK_NAME,
    )


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(kind: str, count: int, data: Path, out: Path, trace: bool) -> None:
    """Run the task once and print one JSON line of timings."""
    if trace:
        import tracemalloc

        tracemalloc.start(12)
    t0, c0 = time.perf_counter(), _cpu()
    import assay

    task = _task(kind, count, data)
    t1, c1 = time.perf_counter(), _cpu()
    built_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    if trace:
        _snapshot_before_reports(out.parent / f"snap-{count}.bin")
    (result,) = assay.eval(task, model="mock/bench", log_dir=out, max_samples=16)
    t2, c2 = time.perf_counter(), _cpu()
    if result.status != "success":
        raise SystemExit(f"run failed: {result.error}")
    accuracy = result.task_metrics["mock/bench"]["match"]["accuracy"]
    report = {
        "samples": count,
        "dataset": kind,
        "load_s": t1 - t0,
        "run_s": t2 - t1,
        "cpu_s": c2 - c0,
        "run_cpu_s": c2 - c1,  # the eval alone: what a busy machine does not inflate
        "built_rss_mb": built_mb,  # peak so far: interpreter, assay, the task and its data
        "accuracy": accuracy,
    }
    print(json.dumps(report))


def _snapshot_before_reports(path: Path) -> None:
    """Take a tracemalloc snapshot when the run starts rendering reports (its peak)."""
    import tracemalloc

    from assay.pipeline import _run

    original = _run.build_report

    def build_report(*args: object, **kwargs: object) -> object:
        tracemalloc.take_snapshot().dump(str(path))
        return original(*args, **kwargs)  # type: ignore[arg-type]

    _run.build_report = build_report  # type: ignore[assignment]


# ---------------------------------------------------------------- parent side


def run_child(kind: str, count: int, scratch: Path, trace: bool = False) -> dict[str, object]:
    """One fresh process: its JSON report plus wall, CPU and peak RSS from ``wait4``."""
    data = scratch / f"data-{count}.jsonl"
    if kind == "jsonl" and not data.exists():
        write_jsonl(data, count)
    out = scratch / f"runs-{kind}-{count}"
    os.sync()  # the previous run's write-back is not charged to this one
    args = [sys.executable, __file__, "--child", kind, str(count), str(data), str(out)]
    if trace:
        args.append("--trace")
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    started = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    stdout, stderr = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{kind} N={count} failed:\n{stderr.decode()[-3000:]}")
    report: dict[str, object] = json.loads(stdout.decode().strip().splitlines()[-1])
    report["wall_s"] = wall
    report["process_cpu_s"] = usage.ru_utime + usage.ru_stime
    report["peak_rss_mb"] = usage.ru_maxrss / 1024.0
    report["samples_per_s"] = count / float(report["run_s"])  # type: ignore[arg-type]
    report["samples_per_cpu_s"] = count / float(report["run_cpu_s"])  # type: ignore[arg-type]
    shutil.rmtree(out, ignore_errors=True)
    return report


def measure(kinds: list[str], sizes: list[int], scratch: Path) -> list[dict[str, object]]:
    rows = []
    print(
        f"{'dataset':8} {'N':>8} {'samples/s':>10} {'per CPU s':>10} {'run s':>7}"
        f" {'CPU s':>7} {'RSS MB':>8} {'built MB':>9}"
    )
    for kind in kinds:
        for count in sizes:
            row = run_child(kind, count, scratch)
            rows.append(row)
            print(
                f"{kind:8} {count:>8,} {row['samples_per_s']:>10,.0f}"
                f" {row['samples_per_cpu_s']:>10,.0f} {row['run_s']:>7.2f}"
                f" {row['process_cpu_s']:>7.2f} {row['peak_rss_mb']:>8.1f}"
                f" {row['built_rss_mb']:>9.1f}",
                flush=True,
            )
    return rows


def trace_diff(small: int, large: int, scratch: Path, top: int = 15) -> None:
    """Where memory grows with N: allocation sites, large snapshot minus small."""
    import tracemalloc

    for count in (small, large):
        run_child("jsonl", count, scratch, trace=True)
    before = tracemalloc.Snapshot.load(str(scratch / f"snap-{small}.bin"))
    after = tracemalloc.Snapshot.load(str(scratch / f"snap-{large}.bin"))
    after = after.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    before = before.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    print(
        f"traced at N={small:,}: {sum(s.size for s in before.statistics('filename')) / 1e6:.1f}"
        f" MB; at N={large:,}: {sum(s.size for s in after.statistics('filename')) / 1e6:.1f} MB"
    )
    for stat in after.compare_to(before, "traceback")[:top]:
        # innermost first: where the memory was allocated, then who asked for it
        frames = [f"{f.filename.split('/assay/')[-1]}:{f.lineno}" for f in stat.traceback]
        ours = [
            f for f, raw in zip(frames, stat.traceback, strict=True) if "/assay/" in raw.filename
        ]
        inner = (ours or frames)[::-1][:3]
        print(f"{stat.size_diff / 1e6:+8.2f} MB {stat.count_diff:+9,} blocks  {' <- '.join(inner)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", nargs=4, metavar=("KIND", "N", "DATA", "OUT"))
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dataset", choices=("jsonl", "memory", "both"), default="both")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--tracemalloc", metavar="A,B")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args()
    if args.child:
        kind, count, data, out = args.child
        child(kind, int(count), Path(data), Path(out), args.trace)
        return
    scratch = Path(tempfile.mkdtemp(prefix="assay-bench-pytask-"))
    try:
        if args.tracemalloc:
            small, large = (int(x) for x in args.tracemalloc.split(","))
            trace_diff(small, large, scratch)
            return
        kinds = ["jsonl", "memory"] if args.dataset == "both" else [args.dataset]
        rows = measure(kinds, [int(x) for x in args.sizes.split(",")], scratch)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    # Run as a script, the bench folder is sys.path[0]; drop it so no bench module can
    # shadow something assay imports.
    if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
        del sys.path[0]
    main()
