"""Overhead, side by side: the same Python task in assay and in Inspect AI.

The task is ``generate()`` then ``match()`` over N questions, with a model that answers
at once with the question (assay: the built-in mock model with a function,
``bench/tasks/assay_overhead.py``; Inspect: ``mockllm`` with custom outputs that carry
their own token usage, ``bench/tasks/inspect_overhead.py``). Each run is a fresh process:
assay through ``assay.eval`` (the path ``assay run file.py`` takes), Inspect through
``inspect_ai.eval`` in its own venv. Per run: samples/s over the eval call (imports
excluded on both sides), CPU seconds of that call, the whole process's wall and CPU, peak
RSS, and bytes on disk per sample (assay: the whole run folder, evidence included;
Inspect: its log file).

Inspect spends 13–19 ms of CPU per sample here, so N = 100,000 (about half an hour of
CPU) runs for assay only, unless ``--inspect-max`` says otherwise.

    python bench/sidebyside.py [--sizes 1000,10000,100000] [--runs 3] [--inspect-max 10000]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from _common import (
    BENCH,
    ChildResult,
    Row,
    checked,
    disk_usage,
    inspect_env,
    inspect_python,
    median,
    remove,
    run_child,
    run_process,
    scratch_dir,
    settle,
    show_rows,
)

SIZES = (1_000, 10_000, 100_000)
CONNECTIONS = 16  # samples in flight, both harnesses
TARGET_RATIO = 40.0  # assay samples/s >= 40 x Inspect's at N = 10,000
TARGET_FLAT = 0.20  # assay samples/s at 100,000 within 20 % of that at 1,000
TARGET_RSS_MB = 150.0  # assay peak RSS at 100,000
ASSAY_TASK = BENCH / "tasks" / "assay_overhead.py"
INSPECT_TASK = BENCH / "tasks" / "inspect_overhead.py"
INSPECT_CHILD = BENCH / "_inspect_child.py"


def _figures(result: ChildResult, samples: int, disk_bytes: int) -> dict[str, Any]:
    report = result.report
    return {
        "samples": samples,
        "total_s": report["total_s"],
        "rate": samples / report["total_s"],
        "cpu_s": report["cpu_s"],
        "cpu_ms_per_sample": 1000.0 * report["cpu_s"] / samples,
        "process_wall_s": result.wall,
        "process_cpu_s": result.cpu,
        "maxrss_mb": result.maxrss_mb,
        "disk_per_sample": disk_bytes / samples,
    }


def assay_once(samples: int, base: Path, keep: bool = False) -> dict[str, Any]:
    """One assay run of the overhead task in a fresh process (*keep*: its folder stays)."""
    log_dir = base / f"assay-{samples}-{len(list(base.glob(f'assay-{samples}-*')))}"
    settle()
    result = checked(
        run_child(["task", f"{ASSAY_TASK}@overhead", str(log_dir), str(samples), str(CONNECTIONS)]),
        f"assay overhead task at N={samples}",
    )
    if result.report["status"] != "success" or result.report["samples"] != samples:
        raise RuntimeError(f"assay run did not succeed: {result.report}")
    figures = _figures(result, samples, disk_usage(log_dir).apparent)
    figures["run"] = result.report["run"]
    if not keep:
        remove(log_dir)
    return figures


def inspect_once(samples: int, base: Path) -> dict[str, Any]:
    """One Inspect AI run of the same task in a fresh process of its own venv."""
    python = inspect_python()
    assert python is not None
    # a folder per run: the earlier runs' folders are removed, the last one's log kept
    log_dir = base / f"inspect-{samples}-{len(list(base.glob(f'inspect-{samples}-*')))}"
    settle()
    argv = [
        str(python),
        str(INSPECT_CHILD),
        "eval",
        f"{INSPECT_TASK}@overhead",
        str(log_dir),
        str(samples),
        str(CONNECTIONS),
    ]
    result = checked(run_process(argv, inspect_env(log_dir)), f"Inspect at N={samples}")
    report = result.report
    if report["status"] != "success" or report["samples"] != samples:
        raise RuntimeError(f"Inspect run did not succeed: {report}")
    figures = _figures(result, samples, int(report["log_bytes"]))
    figures["log"] = report["log"]
    return figures


def _median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    figures = {k: median(r[k] for r in runs) for k in runs[0] if k not in ("log", "run")}
    figures["rates"] = [round(r["rate"], 1) for r in runs]
    figures["runs"] = len(runs)
    return figures


def measure(
    sizes: tuple[int, ...] = SIZES,
    runs: int = 3,
    big_runs: int = 1,
    inspect_runs: int | None = None,
    inspect_max: int = 10_000,
    inspect_big_runs: int | None = None,
    base: Path | None = None,
    keep_log: int | None = 10_000,
    progress: bool = True,
) -> tuple[list[Row], dict[str, Any]]:
    """Measure both harnesses at every size; rows and the per-size figures.

    ``inspect_big_runs``: Inspect runs at N >= 10,000 (it takes minutes a run here).
    ``keep_log``: the size whose last Inspect log is kept (the evidence workload reads
    it); its path is returned in the figures as ``inspect_log``.
    """
    folder = scratch_dir() if base is None else base
    has_inspect = inspect_python() is not None
    assay: dict[int, dict[str, Any]] = {}
    inspect: dict[int, dict[str, Any]] = {}
    kept: str | None = None
    kept_run: str | None = None
    for n in sizes:
        count = big_runs if n >= 100_000 else runs
        keep = [n == keep_log and k == count - 1 for k in range(count)]
        measured_a = [assay_once(n, folder, keep=last) for last in keep]
        if n == keep_log:
            kept_run = measured_a[-1]["run"]
        assay[n] = _median_of(measured_a)
        if has_inspect and n <= inspect_max:
            i_count = inspect_runs if inspect_runs is not None else count
            if n >= 10_000 and inspect_big_runs is not None:
                i_count = inspect_big_runs
            measured = [inspect_once(n, folder) for _ in range(i_count)]
            for run in measured[:-1] if n == keep_log else measured:
                remove(Path(run["log"]).parent)
            if n == keep_log:
                kept = measured[-1]["log"]
            inspect[n] = _median_of(measured)
        if progress:
            a, i = assay[n], inspect.get(n)
            other = f", Inspect {i['rate']:,.0f}/s (runs {i['rates']})" if i else ""
            print(
                f"  overhead (Python task) N={n:,}: assay {a['rate']:,.0f}/s "
                f"(runs {a['rates']}){other}",
                flush=True,
            )
    if base is None and kept is None and kept_run is None:
        remove(folder)
    return rows_for(assay, inspect, has_inspect), {
        "assay": assay,
        "inspect": inspect,
        "inspect_log": kept,
        "assay_run": kept_run,
    }


def rows_for(
    assay: dict[int, dict[str, Any]], inspect: dict[int, dict[str, Any]], has_inspect: bool
) -> list[Row]:
    rows: list[Row] = []
    for n, a in sorted(assay.items()):
        i = inspect.get(n)
        name = f"overhead, Python task N={n:,}"
        runs = f"assay {a['runs']} run(s)" + (f", Inspect {i['runs']}" if i else "")
        if not i:
            runs += ", Inspect not run" + ("" if has_inspect else " (no bench/.venv-inspect)")
        rate = Row(
            name,
            "samples/s (eval call)",
            a["rate"],
            "/s",
            inspect=i["rate"] if i else None,
            note=runs,
            extra={"assay": a, "inspect": i},
        )
        if n == 10_000:
            rate.gate_ratio(TARGET_RATIO)
        if n >= 100_000 and 1_000 in assay:
            small = assay[1_000]["rate"]
            rate.target = f"within {TARGET_FLAT:.0%} of N=1,000 ({small:,.0f}/s)"
            rate.ok = a["rate"] >= (1 - TARGET_FLAT) * small
        rows.append(rate)
        rows.append(
            Row(
                name,
                "CPU per sample (eval call)",
                a["cpu_ms_per_sample"],
                "ms",
                inspect=i["cpu_ms_per_sample"] if i else None,
                note="less sensitive to the shared cores than wall time",
            )
        )
        note = f"assay cpu {a['process_cpu_s']:.2f} s"
        if i:
            note += f"; Inspect wall {i['process_wall_s']:.1f} s, cpu {i['process_cpu_s']:.1f} s"
        rows.append(
            Row(
                name,
                "whole process wall",
                a["process_wall_s"],
                "s",
                inspect=i["process_wall_s"] if i else None,
                note=note,
            )
        )
        rss = Row(name, "peak RSS", a["maxrss_mb"], "MB", inspect=i["maxrss_mb"] if i else None)
        if n >= 100_000:
            rss.target = f"<= {TARGET_RSS_MB:.0f} MB"
            rss.ok = a["maxrss_mb"] <= TARGET_RSS_MB
        rows.append(rss)
        rows.append(
            Row(
                name,
                "bytes on disk per sample",
                a["disk_per_sample"],
                "B",
                inspect=i["disk_per_sample"] if i else None,
                note="assay: run folder, evidence included; Inspect: its .eval log",
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--runs", type=int, default=3, help="runs per size below 100,000")
    parser.add_argument("--big-runs", type=int, default=1, help="runs at 100,000")
    parser.add_argument("--inspect-runs", type=int, help="Inspect runs per size (default: same)")
    parser.add_argument("--inspect-max", type=int, default=10_000, help="largest N for Inspect")
    parser.add_argument("--tmp", help="folder for runs and logs (default: temp dir)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    base = scratch_dir(args.tmp)
    try:
        rows, _ = measure(
            sizes, args.runs, args.big_runs, args.inspect_runs, args.inspect_max, base, None
        )
    finally:
        remove(base)
    show_rows(rows, args.json)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
