"""Where `verify_run`'s time goes, stage by stage, in this process (no profiler).

Each step `assay.evidence._verify.verify_run` calls is wrapped to print its wall and CPU
seconds, and the wait for the event worker is timed on its own, so the two processes'
shares can be compared without cProfile's distortion of Python-level calls:

    python bench/verify_stages.py RUN [--runs 3]

RUN is a run folder, e.g. the 100,000-trial one `python bench/evidence.py --tmp DIR`
leaves in DIR/run. A stage that waits for the worker (`finish_scan`) is wall time only.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import median

STAGES = (  # the steps verify_run calls, as names in assay.evidence._verify
    "_check_spec",
    "_check_plan",
    "check_artifacts",
    "check_bundles",
    "read_scores",
    "take_packs",
    "check_bundle_artifacts",
    "_check_files",
    "check_manifest_bytes",
    "check_folder",
    "_check_events",
    "check_event_artifacts",
    "check_bundle_events",
    "check_score_binding",
)


def timed(name: str, step: Callable[..., Any], seen: dict[str, list[float]]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return step(*args, **kwargs)
        finally:
            seen.setdefault(name, []).append(time.perf_counter() - wall)
            seen.setdefault(name + " cpu", []).append(time.process_time() - cpu)

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    started = time.perf_counter()
    from assay.errors import AssayError
    from assay.evidence import _verify

    imported = time.perf_counter() - started
    seen: dict[str, list[float]] = {}
    for name in (*STAGES, "finish_packs", "finish_scan"):
        if hasattr(_verify, name):
            setattr(_verify, name, timed(name, getattr(_verify, name), seen))
    totals = []
    for _ in range(args.runs):
        wall = time.perf_counter()
        try:
            result = _verify.verify_run(args.run)
        except AssayError as exc:
            raise SystemExit(f"verify_stages.py: {exc}") from None
        totals.append(time.perf_counter() - wall)
        if not result.ok:
            raise SystemExit(f"{args.run} does not verify: {result.problems[:3]}")
    print(f"import assay.evidence: {imported:.3f} s (first run only)")
    print(f"{'stage':<24} {'wall s':>8} {'cpu s':>8}   (median of {args.runs})")
    for name in (*STAGES, "finish_packs", "finish_scan"):
        if name in seen:
            cpu = seen.get(name + " cpu")
            wait = name.startswith("finish_")
            label = f"{name} (wait)" if wait else name
            cpu_text = "" if wait or cpu is None else f"{median(cpu):8.3f}"
            print(f"{label:<24} {median(seen[name]):8.3f} {cpu_text:>8}")
    trials = result.trials
    print(f"verify_run: {median(totals):.3f} s, {trials / median(totals):,.0f} trials/s")


if __name__ == "__main__":
    main()
