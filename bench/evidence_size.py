"""Evidence size and the cost of reading it (issue 15, item 7), before and after a change.

Makes one run of the trivial Python task (``bench/tasks/assay_overhead.py``: generate()
then match(), the model answering with the question) at N samples with this code and,
with ``--before SRC``, one with the code in SRC (a ``src`` folder of an older commit,
e.g. ``git worktree add /tmp/before d64fbfa``). Then, alternately on each side's own
run and with each side's own code, in fresh processes: ``verify_run`` (``--runs``
times) and ``rescore_run`` (once), giving wall, CPU of that process and peak RSS, and
``read_trial`` of the last trial (median of 7). Prints, per side, the bytes on disk per
sample of every file of the run folder and the figures, with the 1-minute load average
next to each timing (the machine is shared: read the CPU seconds, not only the wall).

    python bench/evidence_size.py [--samples 100000] [--runs 3] [--before SRC] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import remove, scratch_dir

BENCH = Path(__file__).resolve().parent
READ_TRIAL = """
import json, sys, time
from pathlib import Path
from assay.evidence import read_trial
run = Path(sys.argv[1])
try:  # a compacted run's bundles.jsonl is bundles.jsonl.zst (code before it: plain only)
    from assay.evidence._framed import open_evidence
except ImportError:
    open_evidence = lambda path: open(path, "rb")
with open_evidence(run / "bundles.jsonl") as handle:
    for last in handle:
        pass
tid = json.loads(last)["trial"]["trial_id"]
times = []
for _ in range(7):
    start = time.perf_counter()
    found = read_trial(run, tid)
    times.append(time.perf_counter() - start)
assert found is not None and found[1] is not None
print(json.dumps({"ms": 1000 * sorted(times)[3]}))
"""


def _child(src: Path, argv: list[str]) -> tuple[dict[str, Any], dict[str, float]]:
    """Run ``python *argv*`` with *src* on PYTHONPATH; its JSON report and its rusage."""
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{BENCH}"}
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *argv], env=env, stdout=subprocess.PIPE, cwd=BENCH)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise RuntimeError(f"{argv} failed ({status})")
    figures = {
        "wall_s": time.perf_counter() - start,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,
        "load": load,
    }
    return json.loads(out.splitlines()[-1]), figures


def make_run(src: Path, base: Path, samples: int) -> Path:
    task = f"{BENCH / 'tasks' / 'assay_overhead.py'}@overhead"
    report, _ = _child(src, [str(BENCH / "_child.py"), "task", task, str(base), str(samples), "16"])
    if report["status"] != "success":
        raise RuntimeError(f"the run did not succeed: {report}")
    return Path(report["run"])


def sizes(run: Path) -> dict[str, int]:
    """Bytes of each file of the run folder (packs and their indexes summed)."""
    found: dict[str, int] = {}
    for path in sorted(run.rglob("*")):
        if path.is_file():
            name = path.name
            if path.parent.name == "artifacts" and name.startswith("pack-"):
                name = "artifacts/pack-*" + path.suffix
            elif path.parent != run:
                name = "artifacts/<loose files>"
            found[name] = found.get(name, 0) + path.stat().st_size
    return found


def measure(src: Path, run: Path, runs: int) -> dict[str, Any]:
    figures: dict[str, Any] = {"verify": [], "rescore": []}
    for _ in range(runs):
        report, usage = _child(src, [str(BENCH / "_child.py"), "verify", str(run)])
        if not report["ok"]:
            raise RuntimeError(f"{run} does not verify: {report['problems']}")
        figures["verify"].append({**usage, "trials": report["trials"]})
    _, usage = _child(src, [str(BENCH / "_child.py"), "rescore", str(run)])
    figures["rescore"].append(usage)
    report, _ = _child(src, ["-c", READ_TRIAL, str(run)])
    figures["read_trial_ms"] = report["ms"]
    return figures


def _median(items: list[dict[str, float]], key: str) -> float:
    return statistics.median(item[key] for item in items)


def _timing_cells(kind: str, samples: int) -> dict[str, Any]:
    """Row label -> how to render one side's figures of *kind* (verify or rescore)."""

    def rate(f: dict[str, Any]) -> str:
        return f"{samples / _median(f[kind], 'wall_s'):,.0f}/s"

    def cpu(f: dict[str, Any]) -> str:
        return f"{_median(f[kind], 'cpu_s'):.2f} s"

    def rss(f: dict[str, Any]) -> str:
        return f"{_median(f[kind], 'rss_mb'):.0f} MB"

    def load(f: dict[str, Any]) -> str:
        return ", ".join(f"{item['load']:.1f}" for item in f[kind])

    return {
        f"{kind}: trials/s (wall, median)": rate,
        f"{kind}: CPU s of the process (median)": cpu,
        f"{kind}: peak RSS (median)": rss,
        f"{kind}: load average (1 min) at each start": load,
    }


def table(sides: dict[str, tuple[Path, dict[str, Any]]], samples: int) -> list[str]:
    names = list(sides)
    lines = ["| figure | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    files = sorted({f for _, (run, _) in sides.items() for f in sizes(run)})
    per = {n: sizes(run) for n, (run, _) in sides.items()}
    for name in files:
        cells = [f"{per[n].get(name, 0) / samples:,.0f} B" for n in names]
        lines.append(f"| bytes/sample: {name} | " + " | ".join(cells) + " |")
    totals = [f"**{sum(per[n].values()) / samples:,.0f} B**" for n in names]
    lines.append("| **bytes/sample: whole run folder** | " + " | ".join(totals) + " |")
    for kind in ("verify", "rescore"):
        for label, cell in _timing_cells(kind, samples).items():
            lines.append(f"| {label} | " + " | ".join(cell(sides[n][1]) for n in names) + " |")
    cells = [f"{sides[n][1]['read_trial_ms']:.2f} ms" for n in names]
    lines.append("| one trial by id (`read_trial`, last) | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3, help="verify runs per side")
    parser.add_argument("--before", type=Path, help="the src folder of the code before")
    parser.add_argument("--tmp", help="folder for the generated runs (default: temp dir)")
    args = parser.parse_args()
    here = BENCH.parent / "src"
    base = scratch_dir(args.tmp)
    try:
        srcs = {"after (this code)": here}
        if args.before:
            srcs = {"before": args.before.resolve(), **srcs}
        runs = {n: make_run(s, base / n.split()[0], args.samples) for n, s in srcs.items()}
        figures: dict[str, dict[str, Any]] = {n: {"verify": [], "rescore": []} for n in srcs}
        for _ in range(args.runs):  # alternate the sides, so the host's noise hits both
            for name, src in srcs.items():
                one = measure(src, runs[name], 1)
                figures[name]["verify"] += one["verify"]
                figures[name]["rescore"] += one["rescore"]
                figures[name]["read_trial_ms"] = one["read_trial_ms"]
        print("\n".join(table({n: (runs[n], figures[n]) for n in srcs}, args.samples)))
    finally:
        remove(base)


if __name__ == "__main__":
    main()
