"""The options of a run, defined once and shared by the CLI and the Python API."""

from __future__ import annotations

from pathlib import Path

import msgspec

from assay.pipeline._progress import ProgressCallback
from assay.plan import Shard


class RunOptions(msgspec.Struct, frozen=True):
    """How to run a spec; none of these change results, so none are in the spec.

    Attributes:
        output: the run directory to create (``None`` with ``dry_run``).
        max_concurrency: trials in flight at once.
        dry_run: run and print events, write nothing.
        sink_url: also stream event batches to this HTTP collector.
        sink_max_failure_rate: stop the run once more batches than this fail.
        handle_signals: on SIGINT/SIGTERM, cancel in-flight trials, seal the run as
            interrupted and raise ``Interrupted`` (a second signal stops at once). Off
            for library use, where signals belong to the host program; on in the CLI.
        baseline: the baseline run for the spec's ``no_regression`` gate policy (wins
            over the spec's ``baseline``; the policy itself stays the spec's).
        cluster: the address of a Dask scheduler (``tcp://host:8786``): the targets'
            calls run on its workers, the trials and their evidence stay here.
        progress: called with a ``Progress`` every half second while the run goes on,
            and once at its end (finished, interrupted or failed).
        max_sandboxes: trials holding sandboxes at once (``None``: as many as are in
            flight).
        sandbox_cleanup: remove each trial's sandboxes after scoring; ``False`` keeps
            them for debugging and prints where each is.
        shard: run only this part of the plan (``assay run --shard K/N``); its gate is
            partial (``inconclusive``) until ``assay merge`` joins every part.
    """

    output: Path | None = None
    max_concurrency: int = 16
    dry_run: bool = False
    sink_url: str | None = None
    sink_max_failure_rate: float = 0.5
    handle_signals: bool = False
    baseline: Path | None = None
    cluster: str | None = None
    progress: ProgressCallback | None = None
    max_sandboxes: int | None = None
    sandbox_cleanup: bool = True
    shard: Shard | None = None
