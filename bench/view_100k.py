"""The viewer on a 100,000-trial run: how long each page takes, and the server's memory.

A run of the overhead workload (made here, or given with ``--run``) and a one-trial run
whose trial records 10,000 events are served by ``assay view DIR --port 0 --no-browser``
in a child process; each page is fetched over HTTP (httpx, one connection) and timed
from request to last byte. The first fetch of the sample table finds no table yet: its
rows are read through the indexes while the run's compact table is built in the
background (one pass over plan, bundles and scores, each hashed against the manifest); a
filtered page then waits for that build ("first time"); every later page reads the table
("warm", the median of ``--repeat`` fetches).
The server's peak RSS is read from ``/proc/PID/status`` (VmHWM) at the end.

Issue 16 asks: first page of the sample table <= 200 ms, a trial with 10,000 events
opens in <= 1 s, the server under 150 MB on a 100,000-trial run.

    python bench/view_100k.py [--run RUN] [--samples 100000] [--repeat 5] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

CHATTY = """
from assay.evidence import record_event


def answer(text):
    for i in range(10_000):
        record_event("extra", {"step": i})
    return text
"""

CHATTY_SPEC = """evaluation: chatty
dataset: data.jsonl
targets:
  - id: chatty
    callable: chatty:answer
scorers:
  - id: exact
    type: exact
"""


def make_big_run(base: Path, samples: int) -> Path:
    """The overhead workload (one target answering at once) at *samples* trials."""
    from evidence import make_run

    return make_run(base, samples)


def make_chatty_run(base: Path, runs: Path) -> Path:
    """One trial that records 10,000 events, run with the CLI into *runs*/chatty."""
    folder = base / "chatty-spec"
    folder.mkdir(parents=True)
    (folder / "chatty.py").write_text(CHATTY, encoding="utf-8")
    (folder / "data.jsonl").write_text('{"id": "one", "input": "x", "expected": "x"}\n')
    (folder / "eval.yaml").write_text(CHATTY_SPEC, encoding="utf-8")
    out = runs / "chatty"
    subprocess.run(
        [sys.executable, "-m", "assay", "run", str(folder / "eval.yaml"), "-o", str(out)],
        check=True,
        capture_output=True,
    )
    return out


def first_trial(run: Path) -> str:
    with open(run / "plan.jsonl", "rb") as handle:
        return str(json.loads(handle.readline())["trial_id"])


def middle_trial(run: Path) -> str:
    lines = (run / "plan.jsonl").read_bytes().splitlines()
    return str(json.loads(lines[len(lines) // 2])["trial_id"])


def start_viewer(runs: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", "view", str(runs), "--port", "0", "--no-browser"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, line.split("serving on ")[1].split()[0]


def timed_get(client: httpx.Client, path: str) -> float:
    start = time.perf_counter()
    response = client.get(path)
    elapsed = time.perf_counter() - start
    if response.status_code != 200:
        raise SystemExit(f"{path}: HTTP {response.status_code}: {response.text[:200]}")
    return elapsed * 1000


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(runs: Path, big: str, chatty: str, repeat: int) -> dict[str, Any]:
    proc, url = start_viewer(runs)
    figures: dict[str, Any] = {}
    try:
        with httpx.Client(base_url=url, timeout=600) as client:
            trial = middle_trial(runs / big)
            table = f"/runs/{big}/trials"
            figures["run list (ms)"] = timed_get(client, "/")
            figures["sample table, first page, before the table (through the indexes) (ms)"] = (
                timed_get(client, table)
            )
            figures["sample table, filtered, first time: waits for the table (ms)"] = timed_get(
                client, table + "?status=failed"
            )
            figures["trial page, first: waits for the event spans (ms)"] = timed_get(
                client, f"/runs/{big}/trials/{trial}"
            )
            warm = {
                "sample table, first page": f"/runs/{big}/trials",
                "sample table, page 1,000": f"/runs/{big}/trials?page=1000",
                "sample table, sorted by sample, descending": f"/runs/{big}/trials?sort=-sample",
                "sample table, failed only": f"/runs/{big}/trials?status=failed",
                "sample table, search (first page of hits)": f"/runs/{big}/trials?q=question+4",
                "run page": f"/runs/{big}/",
                "trial page (middle of the run)": f"/runs/{big}/trials/{trial}",
                "trial page, 10,000 events": f"/runs/chatty/trials/{first_trial(runs / chatty)}",
            }
            for label, path in warm.items():
                times = [timed_get(client, path) for _ in range(repeat)]
                figures[f"{label} (ms, median of {repeat})"] = statistics.median(times)
        figures["server peak RSS (MB)"] = peak_rss_mb(proc.pid)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="an existing run (else one is made)")
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="assay-bench-view-"))
    try:
        runs = base / "runs"
        runs.mkdir()
        made = time.perf_counter()
        source = args.run or make_big_run(base / "big", args.samples)
        os.symlink(source.resolve(), runs / "big")
        make_chatty_run(base, runs)
        print(f"runs ready in {time.perf_counter() - made:.1f} s", file=sys.stderr)
        figures = measure(runs, "big", "chatty", args.repeat)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    width = max(map(len, figures))
    for label, value in figures.items():
        print(f"{label:<{width}}  {value:10.1f}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
