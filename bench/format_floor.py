"""What today's evidence format costs by itself: a trivial trial's records, straight-line.

Issue 19 asks the trivial task (``bench/tasks/assay_overhead.py``) for 15,000 samples/s.
Is the format the floor, or the harness around it? This loop writes, for every sample,
what a trivial trial writes: four artifacts in a pack (sample, prompt, model output,
final state; SHA-256 each, index entry kept), the trial's six events as one hash-chained
batch line, its bundle with the digest spliced in, its score line and the ``match`` line
binding the score's hash. The shapes and sizes are those of a real run's; no solver,
model, scorer, metric, report row or plan is involved, and nothing is compressed (the
real run's seal adds zstd). The figure is CPU µs a trial; the gap to ``ab_task.py``'s
figure is what the harness's own Python costs, not the format.

    python bench/format_floor.py [--samples 100000]
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from _common import remove, scratch_dir

CANONICAL = msgspec.json.Encoder(order="sorted")
FAST = msgspec.json.Encoder()
MODEL = "bench-echo/v1"


class Floor:
    """The files of one run and the chain's head: each method writes one kind of record."""

    def __init__(self, folder: Path) -> None:
        self.files: dict[str, BinaryIO] = {
            name: open(folder / name, "wb", buffering=1 << 20)  # noqa: SIM115
            for name in ("events.jsonl", "bundles.jsonl", "scores.jsonl", "pack.bin")
        }
        self.index = bytearray()
        self.head, self.seq, self.packed = "0" * 64, 0, 0

    def artifact(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        record = b"ASSAY-PACK %s %d\n%s\n" % (digest.encode(), len(data), data)
        self.files["pack.bin"].write(record)
        self.packed += len(record)
        self.index += bytes.fromhex(digest) + self.packed.to_bytes(8, "little")
        return digest

    def event(self, trial: str, n: int, parent: int | None, kind: str, data: Any) -> str:
        at = time.time_ns() // 1000 / 1e6
        record = {"seq": self.seq, "prev": self.head, "trial": trial, "n": n}
        record.update(parent=parent, type=kind, at=at, data=data)
        line = FAST.encode(record)
        self.head = hashlib.sha256(line).hexdigest()
        self.files["events.jsonl"].write(line + b"\n")
        self.seq += 1
        return self.head

    def trial(self, index: int) -> None:
        trial_id, sample_id, text = f"t-{index:024x}", f"s{index:07d}", f"question {index}"
        usage = {"input_tokens": 2, "output_tokens": 2}
        sample = self.artifact(CANONICAL.encode({"id": sample_id, "input": text, "target": text}))
        prompt = self.artifact(
            CANONICAL.encode({"config": {}, "messages": [_message("user", text)], "tools": []})
        )
        output = self.artifact(
            CANONICAL.encode(
                {"choices": [{"message": _message("assistant", text), "stop_reason": "stop"}]}
                | {"model": MODEL, "usage": usage}
            )
        )
        state = self.artifact(
            CANONICAL.encode(
                {"completed": True, "epoch": 1, "input": text, "metadata": {}, "model": MODEL}
                | {"messages": [_message("user", text), _message("assistant", text)]}
                | {"output": {"completion": text}, "sample_id": sample_id, "store": {}}
                | {"target": [text]}
            )
        )
        at = time.time_ns() // 1000 / 1e6
        started = {"index": index, "sample_id": sample_id, "target_id": MODEL, "repetition": 1}
        events = [
            _event(1, None, "trial_started", at, started | {"sample": sample}),
            _event(2, 1, "attempt_started", at, {"attempt": 1, "target": MODEL}),
            _event(
                3,
                2,
                "sampling",
                at,
                {"model": MODEL, "prompt": prompt, "output": output, "usage": usage}
                | {"stop_reason": "stop", "cost": None},
            ),
            _event(
                4,
                2,
                "sampling",
                at,
                {"attempt": 1, "prompt": sample, "output": state, "outcome": "answered"},
            ),
            _event(5, 2, "attempt_finished", at, {"attempt": 1, "status": "succeeded"}),
            _event(6, 1, "trial_finished", at, {"state": "completed", "attempts": 1}),
        ]
        batch = self.event(trial_id, 6, None, "events", {"events": events})
        trial = {"index": index, "repetition": 1, "sample_id": sample_id, "target_id": MODEL}
        bundle = {
            "artifacts": {"output": state, "sample": sample},
            "attempts": [{"attempt": 1, "event": 2, "reason": None, "status": "succeeded"}],
            "canonical_attempt": {"attempt": 1, "event": 2},
            "events": [[6, batch]],
            "observation": {"expected": text, "failure": None, "outcome": "answered"}
            | {"media": "application/vnd.assay.state+json", "output": state},
            "schema": "assay.bundle/1",
            "state": "completed",
            "trial": trial | {"trial_id": trial_id},
            "usage": {"calls": 1, "cost": None, "input_tokens": 2, "output_tokens": 2},
        }
        line = CANONICAL.encode(bundle)
        digest = "sha256:" + hashlib.sha256(line).hexdigest()
        self.files["bundles.jsonl"].write(b'%s,"digest":"%s"}\n' % (line[:-1], digest.encode()))
        score = CANONICAL.encode(
            {"answer": text, "bundle_digest": digest, "reason": "", "score_id": trial_id + "/match"}
            | trial
            | {"scorer_id": "match", "status": "passed", "trial_id": trial_id, "value": 1.0}
        )
        self.files["scores.jsonl"].write(score + b"\n")
        record = hashlib.sha256(score).hexdigest()
        match = {"scorer": "match", "status": "passed", "bundle": digest, "record": record}
        self.event(trial_id, 7, 1, "match", match)

    def close(self) -> None:
        for handle in self.files.values():
            handle.close()


def _message(role: str, text: str) -> dict[str, Any]:
    return {"content": text, "role": role, "source": "input" if role == "user" else "generate"}


def _event(n: int, parent: int | None, kind: str, at: float, data: Any) -> dict[str, Any]:
    return {"n": n, "parent": parent, "type": kind, "at": at, "data": data}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100_000)
    args = parser.parse_args()
    folder = scratch_dir()
    try:
        floor = Floor(folder)
        started = time.process_time()
        for index in range(args.samples):
            floor.trial(index)
        floor.close()
        cpu = time.process_time() - started
        size = sum(path.stat().st_size for path in folder.iterdir())
    finally:
        remove(folder)
    per_trial = 1e6 * cpu / args.samples
    print(
        f"{args.samples:,} trials, today's records straight-line: {per_trial:.1f} µs CPU a "
        f"trial, {args.samples / cpu:,.0f} trials/s, {size / args.samples:,.0f} B a trial "
        "uncompressed"
    )


if __name__ == "__main__":
    main()
