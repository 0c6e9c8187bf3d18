"""Start-up: wall time of ``python -c "import assay"``, ``assay --help`` and a small run.

Each command runs ``--repeat`` times (10 by default) as a fresh process after one
untimed warm-up run (so the .pyc files and the page cache are warm, as on a second
use); the figure is the median. The small run is the 6-trial shipping example
(``assay run examples/shipping/eval.yaml``, two script targets, gate failed: exit 1),
each time into a fresh output folder: what a first user pays for the whole pipeline,
statistics included. ``python -c pass`` is measured the same way as the
floor that no package can go below. With ``--importtime`` the slowest imports of
``assay --help`` (from ``python -X importtime``) are listed too.

    python bench/startup.py [--repeat 10] [--importtime] [--json F]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import (
    INSPECT_VENV,
    REPO,
    Row,
    assay_command,
    inspect_env,
    inspect_python,
    median,
    print_table,
    save_rows,
)

TARGET_IMPORT = 0.15  # s (issue 2 brief / issue 6)
TARGET_HELP = 0.30  # s (issues 2 and 6)
TARGET_SMALL_RUN = 0.50  # s (issue 13: a small run imports nothing heavy it does not use)
SHIPPING = REPO / "examples" / "shipping" / "eval.yaml"


def wall_times(argv: list[str], repeat: int, env: dict[str, str] | None = None) -> list[float]:
    """Wall seconds of *repeat* runs of *argv* (after one warm-up run)."""
    subprocess.run(argv, capture_output=True, check=True, cwd=REPO, env=env)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True, cwd=REPO, env=env)
        times.append(time.perf_counter() - start)
    return times


def small_run_times(repeat: int) -> list[float]:
    """Wall seconds of *repeat* runs of the shipping example (after one warm-up run)."""
    times = []
    with tempfile.TemporaryDirectory(prefix="assay-bench-small-") as scratch:
        for attempt in range(repeat + 1):
            argv = [*assay_command(), "run", str(SHIPPING), "--output", f"{scratch}/{attempt}"]
            start = time.perf_counter()
            proc = subprocess.run(argv, capture_output=True, check=False, cwd=REPO)
            elapsed = time.perf_counter() - start
            if proc.returncode != 1:  # the example's gate fails by design
                raise SystemExit(f"small run: exit {proc.returncode}: {proc.stderr.decode()}")
            if attempt:
                times.append(elapsed)
    return times


def slowest_imports(top: int = 15) -> list[tuple[int, str]]:
    """(cumulative µs, module) of the slowest imports of ``assay --help``."""
    code = "import sys; sys.argv = ['assay', '--help']; from assay.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _self, cumulative, name = line[len("import time:") :].split("|")
        rows.append((int(cumulative), name.strip()))
    return sorted(rows, reverse=True)[:top]


def inspect_times(repeat: int) -> tuple[list[float], list[float]] | None:
    """``python -c "import inspect_ai"`` and ``inspect --help`` in Inspect's own venv."""
    python = inspect_python()
    if python is None:
        return None
    env = inspect_env()
    imp = wall_times([str(python), "-c", "import inspect_ai"], repeat, env)
    helps = wall_times([str(INSPECT_VENV / "bin" / "inspect"), "--help"], repeat, env)
    return imp, helps


def measure(repeat: int = 10, progress: bool = True, inspect_repeat: int = 5) -> list[Row]:
    """Median start-up figures as table rows."""
    floor = wall_times([sys.executable, "-c", "pass"], repeat)
    imp = wall_times([sys.executable, "-c", "import assay"], repeat)
    command = assay_command()
    helps = wall_times([*command, "--help"], repeat)
    small = small_run_times(repeat)
    other = inspect_times(inspect_repeat)
    on_path = shutil.which("assay")
    shim = None
    if on_path and Path(on_path).resolve() != Path(command[0]).resolve():
        shim = wall_times([on_path, "--help"], repeat)
    if progress:
        print(
            f"  startup: import assay {median(imp):.3f} s, assay --help {median(helps):.3f} s, "
            f"small run {median(small):.3f} s",
            flush=True,
        )
    spread = "min {:.3f}, max {:.3f}"
    rows = [
        Row(
            "startup",
            "python -c pass (floor)",
            median(floor),
            "s",
            note=spread.format(min(floor), max(floor)),
        ),
        Row(
            "startup",
            'python -c "import assay"',
            median(imp),
            "s",
            target=f"<= {TARGET_IMPORT} s",
            ok=median(imp) <= TARGET_IMPORT,
            note=spread.format(min(imp), max(imp)) + ' (Inspect: python -c "import inspect_ai")',
            extra={"times": imp, "inspect": other[0] if other else None},
            inspect=median(other[0]) if other else None,
        ),
        Row(
            "startup",
            "assay --help",
            median(helps),
            "s",
            target=f"<= {TARGET_HELP} s",
            ok=median(helps) <= TARGET_HELP,
            note=spread.format(min(helps), max(helps)) + " (Inspect: inspect --help)",
            extra={"times": helps, "command": command, "inspect": other[1] if other else None},
            inspect=median(other[1]) if other else None,
        ),
        Row(
            "startup",
            "assay run (shipping example, 6 trials)",
            median(small),
            "s",
            target=f"<= {TARGET_SMALL_RUN} s",
            ok=median(small) <= TARGET_SMALL_RUN,
            note=spread.format(min(small), max(small)) + " (whole pipeline, reports included)",
            extra={"times": small},
        ),
    ]
    if shim is not None:
        rows.append(
            Row(
                "startup",
                "assay --help via PATH (info)",
                median(shim),
                "s",
                note=f"{on_path}: a shim, not assay",
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="same as the defaults")
    parser.add_argument("--importtime", action="store_true", help="list the slowest imports")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    rows = measure(args.repeat)
    print()
    print_table(rows)
    if args.importtime:
        print("\nslowest imports of `assay --help` (cumulative µs):")
        for micros, name in slowest_imports():
            print(f"  {micros:>8,}  {name}")
    if args.json:
        save_rows(rows, args.json)


if __name__ == "__main__":
    main()
