"""Run every calibration module and rewrite the table in docs/statistics.md.

    python -m bench.calibration            # simulate, print and rewrite the table
    python -m bench.calibration --check    # simulate and print; leave the doc alone

Each module in ``MODULES`` has ``rows() -> list[Row]``; a module not written yet is
skipped with a note, so the table grows as methods are calibrated.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import time
from pathlib import Path

from bench.calibration._row import Row

MODULES = ("minimum", "clustering", "power", "regression", "compare", "multiplicity", "sequential")
DOC = Path(__file__).resolve().parents[2] / "docs" / "statistics.md"
BEGIN, END = "<!-- calibration table: begin -->", "<!-- calibration table: end -->"


def collect() -> list[Row]:
    rows: list[Row] = []
    for name in MODULES:
        try:
            module = importlib.import_module(f"bench.calibration.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"bench.calibration.{name}":
                raise
            print(f"  (no bench/calibration/{name}.py yet)", file=sys.stderr)
            continue
        started = time.perf_counter()
        found = module.rows()
        print(
            f"  {name}: {len(found)} row(s) in {time.perf_counter() - started:.1f} s",
            file=sys.stderr,
        )
        rows.extend(found)
    return rows


def table(rows: list[Row]) -> str:
    lines = [
        "| check | setting | measured | promised | runs |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r.check} | {r.setting} | {r.measured:.4f} | {r.promised} | {r.runs} |" for r in rows
    ]
    return "\n".join(lines)


def rewrite(doc: Path, text: str) -> None:
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.DOTALL)
    source = doc.read_text(encoding="utf-8")
    if not pattern.search(source):
        raise SystemExit(f"{doc}: the markers {BEGIN} ... {END} are missing")
    doc.write_text(pattern.sub(f"{BEGIN}\n{text}\n{END}", source), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="print only; do not rewrite")
    args = parser.parse_args()
    text = table(collect())
    print(text)
    if not args.check:
        rewrite(DOC, text)
        print(f"rewrote the table in {DOC}", file=sys.stderr)


if __name__ == "__main__":
    main()
