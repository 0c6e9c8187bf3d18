"""Event sinks against a real HTTP collector on 127.0.0.1, and ``--dry-run``.

The run directory always keeps the whole log; an HTTP sink streams the same lines in
JSONL batches, keeps refused batches in ``RUN/sink-fallback.jsonl``, and stops the run
once too many batches fail. A dry run prints the events and writes nothing anywhere.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from assay.errors import RunError
from assay.evidence import verify_run
from assay.evidence._framed import read_evidence
from assay.evidence._log import events_in
from tests.helpers import SHIPPING, error_line, read_jsonl, run_cli, run_spec_at, simple_spec

FALLBACK = "sink-fallback.jsonl"


class Collector:
    """A JSONL batch collector; ``refuse(k)`` says whether the k-th batch (from 1) gets a 500."""

    def __init__(self, refuse: Callable[[int], bool]) -> None:
        self.refuse = refuse
        self.accepted: list[bytes] = []
        self.refused: list[bytes] = []
        self.content_types: set[str] = set()
        self._lock = threading.Lock()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                with collector._lock:
                    number = len(collector.accepted) + len(collector.refused) + 1
                    collector.content_types.add(self.headers.get("content-type", ""))
                    refused = collector.refuse(number)
                    (collector.refused if refused else collector.accepted).append(body)
                self.send_response(500 if refused else 200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/events"

    @property
    def batches(self) -> int:
        return len(self.accepted) + len(self.refused)

    def __enter__(self) -> Collector:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def collector_factory() -> Iterator[Callable[[Callable[[int], bool]], Collector]]:
    started: list[Collector] = []

    def start(refuse: Callable[[int], bool]) -> Collector:
        collector = Collector(refuse).__enter__()
        started.append(collector)
        return collector

    yield start
    for collector in started:
        collector.__exit__()


def many_samples(count: int) -> list[dict[str, str]]:
    return [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(count)]


def test_collector_receives_exactly_the_logged_lines(
    tmp_path: Path, collector_factory: Callable[[Callable[[int], bool]], Collector]
) -> None:
    collector = collector_factory(lambda _: False)
    spec = simple_spec(tmp_path / "spec", samples=many_samples(800))  # ~1600 lines
    out = tmp_path / "run"
    run_spec_at(spec, out, sink_url=collector.url)
    logged = read_evidence(out / "events.jsonl")
    assert collector.batches >= 3
    assert b"".join(collector.accepted) == logged
    assert not (out / FALLBACK).exists()
    assert collector.content_types == {"application/x-ndjson"}
    assert verify_run(out).ok


def test_refused_batches_fall_back_and_the_run_completes(
    tmp_path: Path, collector_factory: Callable[[Callable[[int], bool]], Collector]
) -> None:
    collector = collector_factory(lambda k: k in (2, 5))
    spec = simple_spec(tmp_path / "spec", samples=many_samples(3000))
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out, sink_url=collector.url)
    assert outcome.gate.status == "passed"
    assert len(collector.refused) == 2 and collector.batches > 10
    fallback = (out / FALLBACK).read_bytes()
    assert fallback == b"".join(collector.refused)
    logged = read_evidence(out / "events.jsonl").splitlines()
    streamed = b"".join(collector.accepted).splitlines() + fallback.splitlines()
    assert sorted(streamed) == sorted(logged)  # every line exactly once, bytes unchanged
    assert verify_run(out).ok  # the fallback file is not evidence and does not disturb it


def test_a_failing_collector_stops_the_run(
    tmp_path: Path, collector_factory: Callable[[Callable[[int], bool]], Collector]
) -> None:
    collector = collector_factory(lambda _: True)
    spec = simple_spec(tmp_path / "spec", samples=many_samples(3000))
    out = tmp_path / "run"
    with pytest.raises(RunError, match="event sink"):
        run_spec_at(spec, out, sink_url=collector.url)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] != "complete"
    assert len(read_jsonl(out / "bundles.jsonl")) < 3000  # it stopped early
    assert (out / FALLBACK).read_bytes() == b"".join(collector.refused)
    assert not collector.accepted


def test_a_failing_collector_raises_run_error(
    tmp_path: Path, collector_factory: Callable[[Callable[[int], bool]], Collector]
) -> None:
    collector = collector_factory(lambda _: True)
    spec = simple_spec(tmp_path / "spec", samples=many_samples(3000))
    with pytest.raises(RunError, match="event sink"):
        run_spec_at(spec, tmp_path / "run", sink_url=collector.url)


@pytest.mark.doc(
    "docs/cli.md",
    "A run that stops on a fatal error while its trials run (the event sink failing,",
)
def test_a_failing_collector_exits_5_via_the_cli(
    tmp_path: Path, collector_factory: Callable[[Callable[[int], bool]], Collector]
) -> None:
    collector = collector_factory(lambda _: True)
    spec = simple_spec(tmp_path / "spec", samples=many_samples(3000))
    run = tmp_path / "run"
    proc = run_cli("run", spec, "--output", run, "--sink", collector.url)
    assert proc.returncode == 5, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and "event sink" in proc.stderr
    # stopped, yet judged and reported: the gate says so and names the cause
    (gate,) = [line for line in proc.stdout.splitlines() if line.startswith("gate:")]
    assert gate.startswith("gate: stopped: ") and "event sink" in gate
    report = json.loads((run / "report.json").read_text())
    assert report["gate"]["status"] == "stopped" and "event sink" in report["gate"]["reasons"][0]
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"
    assert run_cli("verify", run).returncode == 3  # consistent, and unfinished


# -- the failure-rate threshold, through the command line --------------------------------


def every_line_once(run: Path, collector: Collector) -> None:
    """The run's log is whole, and each line reached the collector or the fallback file
    exactly once, bytes unchanged."""
    fallback = (run / FALLBACK).read_bytes()
    assert fallback == b"".join(collector.refused)
    logged = read_evidence(run / "events.jsonl").splitlines()
    streamed = b"".join(collector.accepted).splitlines() + fallback.splitlines()
    assert sorted(streamed) == sorted(logged)


def sink_run(tmp_path: Path, collector: Collector, *rate: str) -> subprocess.CompletedProcess[str]:
    spec = simple_spec(tmp_path / "spec", samples=many_samples(3000))  # about 13 batches
    return run_cli("run", spec, "-o", tmp_path / "run", "--sink", collector.url, *rate)


@pytest.mark.doc(
    "docs/cli.md",
    "`--sink URL` — also POST event lines, in JSONL batches of 500, to an HTTP collector.",
    "A batch the collector refuses is appended to `RUN/sink-fallback.jsonl`",
    "(default 0.5)",
    "The run directory always keeps the complete log.",
)
@pytest.mark.doc(
    "docs/evidence.md",
    "Every file in the run folder must be one assay writes:",  # sink-fallback.jsonl is one
)
def test_half_the_batches_refused_is_not_over_the_default_rate(
    tmp_path: Path, collector_factory: Callable[[Callable[[int], bool]], Collector]
) -> None:
    """Every second batch refused: never more than half, so the run finishes."""
    collector = collector_factory(lambda k: k % 2 == 0)
    proc = sink_run(tmp_path, collector)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    run = tmp_path / "run"
    assert len(collector.refused) == collector.batches // 2 >= 6
    sizes = sorted(body.count(b"\n") for body in collector.accepted + collector.refused)
    assert set(sizes[1:]) == {500} and 0 < sizes[0] <= 500  # only the last one is short
    every_line_once(run, collector)
    assert verify_run(run).ok


@pytest.mark.doc(
    "docs/cli.md",
    "once more than `--sink-max-failure-rate` (default 0.5) of at least 4 batches have "
    "failed, the run stops with exit 5",
)
def test_over_the_given_rate_the_run_stops_with_exit_5(
    tmp_path: Path, collector_factory: Callable[[Callable[[int], bool]], Collector]
) -> None:
    collector = collector_factory(lambda k: k % 2 == 0)
    proc = sink_run(tmp_path, collector, "--sink-max-failure-rate", "0.3")
    assert proc.returncode == 5, proc.stdout + proc.stderr
    line = error_line(proc)
    found = re.fullmatch(
        rf"assay: event sink {re.escape(collector.url)} failed for (\d+) of (\d+) batches, "
        rf"over the limit of 0\.3 — check the collector at {re.escape(collector.url)}; "
        rf"failed batches were kept in {re.escape(str(tmp_path / 'run' / FALLBACK))}",
        line,
    )
    assert found, line
    failed, total = int(found[1]), int(found[2])
    assert total >= 4 and failed / total > 0.3
    run = tmp_path / "run"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] != "complete"
    assert len(read_jsonl(run / "bundles.jsonl")) < 3000  # it stopped early
    every_line_once(run, collector)


@pytest.mark.doc("docs/cli.md", "of at least 4 batches")
def test_fewer_than_4_batches_never_stop_the_run(
    tmp_path: Path, collector_factory: Callable[[Callable[[int], bool]], Collector]
) -> None:
    """The first batch refused: 1 of 1, 2 and 3 is over the rate, but too few batches to
    judge by; from the fourth on, 1 in 4 or fewer is under it."""
    collector = collector_factory(lambda k: k == 1)
    proc = sink_run(tmp_path, collector, "--sink-max-failure-rate", "0.3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(collector.refused) == 1 and collector.batches > 4
    every_line_once(tmp_path / "run", collector)


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.doc(
    "docs/cli.md", "`--dry-run` — run and print every event line to stdout; write nothing."
)
@pytest.mark.parametrize("with_output", [False, True], ids=["no-output", "output-given"])
def test_dry_run_prints_events_and_writes_nothing(tmp_path: Path, with_output: bool) -> None:
    spec = tmp_path / "spec"
    shutil.copytree(SHIPPING, spec)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    before = _tree(spec)
    args: list[str | Path] = ["run", spec / "eval.yaml", "--dry-run"]
    if with_output:
        args += ["--output", tmp_path / "out"]
    proc = run_cli(*args, cwd=cwd)
    assert proc.returncode == 1, proc.stderr  # the shipping gate fails, as in a real run
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    events = [event for line in lines for event in events_in(line)]
    kinds = {event["type"] for event in events}
    assert {"run_started", "trial_started", "sampling", "match", "gate"} <= kinds
    assert len({e["trial"] for e in events if e["trial"]}) == 6
    assert list(cwd.iterdir()) == []  # no runs/ folder, nothing else
    assert _tree(spec) == before  # the spec folder is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "spec"]
