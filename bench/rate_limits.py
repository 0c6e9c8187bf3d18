"""Throughput under faults (issue 18, item 5): a Python task against ``bench/server.py``
failing a seeded random share of its calls, with and without rate limits.

Three server settings, each in a fresh server and a fresh assay process
(``bench/_child.py task``: ``assay.eval`` of ``bench/tasks/assay_network.py`` at N
samples, ``max_connections`` = ``max_samples`` = C):

- ``none``: no fault;
- ``faults``: 10 % 500, 5 % reset connections, 5 % answers stalled 2 s;
- ``faults+429``: the same plus 10 % 429 with ``Retry-After: 1`` (30 % in all).

For each: samples/s, wall, the faults the server injected, and whether every sample was
answered (status ``success``: nothing lost; the evidence then holds one bundle a sample).
The bound to meet is the fault-free rate halved, plus the ``Retry-After`` waits spread
over the C slots (about 0.1 x N x 1 s / C).

    python bench/rate_limits.py [--samples 20000] [--connections 100] [--before SRC]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from _common import BENCH, checked, inspect_env, remove, run_child, scratch_dir
from network import MODEL, Server

TASK = BENCH / "tasks" / "assay_network.py"
SETTINGS = {
    "none": "",
    "faults": "500=0.1,reset=0.05,stall=0.05",
    "faults+429": "429=0.1,500=0.1,reset=0.05,stall=0.05",
}


def once(faults: str, samples: int, connections: int, src: str, base: Path) -> dict[str, float]:
    with Server(faults=faults) as server:
        log_dir = base / "run"
        argv = ["task", f"{TASK}@network", str(log_dir), str(samples), str(connections)]
        argv += ["--model", MODEL, "--model-base-url", server.base_url]
        env = {**inspect_env(), "PYTHONPATH": src}
        result = checked(run_child(argv, env=env), f"assay with faults {faults!r}")
        stats = server.stats()
    remove(log_dir)
    report = result.report
    return {
        "rate": samples / report["total_s"],
        "seconds": report["total_s"],
        "faults": stats["faults"],
        "requests": stats["requests"],
        "ok": float(report["status"] == "success"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--before", help="a src folder of older code, measured first")
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parents[1] / "src")
    sides = [("before", args.before), ("after", here)] if args.before else [("this", here)]
    base = scratch_dir()
    try:
        for side, src in sides:
            rates: dict[str, float] = {}
            for name, faults in SETTINGS.items():
                f = once(faults, args.samples, args.connections, src, base)
                rates[name] = f["rate"]
                print(
                    f"{side:6s} {name:11s} {f['rate']:8,.0f} samples/s  {f['seconds']:7.1f} s"
                    f"  faults {int(f['faults']):,} of {int(f['requests']):,} requests"
                    f"  {'all answered' if f['ok'] else 'NOT ALL ANSWERED'}",
                    flush=True,
                )
            waits = 0.1 * args.samples * 1.0 / args.connections
            bound = args.samples / (args.samples / (rates["none"] / 2) + waits)
            verdict = "PASS" if rates["faults+429"] >= bound else "FAIL"
            print(f"{side:6s} faults+429 needs >= {bound:,.0f}/s: {verdict}", flush=True)
    finally:
        remove(base)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
