"""Micro-benchmarks of the per-trial evidence operations, to explain the overhead figure.

Each figure is µs per operation, the median of ``--batches`` batches of ``--ops``
operations, with dirty pages flushed (``os.sync``) before every batch:

- artifact write, new content: ``ArtifactStore.put`` of fresh bytes (hash, stat, create a
  temporary file, write, rename) — a trial of the overhead workload does two;
- artifact write, content already stored (hash + stat only);
- the same new file without the temporary name and rename; and one append to an
  already open file (what a pack file would cost instead of a file per artifact);
- one event append: ``EventLog.append`` into ``events.jsonl`` (encode, hash, write); and
  without a sink (encode and hash only) — a trial records six events;
- sealing a bundle (two canonical encodes and a SHA-256), judging it (scorers, metrics,
  report row), and encoding one score record;
- the executor: one no-op item through ``assay.run.execute`` at concurrency 16;
- one atomic, fsync'd file write (the manifest and each report: a handful per run).

    python bench/micro.py [--ops 5000] [--batches 5] [--json F]
"""

from __future__ import annotations

import argparse
import inspect
import os
import time
from pathlib import Path
from typing import Any

import msgspec

from _common import Row, make_spec, median, remove, scratch_dir, settle, show_rows


def _per_op(batches: int, ops: int, setup: Any, body: Any, sync: bool = False) -> float:
    """Median µs per op; ``setup(batch)`` returns state, ``body(state, i)`` is one op.

    With *sync*, dirty pages are flushed before each batch (for the file benchmarks)."""
    samples = []
    for batch in range(batches):
        state = setup(batch)
        if sync:
            settle()
        start = time.perf_counter()
        for i in range(ops):
            body(state, i)
        samples.append((time.perf_counter() - start) / ops * 1e6)
    return median(samples)


class EventHead(msgspec.Struct):
    """What verify needs of an event line; ``data`` is kept as undecoded bytes."""

    prev: str
    trial: str | None
    n: int
    parent: int | None
    type: str
    data: msgspec.Raw


def _sync(result: Any) -> Any:
    """The value of *result*, driving it first if it is a coroutine that never suspends
    (``judge`` became async; measuring it should not measure an event loop too)."""
    if not inspect.iscoroutine(result):
        return result
    try:
        result.send(None)
    except StopIteration as done:
        return done.value
    result.close()
    raise RuntimeError("the coroutine suspended; it cannot be timed without an event loop")


def _typical_bundle(base: Path) -> tuple[dict[str, Any], bytes, int, float]:
    """A real bundle and its output from a tiny run; also events and artifacts per trial."""
    from assay._digest import loads
    from assay.evidence import ArtifactStore
    from assay.pipeline import RunOptions, run_spec
    from assay.spec import load_spec

    spec = make_spec(base / "tiny-spec", 10)
    out = base / "tiny-run"
    run_spec(load_spec(spec), RunOptions(output=out))
    bundle = loads((out / "bundles.jsonl").read_bytes().splitlines()[0])
    sha = bundle["observation"]["output"]
    output = ArtifactStore(out / "artifacts", write=False).get(sha)
    trial_events = sum(
        1 for line in (out / "events.jsonl").read_bytes().splitlines() if b'"trial":"t-' in line
    )
    # artifacts: loose files and pack records (small ones are records, not files)
    from assay.evidence._pack import PackRecord, scan_headers

    stored = 0
    for path in (out / "artifacts").rglob("*"):
        if path.suffix == ".bin":
            stored += sum(1 for r in scan_headers(path) if isinstance(r, PackRecord))
        elif path.is_file() and path.suffix != ".idx":
            stored += 1
    return bundle, output, trial_events // 10, stored / 10


def measure(ops: int = 5000, batches: int = 5, base: Path | None = None) -> list[Row]:
    """Every micro-benchmark as a table row (µs per operation)."""
    from assay._digest import canonical_json
    from assay.evidence import ArtifactStore, EventLog, FileSink, seal_bundle
    from assay.pipeline._judge import judge
    from assay.report import TrialRows
    from assay.score import MetricsBuilder, build_scorer
    from assay.spec import ScorerSpec

    own = base is None
    folder = scratch_dir() if base is None else base
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    name = "micro (per op)"
    handles: list[Any] = []  # stores, files and sinks opened: closed at the end
    try:
        bundle, output, events_per_trial, files_per_trial = _typical_bundle(folder)

        def new_store(batch: int) -> ArtifactStore:
            store = ArtifactStore(folder / f"store-{batch}")
            handles.append(store)
            return store

        put_new = _per_op(
            batches, ops, new_store, lambda s, i: s.put(b"answer %d" % i, "text/plain"), True
        )
        rows.append(
            Row(
                name,
                "artifact write, new content (put)",
                put_new,
                "µs",
                note=f"x{files_per_trial:.0f} per trial",
            )
        )

        warm = ArtifactStore(folder / "store-warm")
        handles.append(warm)
        for i in range(ops):
            warm.put(b"answer %d" % i, "text/plain")
        rows.append(
            Row(
                name,
                "artifact write, content already stored",
                _per_op(
                    batches, ops, lambda b: warm, lambda s, i: s.put(b"answer %d" % i, "t"), True
                ),
                "µs",
            )
        )

        def raw_dir(batch: int) -> Path:
            d = folder / f"raw-{batch}"
            for p in range(256):
                (d / f"{p:02x}").mkdir(parents=True, exist_ok=True)
            return d

        def raw_write(d: Path, i: int) -> None:
            with open(d / f"{i % 256:02x}" / f"file{i}", "wb") as handle:
                handle.write(b"answer %d" % i)

        rows.append(
            Row(
                name,
                "new file, no temp+rename (open/write/close)",
                _per_op(batches, ops, raw_dir, raw_write, True),
                "µs",
            )
        )

        def pack(batch: int) -> Any:
            handle = open(folder / f"pack-{batch}", "ab", buffering=1 << 16)  # noqa: SIM115
            handles.append(handle)
            return handle

        rows.append(
            Row(
                name,
                "append one record to an open file (pack)",
                _per_op(batches, ops, pack, lambda h, i: h.write(b"answer %d\n" % i)),
                "µs",
            )
        )

        data = {"attempt": 1, "prompt": "a" * 64, "output": "b" * 64, "outcome": "answered"}

        def file_log(batch: int) -> EventLog:
            sink = FileSink(folder / f"events-{batch}.jsonl")
            handles.append(sink)
            return EventLog([sink])

        rows.append(
            Row(
                name,
                "event append to events.jsonl",
                _per_op(batches, ops, file_log, lambda log, i: log.append("t-x", i, 1, "s", data)),
                "µs",
                note=f"x{events_per_trial} per trial",
            )
        )
        rows.append(
            Row(
                name,
                "event append, no sink (encode + hash)",
                _per_op(
                    batches,
                    ops,
                    lambda b: EventLog([]),
                    lambda log, i: log.append("t", i, 1, "s", data),
                ),
                "µs",
            )
        )

        body = {k: v for k, v in bundle.items() if k != "digest"}
        rows.append(
            Row(
                name,
                "seal one bundle",
                _per_op(batches, ops, lambda b: None, lambda s, i: seal_bundle(dict(body))),
                "µs",
            )
        )
        scorers = {"exact": build_scorer(ScorerSpec(id="exact", kind="exact"))}
        metrics = MetricsBuilder({bundle["trial"]["target_id"]: 10**9}, list(scorers))
        table = TrialRows(10**9)  # past the listed rows' cap, as at 100,000 trials
        rows.append(
            Row(
                name,
                "judge one bundle (score, count, row)",
                _per_op(
                    batches,
                    ops,
                    lambda b: None,
                    lambda s, i: _sync(judge(bundle, output, scorers, metrics, table)),
                ),
                "µs",
            )
        )
        records = _sync(judge(bundle, output, scorers, metrics, table))
        rows.append(
            Row(
                name,
                "encode one score record",
                _per_op(batches, ops, lambda b: None, lambda s, i: canonical_json(records[0])),
                "µs",
            )
        )
        rows.append(Row(name, "executor: one no-op item", _executor_cost(ops * 4), "µs"))
        rows.append(Row(name, "atomic fsync'd file write (manifest)", _atomic(folder), "µs"))
        rows += _verify_ops(folder / "tiny-run", ops, batches)
    finally:
        for handle in handles:
            handle.close()
        if own:
            remove(folder)
    return rows


def _verify_ops(run: Path, ops: int, batches: int) -> list[Row]:
    """What ``verify`` / ``score`` pay per record, and cheaper ways to do the same check."""
    import hashlib

    import msgspec
    from assay._digest import loads
    from assay.evidence import ArtifactStore, bundle_digest

    typed = msgspec.json.Decoder(EventHead).decode
    event = next(
        line
        for line in (run / "events.jsonl").read_bytes().splitlines()
        if b'"type":"sampling"' in line
    )
    line = (run / "bundles.jsonl").read_bytes().splitlines()[0]
    bundle = loads(line)
    field = b'"digest":"' + bundle["digest"].encode() + b'",'
    sha = bundle["observation"]["output"]
    store = ArtifactStore(run / "artifacts", write=False)
    store.get(sha)  # builds the pack index once
    nothing = lambda b: None  # noqa: E731
    name = "micro: verify (per record)"
    return [
        Row(
            name,
            "decode one event line (dict)",
            _per_op(batches, ops, nothing, lambda s, i: loads(event)),
            "µs",
            note="x6 per trial",
        ),
        Row(
            name,
            "decode one event line (typed, data skipped)",
            _per_op(batches, ops, nothing, lambda s, i: typed(event)),
            "µs",
        ),
        Row(
            name,
            "sha256 of one event line",
            _per_op(batches, ops, nothing, lambda s, i: hashlib.sha256(event).hexdigest()),
            "µs",
        ),
        Row(
            name,
            "bundle digest: decode + re-encode + hash",
            _per_op(batches, ops, nothing, lambda s, i: bundle_digest(loads(line))),
            "µs",
            note="x1 per trial",
        ),
        Row(
            name,
            "bundle digest: hash the line minus its digest field",
            _per_op(
                batches,
                ops,
                nothing,
                lambda s, i: hashlib.sha256(line.replace(field, b"", 1)).hexdigest(),
            ),
            "µs",
        ),
        Row(
            name,
            "read one artifact (pack record or file)",
            _per_op(batches, ops, nothing, lambda s, i: store.get(sha)),
            "µs",
            note="x2 verify, x1 score per trial",
        ),
    ]


def _executor_cost(items: int) -> float:
    import anyio
    from assay.run import execute

    async def nothing(item: int) -> None:
        await anyio.lowlevel.checkpoint()

    async def main() -> float:
        start = time.perf_counter()
        await execute(range(items), nothing, 16)
        return (time.perf_counter() - start) / items * 1e6

    return anyio.run(main)  # type: ignore[no-any-return]


def _atomic(folder: Path, count: int = 20) -> float:
    try:
        from assay.evidence._rundir import _write_atomic
    except ImportError:  # private helper; fall back to the same steps

        def _write_atomic(path: Path, data: bytes) -> None:
            temp = path.with_name(f".{path.name}.tmp")
            with open(temp, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, path)

    times = []
    for i in range(count):
        start = time.perf_counter()
        _write_atomic(folder / "manifest.json", b"{}" * (i + 100))
        times.append(time.perf_counter() - start)
    return median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=5000)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2,000 ops x 3 batches")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    ops, batches = (2000, 3) if args.quick else (args.ops, args.batches)
    rows = measure(ops, batches)
    show_rows(rows, args.json)


if __name__ == "__main__":
    main()
