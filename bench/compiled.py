"""The trivial task (issue 19, item 1) on the compiled build and on ``src/``, in turns.

The compiled build is the wheel pyproject's mypyc hook makes (``scripts/compiled.py``:
the trial path's modules compiled, about two minutes to build). Its evidence is first
checked byte for byte against ``src/``'s (``same_evidence.py``, two workloads), then
``ab_task.py``'s trivial task runs on both in turns: CPU µs a trial, samples/s, peak RSS.

    python bench/compiled.py [--samples 100000] [--rounds 3] [--keep DIR]

``--keep DIR`` builds into *DIR* once and reuses it (it is not rebuilt when ``src/``
changes: remove it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _common import BENCH, remove, scratch_dir, turns_parser
from ab_task import once, print_medians

SRC = BENCH.parent / "src"


def build(folder: Path) -> Path:
    """The compiled wheel, as ``scripts/compiled.py`` makes it, unpacked in *folder*; the
    folder to put on ``PYTHONPATH``."""
    print(f"building the compiled wheel in {folder} (about 2 minutes) ...", flush=True)
    script = BENCH.parent / "scripts" / "compiled.py"
    built = subprocess.run(
        [sys.executable, str(script), str(folder)], capture_output=True, text=True
    )
    if built.returncode != 0:
        sys.exit(f"the build failed:\n{built.stdout[-3000:]}\n{built.stderr[-3000:]}")
    site = Path(built.stdout.strip().splitlines()[-1])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(site)], check=True, env=env)
    return site


def same_evidence(compiled: Path) -> None:
    """Stop unless the compiled copy writes ``src/``'s evidence (both workloads)."""
    argv = [sys.executable, str(BENCH / "same_evidence.py"), "--base", str(SRC)]
    checked = subprocess.run([*argv, "--this", str(compiled), "--samples", "1200"])
    if checked.returncode != 0:
        sys.exit("the compiled copy's evidence differs from src/'s: not timed")


def main() -> None:
    parser = turns_parser(__doc__, 100_000, 3, variant=None)
    parser.add_argument("--keep", type=Path, help="build here once and reuse it")
    args = parser.parse_args()
    base = scratch_dir()
    folder = args.keep or base / "compiled"
    try:
        built = folder / "site"
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
