"""Where the start and the end of a big trivial run go, phase by phase (issue 19).

    python bench/start_end.py --variant base=/tmp/base/src --variant this=src \\
        [--samples 100000] [--rounds 3]

Each round runs ``bench/tasks/assay_overhead.py`` in a fresh process per variant (the
variants take turns) and times, in wall and CPU seconds (``os.times``, the whole
process), the functions the start and the end are made of: the ``assay.eval`` call
from its first line to the model's first call (*start*), from the model's last answer
to its return (*end*), and inside them the task load, the dataset's freezing, the
run's setup, the reports, the indexes, the digests and the seal. A phase wraps the
function where its caller looks it up; one missing in a variant is shown as ``-``.
The medians are printed at the end with the load average.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from _common import child_figures, source_variants, turns_parser

BENCH = Path(__file__).resolve().parent
TASK = f"{BENCH / 'tasks' / 'assay_overhead.py'}@overhead"

# (module, attribute) wrapped; the phase is named by the attribute (dotted: a method).
PHASES = [
    ("assay.pipeline._eval", "load_tasks"),
    ("assay.pipeline._eval", "prepare_task"),
    ("assay.pipeline._task_prepare", "freeze"),
    ("assay.pipeline._execute", "_Run.__init__"),
    ("assay.evidence._rundir", "RunWriter.write_plan"),
    ("assay.evidence._rundir", "RunWriter.plan_written"),
    ("assay.pipeline._execute", "freeze_survivors"),
    ("assay.pipeline._conclude", "regression_of"),
    ("assay.pipeline._conclude", "build_report"),
    ("assay.pipeline._conclude", "render_reports"),
    ("assay.pipeline._conclude", "write_indexes"),
    ("assay.pipeline._seal", "write_pack_index"),
    ("assay.pipeline._seal", "write_bundle_index"),
    ("assay.pipeline._conclude", "sealed_digests"),
    ("assay.pipeline._run", "_Run.seal"),
    ("assay.evidence._rundir", "compact_run"),
    ("assay.evidence._rundir", "_sync_tree"),
    ("assay.evidence._rundir", "write_atomic"),
    ("assay.evidence._rundir", "RunWriter.close"),
    ("assay.pipeline._execute", "conclude"),
    ("assay.pipeline._execute", "close_parts"),
]

CHILD = """
import functools, json, os, sys, time
from importlib import import_module
from pathlib import Path

def now():
    t = os.times()
    return t.user + t.system, time.perf_counter()

samples, out, task = int(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
phases = json.loads(sys.argv[4])
c0, w0 = now()
import assay
from assay.model import MockAPI
c1, w1 = now()
marks = {"import": (c1 - c0, w1 - w0)}

def timed(name, fn):
    is_async = hasattr(fn, "__code__") and fn.__code__.co_flags & 0x80
    def add(begin):
        c, w = now()
        old = marks.get(name, (0.0, 0.0))
        marks[name] = (old[0] + c - begin[0], old[1] + w - begin[1])
    if is_async:
        @functools.wraps(fn)
        async def wrapper(*a, **k):
            begin = now()
            try:
                return await fn(*a, **k)
            finally:
                add(begin)
    else:
        @functools.wraps(fn)
        def wrapper(*a, **k):
            begin = now()
            try:
                return fn(*a, **k)
            finally:
                add(begin)
    return wrapper

for module, attr in phases:
    try:
        holder = import_module(module)
        *owner, leaf = attr.split(".")
        for part in owner:
            holder = getattr(holder, part)
        setattr(holder, leaf, timed(attr, getattr(holder, leaf)))
    except (ImportError, AttributeError):
        pass

generate = MockAPI.generate
async def first_last(self, *args, **kwargs):
    if "first" not in marks:
        marks["first"] = now()
    try:
        return await generate(self, *args, **kwargs)
    finally:
        marks["last"] = now()
MockAPI.generate = first_last

begin = now()
assay.eval(task, task_args={"samples": samples}, log_dir=out, max_samples=16, max_connections=16)
end = now()
first, last = marks.pop("first"), marks.pop("last")
marks["start"] = (first[0] - begin[0], first[1] - begin[1])
marks["end"] = (end[0] - last[0], end[1] - last[1])
marks["total"] = (end[0] - begin[0], end[1] - begin[1])
print(json.dumps(marks))
"""


def once(src: Path, samples: int, base: Path) -> dict[str, list[float]]:
    """One fresh process of the variant at *src*: ``{phase: [cpu, wall]}``."""
    out = base / "log"
    env = {**os.environ, "PYTHONPATH": str(src.resolve())}
    argv = [sys.executable, "-c", CHILD, str(samples), str(out), TASK, json.dumps(PHASES)]
    return child_figures(argv, env, out)


def main() -> None:
    parser = turns_parser(__doc__, 100_000, 3)
    args = parser.parse_args()
    variants = source_variants(args.variant)
    rows: dict[str, list[dict[str, list[float]]]] = {name: [] for name, _ in variants}
    print(f"load average at the start: {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="assay-edges-") as base:
        for round_ in range(1, args.rounds + 1):
            for name, src in variants:
                figures = once(src, args.samples, Path(base))
                rows[name].append(figures)
                shown = "  ".join(f"{k} {figures[k][1]:.3f}" for k in ("start", "end", "total"))
                print(f"round {round_} {name:>8} (wall s): {shown}", flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    names = ["import", *(attr for _, attr in PHASES), "start", "end", "total"]
    print(f"medians at N = {args.samples:,}, CPU / wall seconds:")
    print(f"{'phase':>22}" + "".join(f"{name:>20}" for name, _ in variants))
    for phase in names:
        cells = []
        for name, _ in variants:
            got = [r[phase] for r in rows[name] if phase in r]
            if not got:
                cells.append(f"{'-':>20}")
                continue
            cpu = statistics.median(g[0] for g in got)
            wall = statistics.median(g[1] for g in got)
            cells.append(f"{cpu:>10.3f} /{wall:>7.3f}")
        print(f"{phase:>22}" + "".join(cells))


if __name__ == "__main__":
    main()
