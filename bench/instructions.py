"""Instructions per trial of the trivial task (issue 19, item 1), variants side by side:
a figure the load of a shared machine does not move, unlike CPU time.

    python bench/instructions.py --variant main=/work/main/src --variant this=src \\
        [--samples 300,1300]

Each variant's ``assay.eval`` of ``bench/tasks/assay_overhead.py`` runs under valgrind's
callgrind at the two sizes; ``(Ir(large) - Ir(small)) / (large - small)`` is the trial's
count, start-up and the run's fixed costs cancelled. What would make two runs of the same
code differ is taken out: flushes and report look-aheads timed by the wall clock
(patch ``no-timed-flush``),
string hashing (``PYTHONHASHSEED=0``), and the report template's compiled cache, which
is kept per source path (a run of a few trials first fills it). Two counts of the same
code then differ by at most about 0.02 % (bench/README.md, "Fourth pass").
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

from _common import BENCH, CHILD, remove, scratch_dir

TASK = f"{BENCH / 'tasks' / 'assay_overhead.py'}@overhead"


def instructions(src: Path, samples: int, base: Path) -> int:
    """Instructions of one child process running the task at *samples* under callgrind."""
    env = {
        **os.environ,
        "PYTHONPATH": str(src.resolve()),
        "PYTHONHASHSEED": "0",
    }
    out = base / f"run-{samples}"
    argv = [sys.executable, str(CHILD), "task", TASK, str(out), str(samples), "16"]
    argv += ["--patch", "no-timed-flush"]
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    remove(out)
    found = re.search(r"Collected : (\d+)", done.stderr)
    assert found is not None, done.stderr[-2000:]
    return int(found.group(1))


def warm(src: Path, base: Path) -> None:
    """A few trials outside valgrind: the report template's compiled cache, kept per
    source path, is filled before anything is counted."""
    env = {**os.environ, "PYTHONPATH": str(src.resolve())}
    out = base / "warm"
    subprocess.run(
        [sys.executable, str(CHILD), "task", TASK, str(out), "5", "4"],
        env=env,
        capture_output=True,
        check=True,
    )
    remove(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", action="append", required=True, help="NAME=SRC")
    parser.add_argument("--samples", default="300,1300", help="SMALL,LARGE")
    args = parser.parse_args()
    small, large = (int(n) for n in args.samples.split(","))
    base = scratch_dir()
    try:
        for text in args.variant:
            name, _, where = text.partition("=")
            src = Path(where)
            warm(src, base)
            counts = [instructions(src, n, base) for n in (small, large)]
            per_trial = (counts[1] - counts[0]) / (large - small)
            print(f"{name}: {per_trial / 1000:,.1f}k instructions a trial ({counts})", flush=True)
    finally:
        remove(base)


if __name__ == "__main__":
    main()
