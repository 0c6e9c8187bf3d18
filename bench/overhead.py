"""Overhead: assay's own cost per trial, with a target that answers at once.

For each N (1,000, 10,000, 100,000 by default) a spec folder is generated (N samples, one
``async def answer(text): return text`` callable, an ``exact`` scorer, a gate of 1.0) and
run through the library (``load_spec`` + ``run_spec``) in a fresh process per run. Each
run reports:

- wall seconds of ``load_spec`` + ``run_spec`` (spec, plan, trials, evidence, scores,
  gate, reports) and trials/s from it; also the whole process's wall (interpreter start
  and imports included);
- CPU seconds (user + sys) of the whole process;
- peak RSS of the whole process (``os.wait4`` rusage of that one child);
- bytes on disk per trial: apparent (sum of file sizes) and allocated (blocks), and
  files per trial.

Figures are medians over ``--runs`` runs (``--big-runs`` at N >= 100,000).

    python bench/overhead.py [--quick] [--sizes 1000,10000,100000] [--runs 3] [--json F]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from _common import (
    Row,
    checked,
    disk_usage,
    make_spec,
    median,
    remove,
    run_child,
    scratch_dir,
    settle,
    show_rows,
)

SIZES = (1_000, 10_000, 100_000)
TARGET_RATE = 3_000.0  # trials/s at N = 10,000 (issue 2)
TARGET_RSS_MB = 150.0  # peak RSS at N = 100,000 (issues 2 and 6)
TARGET_FLAT = 0.20  # trials/s at 100,000 within 20 % of that at 1,000 (issue 6)


def run_once(spec: Path, out: Path, concurrency: int) -> dict[str, Any]:
    """One run of *spec* into *out* in a fresh process; figures of that run."""
    result = checked(
        run_child(["run", str(spec), str(out), "--max-concurrency", str(concurrency)]),
        f"run of {spec}",
    )
    report = result.report
    usage = disk_usage(out)
    trials = int(report["trials"])
    return {
        "trials": trials,
        "gate": report["gate"],
        "import_s": report["import_s"],
        "total_s": report["total_s"],
        "process_wall_s": result.wall,
        "process_cpu_s": result.cpu,
        "process_user_s": result.user,
        "process_sys_s": result.sys,
        "inproc_cpu_s": report["cpu_s"],
        "rate": trials / report["total_s"],
        "process_rate": trials / result.wall,
        "cpu_ms_per_trial": 1000.0 * report["cpu_s"] / trials,
        "maxrss_mb": result.maxrss_mb,
        "files": usage.files,
        "apparent_per_trial": usage.apparent / trials,
        "allocated_per_trial": usage.allocated / trials,
        "files_per_trial": usage.files / trials,
    }


def measure_size(
    samples: int, runs: int, base: Path, concurrency: int = 16, keep: bool = False
) -> dict[str, Any]:
    """Median figures of *runs* runs at N = *samples*; with *keep*, the last run stays."""
    folder = base / f"spec-{samples}"
    spec = make_spec(folder, samples)
    per_run: list[dict[str, Any]] = []
    kept: Path | None = None
    for k in range(runs):
        out = base / f"run-{samples}-{k}"
        settle()
        per_run.append(run_once(spec, out, concurrency))
        if keep and k == runs - 1:
            kept = out
        else:
            remove(out)
    figures = {key: median(r[key] for r in per_run) for key in per_run[0] if key != "gate"}
    figures["gate"] = per_run[0]["gate"]
    figures["runs"] = runs
    figures["rates"] = [round(r["rate"], 1) for r in per_run]
    figures["kept_run"] = str(kept) if kept else None
    figures["spec"] = str(spec)
    return figures


def rows_for(results: dict[int, dict[str, Any]]) -> list[Row]:
    """The table rows for the measured sizes, with PASS/FAIL where a target applies."""
    rows: list[Row] = []
    for n, f in sorted(results.items()):
        name = f"overhead N={n:,}" + (f" ({f['runs']} run)" if f["runs"] == 1 else "")
        rate_row = Row(name, "trials/s (load+run)", f["rate"], "/s", extra=f)
        if n == 10_000:
            rate_row.target = f">= {TARGET_RATE:,.0f}/s"
            rate_row.ok = f["rate"] >= TARGET_RATE
        if n >= 100_000 and 1_000 in results:
            base_rate = results[1_000]["rate"]
            rate_row.target = f"within {TARGET_FLAT:.0%} of N=1,000 ({base_rate:,.0f}/s)"
            rate_row.ok = f["rate"] >= (1 - TARGET_FLAT) * base_rate
        rows.append(rate_row)
        rows.append(Row(name, "trials/s (whole process)", f["process_rate"], "/s"))
        rows.append(Row(name, "CPU per trial (load+run)", f["cpu_ms_per_trial"], "ms"))
        rows.append(
            Row(
                name,
                "process wall / CPU (user+sys)",
                f["process_wall_s"],
                "s",
                note=f"cpu {f['process_cpu_s']:.2f} s "
                f"(user {f['process_user_s']:.2f}, sys {f['process_sys_s']:.2f})",
            )
        )
        rss = Row(name, "peak RSS", f["maxrss_mb"], "MB")
        if n >= 100_000:
            rss.target = f"<= {TARGET_RSS_MB:.0f} MB"
            rss.ok = f["maxrss_mb"] <= TARGET_RSS_MB
        rows.append(rss)
        rows.append(
            Row(
                name,
                "disk per trial, apparent",
                f["apparent_per_trial"],
                "B",
                note=f"{f['files_per_trial']:.2f} files/trial",
            )
        )
        rows.append(Row(name, "disk per trial, allocated", f["allocated_per_trial"], "B"))
    if 1_000 in results and 100_000 in results:
        small, big = results[1_000], results[100_000]
        growth = (big["maxrss_mb"] - small["maxrss_mb"]) * 1024 * 1024 / (100_000 - 1_000)
        rows.append(Row("overhead 1k->100k", "RSS growth per trial", growth, "B"))
    return rows


def measure(
    sizes: tuple[int, ...] = SIZES,
    runs: int = 3,
    big_runs: int = 1,
    base: Path | None = None,
    concurrency: int = 16,
    keep_largest: bool = False,
    progress: bool = True,
) -> tuple[list[Row], dict[int, dict[str, Any]]]:
    """Measure every size; returns the table rows and the per-size figures."""
    own = base is None
    folder = scratch_dir() if base is None else base
    results: dict[int, dict[str, Any]] = {}
    try:
        for n in sizes:
            count = big_runs if n >= 100_000 else runs
            keep = keep_largest and n == max(sizes)
            results[n] = measure_size(n, count, folder, concurrency, keep)
            if progress:
                f = results[n]
                print(
                    f"  overhead N={n:,}: {f['rate']:,.0f} trials/s (runs {f['rates']}), "
                    f"cpu {f['cpu_ms_per_trial']:.3f} ms/trial, rss {f['maxrss_mb']:.1f} MB",
                    flush=True,
                )
    finally:
        if own and not keep_largest:
            remove(folder)
    return rows_for(results), results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--runs", type=int, default=3, help="runs per size below 100,000")
    parser.add_argument("--big-runs", type=int, default=1, help="runs at 100,000 and above")
    parser.add_argument("--max-concurrency", type=int, default=16)
    parser.add_argument("--tmp", help="folder for spec and run folders (default: temp dir)")
    parser.add_argument("--quick", action="store_true", help="same as the defaults (3 / 1 runs)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    base = scratch_dir(args.tmp)
    try:
        rows, _ = measure(sizes, args.runs, args.big_runs, base, args.max_concurrency)
    finally:
        remove(base)
    show_rows(rows, args.json)


if __name__ == "__main__":
    main()
