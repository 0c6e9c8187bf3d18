"""Profile the hot path: the 10,000-trial overhead run under cProfile and py-spy.

- cProfile (in this process): the top functions by cumulative and by self time, with µs
  per trial, and self time grouped by kind (file creation, buffered writes, hashing,
  JSON, asyncio/anyio, assay's own Python code, the rest). cProfile slows Python-level
  calls more than C calls, so its shares overstate pure-Python code.
- py-spy (if installed: ``pip install py-spy``): samples a fresh ``_child.py run`` process
  with ``--idle`` (wall-clock, syscalls included); the top functions by self and by
  inclusive samples;
- with ``--evidence``: ``verify_run`` and ``rescore_run`` on that run under cProfile.

    python bench/hotpath.py [--samples 10000] [--top 25] [--no-py-spy] [--evidence]
                            [--markdown] [--task]

With ``--task``, the profiled run is the Python task path instead (``assay.eval`` of
``bench/tasks/assay_overhead.py``, the workload run side by side with Inspect AI).
``--table`` prints only bench/README.md's "where the time goes" tables, in Markdown:
self time by kind and the top functions by self time, with the command, the assay
commit, N and the load average above them (``--task --table`` is the README's).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _common import CHILD, make_spec, remove, scratch_dir, settle

CATEGORIES = (
    (
        "file create/close/rename/stat/mkdir (syscalls)",
        (
            "io.open",
            "posix.open",
            "posix.close",
            "posix.replace",
            "posix.stat",
            "posix.mkdir",
            "posix.lstat",
            "'__exit__' of '_io._IOBase'",
        ),
    ),
    ("pathlib (building artifact paths)", ("pathlib.py",)),
    ("writes to open files", ("'write' of '_io.", "'flush' of '_io.", "posix.write")),
    ("fsync", ("posix.fsync",)),
    ("sha256", ("_hashlib.", "'hexdigest'")),
    ("JSON encode/decode (msgspec)", ("msgspec.",)),
    ("asyncio / anyio", ("asyncio/", "anyio/", "_asyncio.", "select.epoll", "_contextvars")),
    ("contextlib", ("contextlib.py",)),
    ("jinja2 / yaml / report rendering", ("jinja2/", "yaml/", "markupsafe/")),
    ("assay: evidence (event log, artifacts, bundles, seal)", ("assay/evidence/",)),
    ("assay: scoring and metrics", ("assay/score/", "assay/scorer/", "pipeline/_judge.py")),
    ("assay: solver, model, target", ("assay/solver/", "assay/model/", "assay/target/")),
    ("assay: run loop, trial, pipeline", ("assay/run/", "assay/pipeline/", "assay/plan/")),
    ("assay: other", ("assay/",)),
)


def _label(func: tuple[str, int, str]) -> str:
    filename, line, name = func
    if filename == "~":
        return name
    return f"{_short(filename)}:{line}({name})"


def _short(filename: str) -> str:
    """A path from its package on: ``assay/...``, ``anyio/...``, ``asyncio/...``."""
    for marker in ("/site-packages/", "/src/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return re.sub(r"^.*/lib/python3\.\d+/", "", filename)


def _category(label: str) -> str:
    for category, needles in CATEGORIES:
        if any(needle in label for needle in needles):
            return category
    return "other (Python builtins, gc, dict/list ops)"


def cprofile_run(spec: Path, out: Path) -> tuple[pstats.Stats, float, int]:
    from assay.pipeline import RunOptions, run_spec
    from assay.spec import load_spec

    profiler = cProfile.Profile()
    settle()
    start = time.perf_counter()
    profiler.enable()
    outcome = run_spec(load_spec(spec), RunOptions(output=out))
    profiler.disable()
    wall = time.perf_counter() - start
    return pstats.Stats(profiler), wall, outcome.report.planned


def cprofile_task(samples: int, log_dir: Path) -> tuple[pstats.Stats, float, int]:
    """The Python task path (``assay.eval`` of bench/tasks/assay_overhead.py) profiled."""
    import assay

    task = f"{Path(__file__).resolve().parent / 'tasks' / 'assay_overhead.py'}@overhead"
    profiler = cProfile.Profile()
    settle()
    start = time.perf_counter()
    profiler.enable()
    results = assay.eval(task, task_args={"samples": samples}, log_dir=log_dir, max_samples=16)
    profiler.disable()
    wall = time.perf_counter() - start
    report = results[0].report
    return pstats.Stats(profiler), wall, report.planned if report else 0


def evidence_tables(run: Path, trials: int, top: int, markdown: bool) -> str:
    """``verify_run`` and ``rescore_run`` on *run* under cProfile: top by cumulative."""
    from assay.evidence import verify_run
    from assay.pipeline import rescore_run

    lines = []
    for name, function in (("verify_run", verify_run), ("rescore_run", rescore_run)):
        profiler = cProfile.Profile()
        start = time.perf_counter()
        profiler.enable()
        function(run)
        profiler.disable()
        wall = time.perf_counter() - start
        entries = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
        rows = [(_label(f), c, t, cu) for f, (_cc, c, t, cu, _) in entries.items()]
        lines.append(
            f"\n{name} under cProfile ({trials:,} trials, {wall:.2f} s), top {top} by cumulative:\n"
        )
        ranked = sorted(rows, key=lambda r: r[3], reverse=True)[:top]
        lines.extend(
            _table(
                ("calls", "self s", "cum s", "cum µs/trial", "function"),
                [
                    (f"{c:,}", f"{t:.3f}", f"{cu:.3f}", f"{1e6 * cu / trials:.1f}", label)
                    for label, c, t, cu in ranked
                ],
                markdown,
            )
        )
    return "\n".join(lines)


def cprofile_tables(stats: pstats.Stats, trials: int, top: int, markdown: bool) -> str:
    entries = stats.stats  # type: ignore[attr-defined]
    rows = []
    for func, (_cc, calls, tottime, cumtime, _callers) in entries.items():
        rows.append((_label(func), calls, tottime, cumtime))
    lines: list[str] = []
    total = sum(r[2] for r in rows)
    for title, key in (("cumulative", 3), ("self (tottime)", 2)):
        ranked = sorted(rows, key=lambda r: r[key], reverse=True)[:top]
        lines.append(
            f"\ncProfile, top {top} by {title} ({trials:,} trials, {total:.2f} s profiled):\n"
        )
        lines.extend(
            _table(
                ("calls", "self s", "cum s", "cum µs/trial", "function"),
                [
                    (f"{c:,}", f"{t:.3f}", f"{cu:.3f}", f"{1e6 * cu / trials:.1f}", name)
                    for name, c, t, cu in ranked
                ],
                markdown,
            )
        )
    groups: Counter[str] = Counter()
    for name, _c, tottime, _cu in rows:
        groups[_category(name)] += tottime
    lines.append("\ncProfile self time by kind:\n")
    lines.extend(
        _table(
            ("kind", "self s", "µs/trial", "share"),
            [
                (k, f"{v:.3f}", f"{1e6 * v / trials:.1f}", f"{v / total:.0%}")
                for k, v in groups.most_common()
            ],
            markdown,
        )
    )
    return "\n".join(lines)


def readme_tables(stats: pstats.Stats, trials: int, wall: float, top: int) -> str:
    """bench/README.md's "where the time goes": how it was made, self time by kind, and
    the top functions by self time, as Markdown."""
    import os
    import platform

    import assay

    # the commit of the assay that ran (PYTHONPATH may point at another checkout's src)
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=Path(assay.__file__).parent,
    ).stdout.strip()
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    entries = stats.stats  # type: ignore[attr-defined]
    rows = [(_label(f), c, t) for f, (_cc, c, t, _cu, _) in entries.items()]
    total = sum(r[2] for r in rows)
    groups: Counter[str] = Counter()
    for name, _c, tottime in rows:
        groups[_category(name)] += tottime
    lines = [
        f"`python bench/hotpath.py --task --table --samples {trials}` at `{head}`, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, Python "
        f"{platform.python_version()}, load {load}: {trials:,} trials, {total:.2f} s "
        f"of self time profiled ({wall:.1f} s wall under cProfile, which slows Python-level "
        "calls more than C calls: the shares overstate pure-Python code).",
        "",
    ]
    lines += _table(
        ("kind", "self s", "µs/trial (profiled)", "share"),
        [
            (k, f"{v:.2f}", f"{1e6 * v / trials:.1f}", f"{v / total:.0%}")
            for k, v in groups.most_common()
        ],
        markdown=True,
    )
    lines += ["", f"Top {top} functions by self time:", ""]
    lines += _table(
        ("calls per trial", "self µs/trial (profiled)", "share", "function"),
        [
            (f"{c / trials:.2f}", f"{1e6 * t / trials:.1f}", f"{t / total:.1%}", name)
            for name, c, t in sorted(rows, key=lambda r: r[2], reverse=True)[:top]
        ],
        markdown=True,
    )
    return "\n".join(lines)


def _table(header: tuple[str, ...], body: list[tuple[str, ...]], markdown: bool) -> list[str]:
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(x.replace("|", "\\|") for x in row) + " |" for row in body]
        return out
    widths = [max(len(x) for x in col) for col in zip(header, *body, strict=False)]
    return [
        "  ".join(x.ljust(w) for x, w in zip(row, widths, strict=False)).rstrip()
        for row in (header, *body)
    ]


def py_spy_tables(spec: Path, out: Path, top: int, markdown: bool, rate: int = 100) -> str:
    binary = shutil.which("py-spy")
    if binary is None:
        return "\npy-spy: not installed (pip install py-spy)"
    with tempfile.NamedTemporaryFile(suffix=".txt", delete=False) as handle:
        raw = Path(handle.name)
    settle()
    proc = subprocess.run(
        [
            binary,
            "record",
            "--idle",
            "--format",
            "raw",
            "-r",
            str(rate),
            "-o",
            str(raw),
            "--",
            sys.executable,
            str(CHILD),
            "run",
            str(spec),
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0 or not raw.exists() or raw.stat().st_size == 0:
        return f"\npy-spy failed: {proc.stderr.strip()[-500:]}"
    self_counts: Counter[str] = Counter()
    incl_counts: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        count = int(count_text)
        frames = [_frame(f) for f in stack.split(";")]
        total += count
        self_counts[frames[-1]] += count
        for frame in set(frames):
            incl_counts[frame] += count
    raw.unlink()
    lines = []
    for title, counter in (("self", self_counts), ("inclusive", incl_counts)):
        lines.append(
            f"\npy-spy --idle, top {top} by {title} samples ({total:,} samples "
            f"at {rate} Hz, wall clock):\n"
        )
        lines.extend(
            _table(
                ("samples", "share", "function"),
                [(f"{c:,}", f"{c / total:.1%}", name) for name, c in counter.most_common(top)],
                markdown,
            )
        )
    return "\n".join(lines)


def _frame(text: str) -> str:
    """``name (file:line)`` → ``file(name)``: samples of one function at any line merge."""
    name, _, where = text.partition(" (")
    filename = where.rsplit(":", 1)[0]
    filename = _short(filename) if filename.startswith("/") else filename
    return f"{filename}({name})" if filename else name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--no-py-spy", action="store_true")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument(
        "--evidence", action="store_true", help="also profile verify_run and rescore_run"
    )
    parser.add_argument(
        "--task", action="store_true", help="profile the Python task path (assay.eval) instead"
    )
    parser.add_argument(
        "--table", action="store_true", help="only bench/README.md's tables, in Markdown"
    )
    args = parser.parse_args()
    base = scratch_dir()
    if args.task:
        try:
            stats, wall, trials = cprofile_task(args.samples, base / "task")
            if args.table:
                print(readme_tables(stats, trials, wall, min(args.top, 15)))
                return
            print(f"cProfile, Python task: {wall:.2f} s wall, {trials / wall:,.0f} samples/s")
            print(cprofile_tables(stats, trials, args.top, args.markdown))
        finally:
            remove(base)
        return
    try:
        spec = make_spec(base / "spec", args.samples)
        stats, wall, trials = cprofile_run(spec, base / "run-cprofile")
        print(f"cProfile run: {wall:.2f} s wall, {trials / wall:,.0f} trials/s under the profiler")
        print(cprofile_tables(stats, trials, args.top, args.markdown))
        if args.evidence:
            print(evidence_tables(base / "run-cprofile", trials, args.top, args.markdown))
        remove(base / "run-cprofile")
        if not args.no_py_spy:
            print(py_spy_tables(spec, base / "run-py-spy", args.top, args.markdown))
    finally:
        remove(base)


if __name__ == "__main__":
    main()
