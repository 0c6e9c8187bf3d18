"""Run every bench workload and print one table: assay's figure, Inspect AI's figure on
the same workload in the same run, the ratio, and PASS/FAIL against each target.

    python bench/run_all.py            # 3 runs of everything (Inspect: 3 at N = 10,000 too)
    python bench/run_all.py --quick    # 1 run of everything: a few minutes (Inspect: +2 min)
    python bench/run_all.py --setup    # first make bench/.venv-inspect (Inspect AI's own venv)
    python bench/run_all.py --markdown --json results.json

Inspect AI runs only if ``bench/.venv-inspect`` exists (``bench/setup_inspect.sh``);
without it, its column is empty and the ratio targets fail. The 100,000-trial run made
by the overhead workload is reused for the evidence workload, and the 10,000-sample
runs of the side-by-side workload for the log-reading comparison. Exit status: 0 if
every gated figure passed, 1 otherwise. Issue 19's targets (``issue19.py``) are read off
the same rows and printed last, PASS or FAIL each.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import evidence
import issue19
import micro
import network
import overhead
import persistent_target
import sidebyside
import startup
from _common import (
    BENCH,
    REPO,
    Row,
    fmt,
    inspect_python,
    print_table,
    remove,
    save_rows,
    scratch_dir,
)


def describe() -> str:
    """Machine, Python, load and the assay source revision being measured."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"], capture_output=True, text=True, cwd=REPO
        ).stdout.strip()
    except OSError:
        head, dirty = "?", ""
    src = f"{head}{' + uncommitted src changes' if dirty else ''}, {build()}"
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"assay src {src}; Python {platform.python_version()}; {os.cpu_count()} CPUs, "
        f"load {load}; {platform.system()} {platform.release()}; "
        f"{time.strftime('%Y-%m-%d %H:%M')}"
    )


def build() -> str:
    """Which build of assay the workloads import (``PYTHONPATH`` chooses): the compiled
    one (``scripts/compiled.py``: put its folder first on ``PYTHONPATH``) or pure Python."""
    import importlib.util

    spec = importlib.util.find_spec("assay.evidence._log")
    origin = spec.origin if spec is not None else None
    return "compiled build" if origin and origin.endswith(".so") else "pure Python"


def setup_inspect() -> None:
    """Make bench/.venv-inspect with Inspect AI (its own venv, never assay's)."""
    subprocess.run(["bash", str(BENCH / "setup_inspect.sh")], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs where runs are long")
    parser.add_argument("--setup", action="store_true", help="install Inspect AI's venv first")
    parser.add_argument("--no-micro", action="store_true", help="skip the micro-benchmarks")
    parser.add_argument("--no-network", action="store_true", help="skip the network workload")
    parser.add_argument("--tmp", help="folder for spec and run folders (default: temp dir)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--json", type=Path, help="also write every row as JSON here")
    args = parser.parse_args()
    if args.setup and inspect_python() is None:
        setup_inspect()
    runs, big_runs, evidence_runs = (1, 1, 1) if args.quick else (3, 3, 3)
    inspect_big = 1 if args.quick else 3
    started = time.perf_counter()
    print(describe(), flush=True)
    if inspect_python() is None:
        print("  Inspect AI: no bench/.venv-inspect (run with --setup): assay only", flush=True)
    rows: list[Row] = []
    errors: list[str] = []
    base = scratch_dir(args.tmp)

    def attempt(workload: str, measure: Callable[[], list[Row]]) -> None:
        # one workload failing (src changes under the bench) must not hide the others
        try:
            rows.extend(measure())
        except Exception as exc:
            errors.append(f"{workload}: {type(exc).__name__}: {exc}")
            print(f"  {workload} FAILED: {exc}", flush=True)
            rows.append(Row(workload, "workload failed", 0, "", target="runs", ok=False))

    try:
        attempt("startup", lambda: startup.measure(repeat=10, inspect_repeat=5))
        results: dict[int, dict[str, Any]] = {}
        side: dict[str, Any] = {}

        def over() -> list[Row]:
            over_rows, measured = overhead.measure(
                runs=runs, big_runs=big_runs, base=base, keep_largest=True
            )
            results.update(measured)
            return over_rows

        def python_task() -> list[Row]:
            side_rows, measured = sidebyside.measure(
                runs=runs, big_runs=big_runs, inspect_big_runs=inspect_big, base=base
            )
            side.update(measured)
            return side_rows

        attempt("overhead, Python task", python_task)
        attempt("overhead, YAML callable", over)
        if not args.no_network:
            attempt(
                "network",
                lambda: network.measure(
                    runs=1 if args.quick else 3,
                    samples=5_000,
                    inspect_samples=500 if args.quick else 1_000,
                    base=base,
                ),
            )
        attempt(
            "persistent program target",
            lambda: persistent_target.measure(runs=runs, samples=10_000, base=base),
        )
        kept = results[max(results)]["kept_run"] if results else None
        if kept:
            attempt("evidence", lambda: evidence.measure(run=Path(kept), runs=evidence_runs))
            remove(Path(kept))
        if side.get("assay_run") or side.get("inspect_log"):
            assay_run = Path(side["assay_run"]) if side.get("assay_run") else None
            attempt(
                "evidence vs Inspect log",
                lambda: evidence.compare_rows(assay_run, side.get("inspect_log")),
            )
        if not args.no_micro:
            ops, batches = (2000, 3) if args.quick else (5000, 5)
            attempt("micro", lambda: micro.measure(ops=ops, batches=batches, base=base / "micro"))
    finally:
        remove(base)
    print(f"\n{describe()}; bench took {time.perf_counter() - started:.0f} s\n")
    rows.extend(issue19.rows_for(rows))
    print_table(rows, markdown=args.markdown)
    print("\nissue 19 targets:")
    for row in (r for r in rows if r.workload == issue19.WORKLOAD and r.ok is not None):
        print(f"  {row.verdict}  {row.figure}: {fmt(row.value, row.unit)} (target {row.target})")
    if args.json:
        save_rows(rows, args.json)
    gated = [r for r in rows if r.ok is not None]
    failed = [r for r in gated if not r.ok]
    print(f"\n{len(gated) - len(failed)} of {len(gated)} targets met")
    print(
        "ratio: how many times better assay is (a higher rate, or a lower time, memory "
        "or size). The cores are shared with other work: compare ratios from one run."
    )
    for error in errors:
        print(f"error: {error}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
