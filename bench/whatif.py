"""What-if: estimate the gain of proposed src changes before anyone makes them.

The overhead workload is run in fresh processes with assay monkeypatched in memory (src
is not touched) by one or more of these patches:

- ``yield``: the executor's worker awaits ``anyio.lowlevel.checkpoint()`` after each item.
  A target that answers without suspending otherwise keeps one worker inside a single
  event-loop step for the whole run, so asyncio never purges the cancelled timer handle
  that each trial's ``fail_after`` leaves behind (each holds the trial's context, with
  its recorder): memory grows with the number of trials.
- ``pack``: artifacts are appended to one open ``artifacts/pack`` file (length, digest,
  bytes) instead of a new file each. Only the writing side: such a run does not verify;
  it measures what a pack-file store would cost.
- ``str-paths``: the file-per-artifact store with ``os.path`` strings instead of
  ``pathlib``. src adopted this itself (commit 7e0cbc5), so it is no longer a variant;
  measured before that, it made no difference visible through the file-creation noise.
  (``stream-digests``, hashing the manifest's files in chunks, was adopted too and is
  gone: ``pipeline/_seal.py`` does it.)

    python bench/whatif.py [--sizes 10000,100000] [--runs 3]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import (
    Row,
    checked,
    disk_usage,
    make_spec,
    median,
    print_table,
    remove,
    run_child,
    scratch_dir,
    settle,
)

VARIANTS: dict[str, list[str]] = {
    "as is": [],
    "yield": ["yield"],
    "yield + pack": ["yield", "pack"],
}


def measure(
    sizes: tuple[int, ...] = (10_000, 100_000), runs: int = 3, base: Path | None = None
) -> list[Row]:
    own = base is None
    folder = scratch_dir() if base is None else base
    rows: list[Row] = []
    try:
        for n in sizes:
            spec = make_spec(folder / f"spec-{n}", n)
            count = 1 if n >= 100_000 else runs
            baseline = None
            for label, patches in VARIANTS.items():
                figures = []
                for k in range(count):
                    out = folder / f"run-{n}-{k}"
                    settle()
                    args = ["run", str(spec), str(out)]
                    if patches:
                        args += ["--patch", ",".join(patches)]
                    result = checked(run_child(args), f"{label} at {n}")
                    usage = disk_usage(out)
                    figures.append(
                        (
                            n / result.report["total_s"],
                            result.maxrss_mb,
                            usage.allocated / n,
                            1000 * result.report["cpu_s"] / n,
                        )
                    )
                    remove(out)
                rate = median(f[0] for f in figures)
                rss = median(f[1] for f in figures)
                disk = median(f[2] for f in figures)
                cpu = median(f[3] for f in figures)
                baseline = baseline or rate
                name = f"what-if N={n:,}" + (" (1 run)" if count == 1 else "")
                print(
                    f"  {name} {label}: {rate:,.0f} trials/s, cpu {cpu:.3f} ms/trial, "
                    f"{rss:.1f} MB, {disk:,.0f} B/trial",
                    flush=True,
                )
                rows.append(
                    Row(
                        name,
                        f"{label}: trials/s",
                        rate,
                        "/s",
                        note=f"x{rate / baseline:.2f} vs as is; runs "
                        + ", ".join(f"{f[0]:,.0f}" for f in figures),
                    )
                )
                rows.append(Row(name, f"{label}: CPU per trial", cpu, "ms"))
                rows.append(Row(name, f"{label}: peak RSS", rss, "MB"))
                rows.append(Row(name, f"{label}: disk per trial, allocated", disk, "B"))
    finally:
        if own:
            remove(folder)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=3, help="runs per variant below 100,000")
    args = parser.parse_args()
    rows = measure(tuple(int(s) for s in args.sizes.split(",")), args.runs)
    print()
    print_table(rows)


if __name__ == "__main__":
    main()
