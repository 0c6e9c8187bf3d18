"""Persistent program targets: trials/s of a YAML ``script:`` target that answers at once.

The same Python program is evaluated three ways (N samples, an ``exact`` scorer, a gate
of 1.0, 16 trials in flight), each run in a fresh process through the library
(``_child.py run``: ``load_spec`` + ``run_spec``, evidence, scores and reports included):

- **per call**: the program as a plain ``script:`` target, one process per trial (its
  floor is this machine's process start);
- **jsonl, 1 worker** and **jsonl, 2 workers**: the same answers from a program that
  keeps running (``protocol: jsonl``), one request line per trial;
- **callable**: the same answers from an in-process ``async def`` (no program at all):
  the harness's own ceiling on this machine, which a program target cannot pass.

A fourth figure isolates the protocol from the rest of the harness: ``PersistentTarget``
called directly (no plan, evidence or scoring), 64 calls in flight, in this process.

    python bench/persistent_target.py [--quick] [--samples 20000] [--runs 3] [--json F]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from _common import (
    ANSWER_PY,
    Row,
    checked,
    median,
    remove,
    run_child,
    scratch_dir,
    settle,
    show_rows,
)

TARGET_RATE = 5_000.0  # trials/s, protocol: jsonl, a program answering at once (issue 19)
PER_CALL_SAMPLES = 300  # a process per trial runs about 80/s: enough to measure it

PER_CALL_PROGRAM = """import json, sys
sample = json.load(sys.stdin)
print(json.dumps(sample["input"]))
"""

JSONL_PROGRAM = """import json, sys
for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.write(json.dumps({"id": request["id"], "output": request["input"]}) + "\\n")
    sys.stdout.flush()
"""

SPEC = """evaluation: persistent-bench
dataset: data.jsonl
targets:
  - id: program
{extra}scorers:
  - id: exact
    type: exact
gate:
  minimum: 1.0
"""

SCRIPT = "    script: program.py\n"
MODES: dict[str, tuple[str, str]] = {
    "per call": (PER_CALL_PROGRAM, SCRIPT),
    "jsonl, 1 worker": (JSONL_PROGRAM, SCRIPT + "    protocol: jsonl\n"),
    "jsonl, 2 workers": (JSONL_PROGRAM, SCRIPT + "    protocol: jsonl\n    workers: 2\n"),
    "callable": (ANSWER_PY, "    callable: program:answer\n"),
}


def make_spec(folder: Path, samples: int, program: str, extra: str) -> Path:
    """A spec folder: *samples* samples, *program* as ``program.py``, the target's *extra*."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "data.jsonl", "w", encoding="utf-8") as handle:
        for i in range(samples):
            line = {"id": f"s{i:07d}", "input": f"question {i}", "expected": f"question {i}"}
            handle.write(json.dumps(line, separators=(",", ":")) + "\n")
    (folder / "program.py").write_text(program, encoding="utf-8")
    spec = folder / "eval.yaml"
    spec.write_text(SPEC.format(extra=extra), encoding="utf-8")
    return spec


def run_once(spec: Path, mode: str, out: Path) -> dict[str, Any]:
    """One run of *spec* into *out* in a fresh process (``_child.py run``); its report."""
    settle()
    report: dict[str, Any] = checked(run_child(["run", str(spec), str(out)]), mode).report
    remove(out)
    if report["gate"] != "passed":
        raise RuntimeError(f"{mode}: gate {report['gate']}, expected passed")
    return report


def measure_runs(samples: int, runs: int, base: Path) -> dict[str, dict[str, Any]]:
    """Median trials/s (load + run) and CPU per trial of each mode; the modes take turns
    run by run, so a change in the machine's load falls on all of them alike."""
    specs = {}
    for mode, (program, extra) in MODES.items():
        folder = base / mode.replace(" ", "").replace(",", "-")
        n = PER_CALL_SAMPLES if mode == "per call" else samples
        specs[mode] = make_spec(folder, n, program, extra)
    reports: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    for _ in range(runs):
        for mode, spec in specs.items():
            reports[mode].append(run_once(spec, mode, base / "run"))
    return {
        mode: {
            "samples": per_run[0]["trials"],
            "runs": runs,
            "rate": median(r["trials"] / r["total_s"] for r in per_run),
            "cpu_us_per_trial": median(1e6 * r["cpu_s"] / r["trials"] for r in per_run),
            "rates": [round(r["trials"] / r["total_s"], 1) for r in per_run],
        }
        for mode, per_run in reports.items()
    }


def measure_calls(calls: int, in_flight: int, base: Path) -> float:
    """Calls/s of ``PersistentTarget.call`` alone (no harness around it)."""
    import anyio
    from assay.dataset import Sample
    from assay.spec import load_spec
    from assay.target import build_target

    program, extra = MODES["jsonl, 1 worker"]
    loaded = load_spec(make_spec(base / "calls", 1, program, extra))
    target: Any = build_target(loaded.spec.targets[0], loaded.root)
    samples = [Sample(id=f"s{i}", input=f"question {i}") for i in range(calls)]

    async def main() -> float:
        await target.call(samples[0])  # start the process outside the timing
        queue = iter(samples)

        async def caller() -> None:
            for sample in queue:
                await target.call(sample)

        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(in_flight):
                group.start_soon(caller)
        rate = calls / (time.perf_counter() - started)
        await target.aclose()
        return rate

    return anyio.run(main)


def rows_for(results: dict[str, dict[str, Any]], call_rate: float) -> list[Row]:
    """The table: trials/s and CPU per trial of each mode, the jsonl ones gated (and
    set beside the callable's ceiling), and the target alone."""
    rows = []
    ceiling = results.get("callable", {}).get("rate")
    for mode, figures in results.items():
        name = f"{mode}, N={figures['samples']:,}"
        rate = Row(name, "trials/s (load+run)", figures["rate"], "/s", extra=figures)
        if mode.startswith("jsonl"):
            rate.target = f">= {TARGET_RATE:,.0f}/s"
            rate.ok = figures["rate"] >= TARGET_RATE
            if ceiling:
                rate.note = f"{figures['rate'] / ceiling:.0%} of the callable's"
        rows.append(rate)
        rows.append(Row(name, "CPU per trial (load+run)", figures["cpu_us_per_trial"], "µs"))
    rows.append(Row("jsonl, the target alone", "calls/s (64 in flight)", call_rate, "/s"))
    return rows


def measure(runs: int, samples: int, base: Path) -> list[Row]:
    """Every mode's rows (``run_all.py`` calls this too)."""
    results = measure_runs(samples, runs, base)
    for mode, figures in results.items():
        print(f"  {mode}: {figures['rate']:,.0f} trials/s", flush=True)
    return rows_for(results, measure_calls(samples, 64, base))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one run per mode")
    parser.add_argument("--samples", type=int, default=20_000, help="N for the jsonl modes")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tmp", help="folder for spec and run folders (default: temp dir)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    base = scratch_dir(args.tmp)
    try:
        rows = measure(1 if args.quick else args.runs, args.samples, base)
    finally:
        remove(base)
    show_rows(rows, args.json)


if __name__ == "__main__":
    main()
