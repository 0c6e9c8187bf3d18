"""Monkeypatches for bench/whatif.py, applied inside a ``_child.py run`` process.

Each patch changes assay in memory only (src is never edited) to estimate the gain of a
proposed change; ``whatif.py`` describes them. Loaded by path from ``_child.py``, so this
module imports nothing from the bench folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def apply(names: list[str]) -> None:
    """Monkeypatch assay in this process with the named patches."""
    for name in names:
        PATCHES[name]()


def _patch_yield() -> None:
    from collections.abc import Awaitable, Callable, Iterable

    import anyio
    import anyio.lowlevel
    import assay.pipeline._execute as run_module

    async def execute(items: Iterable[Any], work: Callable[[Any], Awaitable[None]], limit: int):
        iterator = iter(items)

        async def worker() -> None:
            for item in iterator:
                await work(item)
                await anyio.lowlevel.checkpoint()

        async with anyio.create_task_group() as group:
            for _ in range(max(1, limit)):
                group.start_soon(worker)

    run_module.execute = execute


def _patch_pack() -> None:
    from assay.evidence import ArtifactStore

    packs: dict[Path, Any] = {}

    def write_once(self: Any, digest: str, data: bytes) -> None:
        handle = packs.get(self.root)
        if handle is None:
            self.root.mkdir(parents=True, exist_ok=True)
            handle = packs[self.root] = open(self.root / "pack", "ab", buffering=1 << 16)  # noqa: SIM115
        handle.write(len(data).to_bytes(8, "little") + bytes.fromhex(digest) + data)

    ArtifactStore._write_once = write_once  # type: ignore[method-assign]


def _patch_str_paths() -> None:
    from assay.evidence import ArtifactStore

    def write_once(self: Any, digest: str, data: bytes) -> None:
        # the same steps as ArtifactStore._write_once, with str paths instead of pathlib
        root = getattr(self, "_root_str", None)
        if root is None:
            root = self._root_str = str(self.root)
        prefix = digest[:2]
        folder = f"{root}/{prefix}"
        if prefix not in self._made:
            os.makedirs(folder, exist_ok=True)
            self._made.add(prefix)
        final = f"{folder}/{digest}"
        if os.path.exists(final):
            return
        temp = f"{folder}/.{digest}.{os.getpid()}.tmp"
        with open(temp, "wb") as handle:
            handle.write(data)
        os.replace(temp, final)

    ArtifactStore._write_once = write_once  # type: ignore[method-assign]


def _patch_no_gc() -> None:
    """No cyclic garbage collection at all: what the collector costs this process."""
    import gc

    gc.disable()
    gc.set_threshold(0)


def _patch_no_evidence_writes() -> None:
    """Events and pack records neither encoded, hashed nor written (artifacts are still
    hashed, as their names are used): a bound on what any evidence format could save.
    Such a run has no evidence to verify."""
    import hashlib

    from assay.evidence import ArtifactStore
    from assay.evidence._log import GENESIS, EventLog

    def append(self: Any, *args: Any) -> str:
        self.count += 1
        return GENESIS

    EventLog.append = EventLog.append_held = append  # type: ignore[method-assign]
    # every artifact goes through put_digest (wt-skel on; _append before)
    ArtifactStore.put_digest = lambda self, data: hashlib.sha256(data).hexdigest()  # type: ignore[method-assign]


def _patch_no_timed_flush() -> None:
    """No work driven by the wall clock: no flush of the evidence every ``FLUSH_EVERY`` s,
    no look for the report's details every ``AHEAD_AFTER`` s (the end reads them all).
    The work a run does is then the same however slowly it runs, as instruction counts
    under valgrind need: 50 times slower there, a run otherwise flushes and looks far
    more often per trial (a look-ahead that began 20 ms later moved a count by 40k
    instructions a trial, with no change in CPU time outside valgrind)."""
    import assay.pipeline._ahead as ahead_module
    import assay.pipeline._run as run_module

    run_module.FLUSH_EVERY = 1e9  # type: ignore[misc]
    ahead_module.AHEAD_AFTER = 1e9  # type: ignore[misc]


def _patch_no_solve() -> None:
    """The solver chain and the model not run: each trial's target answers at once with
    the first trial's recorded state (same bytes, so the judge and evidence do the same
    work). With ``no-judge`` and plain runs it splits a trivial trial's CPU by layer
    (``bench/ab_task.py --variant all=src --variant nosolve=src+no-solve ...``)."""
    from assay.target._base import TargetOutcome
    from assay.target._solver import SolverTarget

    original = SolverTarget.call
    first: list[TargetOutcome] = []

    async def call(self: Any, sample: Any, epoch: int = 1) -> TargetOutcome:
        if not first:
            first.append(await original(self, sample, epoch))
        return TargetOutcome("answered", first[0].output, first[0].media)

    SolverTarget.call = call  # type: ignore[method-assign]


def _patch_no_judge() -> None:
    """No scorer run, no metrics nor report rows kept: each trial's judging returns one
    passed score record at once (its score line and ``match`` event are still written).
    The run's report is then empty of scores: for splitting CPU by layer only."""
    import assay.pipeline._run as run_module

    async def judge(bundle: Any, *args: Any) -> list[dict[str, Any]]:
        trial = bundle["trial"]
        return [{"scorer_id": "match", "status": "passed", "trial_id": trial["trial_id"]}]

    run_module.judge = judge  # type: ignore[assignment]


PATCHES = {
    "no-solve": _patch_no_solve,
    "no-judge": _patch_no_judge,
    "no-timed-flush": _patch_no_timed_flush,
    "no-evidence-writes": _patch_no_evidence_writes,
    "no-gc": _patch_no_gc,
    "yield": _patch_yield,
    "pack": _patch_pack,
    "str-paths": _patch_str_paths,
}
