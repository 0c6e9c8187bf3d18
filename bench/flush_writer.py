"""The run writer's share of a trial, alone: queueing a bundle line and a score record
(``write_bundle``, ``write_score``) and the periodic ``flush`` (the lines written, the
bundles.idx records made), in thread CPU time (user and system) a trial.

    PYTHONPATH=/abs/src python bench/flush_writer.py [--trials 3000] [--flushes 20]

Bundle lines are the trivial task's shape (~810 bytes, the trial id near the end);
each flush takes ``--trials`` of them (a 0.2 s flush of a 15,000 samples/s run holds
3,000). The first two flushes are not counted (files opened, buffers grown).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import tempfile
import time
from pathlib import Path

from assay.evidence._rundir import RunWriter

SCORE = {
    "answer": "question 1",
    "bundle": "sha256:" + "b" * 64,
    "explanation": None,
    "scorer_id": "match",
    "status": "pass",
    "trial_id": "t-" + "a" * 24,
    "value": 1.0,
}


def bundle_line(i: int) -> bytes:
    """A bundle line of the trivial task's shape for trial *i*."""
    h = hashlib.sha256(str(i).encode()).hexdigest().encode()
    return (
        b'{"artifacts":{"output":"%s","sample":"%s"},"attempts":[{"attempt":1,"event":2,'
        b'"reason":null,"retry_after":null,"status":"succeeded"}],"canonical_attempt":'
        b'{"attempt":1,"event":2},"digest":"sha256:%s","events":[[5,"%s"]],"observation":'
        b'{"expected":"question %d","failure":null,"media":"text/plain","outcome":"answer",'
        b'"output":"%s"},"schema":"assay.bundle/1","state":"completed","trial":{"index":%d,'
        b'"repetition":1,"sample_id":"s%07d","target_id":"bench-echo/v1","trial_id":"t-%s"}}'
    ) % (h, h, h, h, i, h, i, i, h[:24])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3000, help="bundle lines a flush")
    parser.add_argument("--flushes", type=int, default=20)
    args = parser.parse_args()
    per, flushes = args.trials, args.flushes
    folder = Path(tempfile.mkdtemp())
    writer = RunWriter(folder / "run")
    queued = flushed = 0
    try:
        for round_ in range(flushes):
            start = time.thread_time_ns()
            for i in range(round_ * per, (round_ + 1) * per):  # each line made just before,
                writer.write_bundle(bundle_line(i))  # as a trial seals its bundle (hot)
                writer.write_score(SCORE)
            middle = time.thread_time_ns()
            writer.flush()
            end = time.thread_time_ns()
            if round_ >= 2:
                queued += middle - start
                flushed += end - middle
    finally:
        writer.close()
        shutil.rmtree(folder)
    counted = (flushes - 2) * per
    print(
        f"queue {queued / counted / 1e3:.3f} µs a trial, flush {flushed / counted / 1e3:.3f}"
        f" µs a trial ({len(bundle_line(0))}-byte bundle lines, {per:,} a flush; the queue"
        " figure includes making the lines)"
    )


if __name__ == "__main__":
    main()
