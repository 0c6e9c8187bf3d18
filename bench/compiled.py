"""What compiling the trial path with mypyc would take off a trivial trial (issue 19, item 1).

The trial path is pure Python that an earlier profile found "spread thin": no step above
8 % of a trial. A compiled build is the one lever left that speeds every step at once, so
this measures it before anyone builds one: ``src/`` is copied to a scratch folder, the
trial path's modules (``MODULES``) are compiled there by mypyc (the compiler mypy ships;
about two minutes), the copy's evidence is checked byte for byte against ``src/``'s
(``same_evidence.py``), and ``ab_task.py``'s trivial task runs on both in turns.

    python bench/compiled.py [--samples 100000] [--rounds 3] [--keep DIR]

``--keep DIR`` builds into *DIR* once and reuses it (it is not rebuilt when ``src/``
changes: remove it). Only the listed modules compile as they are; the notes in
bench/README.md ("A compiled trial path") say what stops the others and what the copy's
tests show, so a compiled build is a decision, not a flag.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from _common import BENCH, remove, scratch_dir
from ab_task import once, print_medians

SRC = BENCH.parent / "src"

# The trial path's modules that mypyc compiles and that then run the trivial and the
# mixed workload with the same evidence. Left out, each for what broke when compiled:
# solver/_state.py (``object.__new__`` of a native class), model/_output.py (a property
# setter on a msgspec Struct), evidence/_usage.py (``msgspec.convert`` into it),
# model/_budget.py and target/_solver.py (exception matching), report/_model.py (a
# ``msgspec.field`` default on a native class), pipeline/_run.py, plan/_plan.py and
# dataset/* (a solver chain of lists: not traced). Left out so that the suite
# (tests/pipeline, run, evidence, model, score) passes on the compiled copy too:
# pipeline/_judge.py (tests/pipeline/test_lean_answer.py spies on ``_lean.answer_judging``,
# which a compiled ``_lean`` calls directly when ``_judge`` is compiled too; 1.5 µs a
# trial). Kept apart from the compiled modules for the same reason (README, "later the
# same session"): model/_mock.py (the registered factories), evidence/_pack_finder.py,
# score/_estimates.py, run/_pace.py. evidence/_detached.py is compiled because its
# classes subclass compiled ones.
MODULES = (
    "evidence/_log",
    "evidence/_store",
    "evidence/_recorder",
    "evidence/_bundle",
    "evidence/_rundir",
    "evidence/_index",
    "evidence/_detached",
    "run/_trial",
    "run/_executor",
    "pipeline/_lean",
    "pipeline/_bundle_of",
    "pipeline/_task_metrics",
    "model/_model",
    "model/_mock_api",
    "model/_gate",
    "score/_adapter",
    "score/_match",
    "score/_metrics",
)


def build(folder: Path) -> Path:
    """A copy of ``src/`` in *folder* with ``MODULES`` compiled; its ``src`` path."""
    src = folder / "src"
    shutil.copytree(SRC, src, ignore=shutil.ignore_patterns("__pycache__"))
    files = [f"assay/{module}.py" for module in MODULES]
    print(f"compiling {len(files)} modules with mypyc in {src} ...", flush=True)
    compiled = subprocess.run(
        [sys.executable, "-m", "mypyc", *files], cwd=src, capture_output=True, text=True
    )
    if compiled.returncode != 0:
        sys.exit(f"mypyc failed:\n{compiled.stdout[-3000:]}\n{compiled.stderr[-3000:]}")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, env=env)
    return src


def same_evidence(compiled: Path) -> None:
    """Stop unless the compiled copy writes ``src/``'s evidence (both workloads)."""
    argv = [sys.executable, str(BENCH / "same_evidence.py"), "--base", str(SRC)]
    checked = subprocess.run([*argv, "--this", str(compiled), "--samples", "1200"])
    if checked.returncode != 0:
        sys.exit("the compiled copy's evidence differs from src/'s: not timed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build here once and reuse it")
    args = parser.parse_args()
    base = scratch_dir()
    folder = args.keep or base / "compiled"
    try:
        built = folder / "src"
        compiled = built if built.is_dir() else build(folder)
        same_evidence(compiled)
        figures: dict[str, list[tuple[float, float, float]]] = {"src": [], "compiled": []}
        for round_ in range(1, args.rounds + 1):
            for name, where in (("src", SRC), ("compiled", compiled)):
                cpu, rate, rss = once(where, "", args.samples, base)
                figures[name].append((cpu, rate, rss))
                print(f"round {round_} {name}: {cpu:.1f} µs CPU/trial, {rate:,.0f} samples/s")
    finally:
        remove(base)
    print_medians(figures, args.samples, args.rounds)


if __name__ == "__main__":
    main()
