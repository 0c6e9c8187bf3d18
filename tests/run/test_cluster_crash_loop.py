"""A ``protocol: jsonl`` program that can never answer, run on a Dask cluster: its
worker's crash loop stops the run with the local run's one line (exit 5), and the
workers count the resume's crash loop apart from the stopped run's, instead of refusing
it for their life."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import RunError
from assay.run._cluster import stopped_by
from assay.target import InfrastructureError
from tests.dask_cluster import DaskCluster
from tests.helpers import read_jsonl, run_cli
from tests.target._persistent import program_spec, sample_list
from tests.target.test_persistent_crash_loop import CRASH_LOOP, FAST_RETRY, NEEDS_WEIGHTS

distributed = pytest.importorskip("distributed")


@pytest.mark.doc(
    "docs/cluster.md",
    "stops the run as it does locally: the first worker to count its crash loop sends the "
    "error back, and the run stops with the same one line, exit 5. A worker keeps its "
    "processes from run to run but counts each run's crash loop apart, so `assay resume "
    "RUN --cluster ADDRESS` starts the program again once it can answer.",
)
def test_a_crash_loop_on_a_worker_stops_the_run_and_resume_finishes_it(
    cluster: DaskCluster, tmp_path: Path
) -> None:
    weights = tmp_path / "weights.bin"  # outside the spec: the spec's digest is unchanged
    samples = sample_list(*range(30))
    spec, _ = program_spec(tmp_path, NEEDS_WEIGHTS, samples, retry=FAST_RETRY, args=[str(weights)])
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "2", "--cluster", cluster.address)
    # before: each worker's RunError became a per-call "cluster" failure, the run went
    # on to the end with every trial blocked (exit 3) and never said why
    assert proc.returncode == 5, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()  # one line, no traceback
    assert line.startswith(f"assay: target t: the program's last {CRASH_LOOP} starts in a row")
    assert "weights.bin missing" in line and f"assay resume {run}" in line

    weights.write_bytes(b"")  # the program can answer now
    resumed = run_cli("resume", run, "--cluster", cluster.address)
    # a worker that kept counting the stopped run's failures refused at once (exit 5)
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr  # the blocked ones stay
    status = {r["sample_id"]: r["status"] for r in read_jsonl(run / "scores.jsonl")}
    assert len(status) == 30 and "passed" in status.values()
    assert run_cli("verify", run).returncode == 0


def test_a_stop_this_assay_cannot_say_is_the_calls_failure_not_a_traceback() -> None:
    known = stopped_by(
        ("run.program_crash_loop", {"target": "t", "count": 10, "last": "x", "path": "RUN"})
    )
    assert isinstance(known, RunError) and "target t" in known.one_line()
    for stop in [("no.such.key", {}), ("run.program_crash_loop", {"target": "t"})]:
        failure = stopped_by(stop)
        assert isinstance(failure, InfrastructureError), stop
        assert failure.reason == "cluster" and "cannot say" in failure.detail
