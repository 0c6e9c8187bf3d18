"""Run every bench workload and print one table: workload, figure, value, target, PASS/FAIL.

    python bench/run_all.py            # 5 runs at N <= 10,000, 3 at 100,000; evidence x3
    python bench/run_all.py --quick    # 3 runs at N <= 10,000, 1 at 100,000; evidence x1
    python bench/run_all.py --markdown --json results.json

The 100,000-trial run made by the overhead workload is reused for the evidence workload,
so a run is generated once. Exit status: 0 if every gated figure passed, 1 otherwise.
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
import micro
import overhead
import startup
from _common import REPO, Row, print_table, remove, save_rows, scratch_dir


def describe() -> str:
    """Machine, Python and the assay source revision being measured."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"], capture_output=True, text=True, cwd=REPO
        ).stdout.strip()
    except OSError:
        head, dirty = "?", ""
    src = f"{head}{' + uncommitted src changes' if dirty else ''}"
    return (
        f"assay src {src}; Python {platform.python_version()}; {os.cpu_count()} CPUs; "
        f"{platform.system()} {platform.release()}; {time.strftime('%Y-%m-%d %H:%M')}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (about 2 minutes)")
    parser.add_argument("--no-micro", action="store_true", help="skip the micro-benchmarks")
    parser.add_argument("--tmp", help="folder for spec and run folders (default: temp dir)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--json", type=Path, help="also write every row as JSON here")
    args = parser.parse_args()
    runs, big_runs, evidence_runs = (3, 1, 1) if args.quick else (5, 3, 3)
    started = time.perf_counter()
    print(describe(), flush=True)
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
        attempt("startup", lambda: startup.measure(repeat=10))
        results: dict[int, dict[str, Any]] = {}

        def over() -> list[Row]:
            over_rows, measured = overhead.measure(
                runs=runs, big_runs=big_runs, base=base, keep_largest=True
            )
            results.update(measured)
            return over_rows

        attempt("overhead", over)
        kept = results[max(results)]["kept_run"] if results else None
        if kept:
            attempt("evidence", lambda: evidence.measure(run=Path(kept), runs=evidence_runs))
            remove(Path(kept))
        if not args.no_micro:
            ops, batches = (2000, 3) if args.quick else (5000, 5)
            attempt("micro", lambda: micro.measure(ops=ops, batches=batches, base=base / "micro"))
    finally:
        remove(base)
    print(f"\n{describe()}; bench took {time.perf_counter() - started:.0f} s\n")
    print_table(rows, markdown=args.markdown)
    if args.json:
        save_rows(rows, args.json)
    gated = [r for r in rows if r.ok is not None]
    failed = [r for r in gated if not r.ok]
    print(f"\n{len(gated) - len(failed)} of {len(gated)} targets met")
    for error in errors:
        print(f"error: {error}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
