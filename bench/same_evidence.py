"""Whether two versions of assay write the same evidence: the check every speed change of
the trial path runs before it lands (issue 19).

    python bench/same_evidence.py --base /tmp/base/src --this src [--samples 1200]

Both versions run the same two workloads in fresh processes: the trivial task
(``bench/tasks/assay_overhead.py``, every answer right) and a mixed task (wrong answers,
a model that raises, a sample the model answers with nothing, two epochs). The runs must
hold the same plan bytes, the same events (trial, number, parent, type, data), the same
artifact records, bundles, scores and report, less what follows the clock (times, and
the hashes of lines that hold them); and each version's ``assay verify`` must accept
the other's run. Exit 0 when all of that holds, 1 with the first difference otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from _common import BENCH, CHILD, remove, scratch_dir

TRIVIAL = f"{BENCH / 'tasks' / 'assay_overhead.py'}@overhead"
MIXED_TASK = '''"""Wrong answers, a raising model, empty answers, two epochs."""
from assay import Sample, Task, generate, match, task
from assay.model import MockAPI, modelapi


def answer(messages):
    text = messages[-1].content
    number = int(text.split()[-1])
    if number % 53 == 3:
        raise RuntimeError(f"no answer for {number}")
    if number % 5 == 1:
        return ""
    return text if number % 3 else f"{text}?"


@modelapi("bench-mixed")
def provider(name, config, **args):
    return MockAPI(name, config, outputs=answer)


@task
def mixed(samples: int = 100):
    dataset = [
        Sample(input=f"question {i}", target=f"question {i}", id=f"m{i:05d}",
               metadata={"i": i})
        for i in range(samples)
    ]
    return Task(dataset=dataset, solver=[generate()], scorer=match(),
                model="bench-mixed/v1", epochs=2, fail_on_error=False)
'''
TIMED = {"at", "prev", "seq", "digest", "bundle", "record", "bundle_digest", "events"}
"""Keys whose values follow the clock: times, and hashes of lines that hold them."""
REPORT_TIMED = TIMED | {
    "run_id",
    "path",
    "started_at",
    "finished_at",
    "duration_s",
    "created",
    "spec_source",
}


def untimed(value: Any, timed: set[str] = TIMED) -> Any:
    """*value* without the keys that follow the clock, at any depth."""
    if isinstance(value, dict):
        return {k: untimed(v, timed) for k, v in value.items() if k not in timed}
    if isinstance(value, list):
        return [untimed(v, timed) for v in value]
    return value


def run(src: Path, task: str, samples: int, out: Path) -> Path:
    """Run *task* with the assay at *src*; the run's folder."""
    env = {**os.environ, "PYTHONPATH": str(src.resolve())}
    argv = [sys.executable, str(CHILD), "task", task, str(out), str(samples), "16"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{task} at {src} failed:\n{done.stderr[-2000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return Path(report["run"])


def evidence(src: Path, folder: Path) -> dict[str, Any]:
    """What the run in *folder* wrote, less what follows the clock, read by the assay at
    *src* (its readers of either format)."""
    code = f"""
import json, sys
sys.path.insert(0, {str(src.resolve())!r})
sys.path.insert(0, {str(BENCH)!r})
from pathlib import Path
from same_evidence import untimed, REPORT_TIMED
from assay.evidence._framed import read_evidence
from assay.evidence._log import events_in
from assay.evidence._pack_format import MAGIC
run = Path({str(folder)!r})
def lines(name):
    return [json.loads(l) for l in read_evidence(run / name).splitlines()]
events = sorted(
    (e["trial"], e["n"], e["parent"], e["type"], json.dumps(untimed(e["data"]), sort_keys=True))
    for line in lines("events.jsonl") for e in events_in(line) if e["trial"] is not None)
packs = sorted({{p.name.removesuffix(".zst") for p in (run / "artifacts").glob("pack-*.bin*")}})
records = sorted(b"".join(read_evidence(run / "artifacts" / p) for p in packs).split(MAGIC))
assert len(records) > 1, f"no artifact records in {{run}}"
loose = sorted(p.name for p in (run / "artifacts").glob("??/*"))
print(json.dumps({{
    "events": events,
    "bundles": sorted(json.dumps(untimed(r), sort_keys=True) for r in lines("bundles.jsonl")),
    "scores": sorted(json.dumps(untimed(r), sort_keys=True) for r in lines("scores.jsonl")),
    "plan": read_evidence(run / "plan.jsonl").decode(),
    "artifacts": [r.decode("utf-8", "replace") for r in records] + loose,
    "report": json.dumps(untimed(json.loads((run / "report.json").read_text()), REPORT_TIMED),
                         sort_keys=True),
}}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"reading {folder} with {src} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def verified(src: Path, folder: Path) -> str | None:
    """None when the assay at *src* verifies *folder*, else its output."""
    env = {**os.environ, "PYTHONPATH": str(src.resolve())}
    argv = [sys.executable, "-m", "assay", "verify", str(folder)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    return None if done.returncode == 0 else f"exit {done.returncode}: {done.stdout}{done.stderr}"


def first_difference(one: dict[str, Any], other: dict[str, Any]) -> str | None:
    """Where *one* and *other* first differ, or None."""
    for key in one:
        a, b = one[key], other[key]
        if a == b:
            continue
        if isinstance(a, list) and isinstance(b, list):
            for i, (x, y) in enumerate(zip(a, b, strict=False)):
                if x != y:
                    return f"{key}[{i}]:\n  base: {str(x)[:600]}\n  this: {str(y)[:600]}"
            return f"{key}: {len(a)} against {len(b)} entries"
        return f"{key}:\n  base: {str(a)[:600]}\n  this: {str(b)[:600]}"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True, help="the src folder to match")
    parser.add_argument("--this", type=Path, required=True, help="the src folder checked")
    parser.add_argument("--samples", type=int, default=1200)
    args = parser.parse_args()
    scratch = scratch_dir()
    failures = 0
    try:
        mixed_file = scratch / "mixed_task.py"
        mixed_file.write_text(MIXED_TASK)
        for name, task in (("trivial", TRIVIAL), ("mixed", f"{mixed_file}@mixed")):
            runs = {
                side: run(src, task, args.samples, scratch / f"{name}-{side}")
                for side, src in (("base", args.base), ("this", args.this))
            }
            seen = {side: evidence(args.base, folder) for side, folder in runs.items()}
            difference = first_difference(seen["base"], seen["this"])
            checks = {
                "base verifies this": verified(args.base, runs["this"]),
                "this verifies base": verified(args.this, runs["base"]),
                "this verifies this": verified(args.this, runs["this"]),
            }
            bad = {k: v for k, v in checks.items() if v is not None}
            counts = {k: len(v) for k, v in seen["this"].items() if isinstance(v, list)}
            if difference is None and not bad:
                print(f"{name}: same evidence ({counts}); verified both ways")
            else:
                failures += 1
                print(f"{name}: DIFFERENT: {difference or ''}")
                for check, output in bad.items():
                    print(f"  {check}: {output[:800]}")
    finally:
        remove(scratch)
    raise SystemExit(1 if failures else 0)


if __name__ == "__main__":
    main()
