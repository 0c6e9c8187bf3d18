"""Network: assay's ``openai/<model>`` provider against a local server answering in 50 ms.

Issue 4's target: 200 connections sustain >= 1,000 samples/s on this 2-core machine.
``bench/_openai_server.py`` runs in its own process for the whole workload. For each
number of connections C (50, 200, 500) a Python task (``generate()`` then ``match()``,
the server answering with the question) runs as the user runs it, in a fresh process::

    assay run task.py@network -T samples=N --model openai/bench \\
        --model-base-url http://127.0.0.1:PORT/v1 -j C --max-connections C

Figures per run: samples/s sustained (the middle 80% of trials, from the
``trial_finished`` times in the run's own events) and over the whole process (start-up,
imports and reports included); C / 50 ms, the rate a harness with no cost of its own
would reach; the client's CPU per sample (its rusage); the server's CPU per request and
its share of a core (from ``/stats``), which shows whether the server was the bound.

    python bench/network_assay.py [--connections 50,200,500] [--samples 10000]
                                  [--transport aiohttp,httpx] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from _common import BENCH, REPO, Row, assay_command, print_table, remove, scratch_dir

LATENCY = 0.05
TARGET = 1000.0  # samples/s at 200 connections (issue 4)
TASK_PY = '''"""The network workload: N questions to the model named on the command line."""

from assay import Sample, Task, generate, match, task


@task
def network(samples: int = 1000) -> Task:
    dataset = [
        Sample(input=f"question {i}", target=f"question {i}", id=f"s{i:07d}")
        for i in range(samples)
    ]
    return Task(dataset=dataset, solver=[generate()], scorer=match())
'''


class Server:
    """``bench/_openai_server.py`` in its own process, for the length of a ``with``."""

    def __enter__(self) -> Server:
        script = str(BENCH / "_openai_server.py")
        self.proc = subprocess.Popen(
            [sys.executable, script, "--latency", str(LATENCY)], stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        words = self.proc.stdout.readline().split()
        if len(words) != 2 or words[0] != "listening":
            raise RuntimeError(f"the bench server did not start: {words}")
        self.port = int(words[1])
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self, reset: bool = False) -> dict[str, Any]:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        url = f"http://127.0.0.1:{self.port}/stats" + ("/reset" if reset else "")
        with opener.open(url, timeout=10) as answer:
            return dict(json.loads(answer.read()))

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def sustained_rate(run_dir: Path) -> float:
    """Samples/s over the middle 80% of trials, from the run's own event times."""
    times = []
    with open(run_dir / "events.jsonl", "rb") as events:
        for line in events:
            if b'"type":"trial_finished"' in line:
                times.append(json.loads(line)["at"])
    times.sort()
    low, high = len(times) // 10, len(times) * 9 // 10
    return (high - low) / (times[high - 1] - times[low]) if high - 1 > low else 0.0


def one_run(
    server: Server, connections: int, samples: int, transport: str, scratch: Path
) -> dict[str, Any]:
    """One ``assay run`` in a fresh process; its figures."""
    logs = scratch / f"logs-{connections}-{transport}"
    argv = [*assay_command(), "run", f"{scratch / 'task.py'}@network", "-T", f"samples={samples}"]
    argv += ["--model", "openai/bench", "--model-base-url", server.base_url]
    argv += ["-j", str(connections), "--max-connections", str(connections)]
    argv += ["-M", f"transport={transport}", "--log-dir", str(logs)]
    before = server.stats(reset=True)
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=REPO)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    after = server.stats()
    if os.waitstatus_to_exitcode(status) != 0 or b"gate: passed" not in out:
        raise RuntimeError(f"the run at {connections} failed:\n{out.decode()[-2000:]}")
    (run_dir,) = logs.iterdir()
    rate = sustained_rate(run_dir)
    remove(logs)
    cpu = usage.ru_utime + usage.ru_stime
    requests = after["requests"] - before["requests"]
    server_cpu = after["cpu_s"] - before["cpu_s"]
    return {
        "connections": connections,
        "transport": transport,
        "samples": samples,
        "sustained": rate,
        "whole": samples / wall,
        "ideal": connections / LATENCY,
        "cpu_ms": 1000 * cpu / samples,
        "maxrss_mb": usage.ru_maxrss / 1024,
        "server_ms": 1000 * server_cpu / max(1, requests),
        "server_core": server_cpu / wall,
        "requests": requests,
        "max_open": after["max_open"],
    }


def rows_of(result: dict[str, Any]) -> list[Row]:
    c, t = result["connections"], result["transport"]
    workload = f"network C={c} ({t})"
    gated = c == 200
    ok = result["sustained"] >= TARGET if gated else None
    note = (
        f"{100 * result['sustained'] / result['ideal']:.0f}% of C/50ms = {result['ideal']:,.0f}/s;"
        f" {result['requests']} requests, {result['max_open']} connections open at most"
    )
    return [
        Row(workload, "samples/s sustained", result["sustained"], "/s", "≥ 1,000" if gated else "",
            ok, note),
        Row(workload, "samples/s whole process", result["whole"], "/s"),
        Row(workload, "client CPU per sample", result["cpu_ms"], "ms",
            note=f"peak RSS {result['maxrss_mb']:.0f} MB"),
        Row(workload, "server CPU per request", result["server_ms"], "ms",
            note=f"{result['server_core']:.2f} of a core"),
    ]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--connections", default="50,200,500")
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--transport", default="aiohttp", help="aiohttp, httpx or both")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    scratch = scratch_dir()
    (scratch / "task.py").write_text(TASK_PY, encoding="utf-8")
    results = []
    try:
        with Server() as server:
            for transport in args.transport.split(","):
                for connections in (int(c) for c in args.connections.split(",")):
                    results.append(one_run(server, connections, args.samples, transport, scratch))
                    print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    finally:
        remove(scratch)
    rows = [row for result in results for row in rows_of(result)]
    print_table(rows, markdown=args.markdown)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0 if all(row.ok is not False for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
