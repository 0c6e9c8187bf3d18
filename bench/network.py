"""Network: each harness's openai provider against a local server that answers in 50 ms.

``bench/server.py`` (asyncio, raw HTTP/1.1 with keep-alive) runs on 127.0.0.1 for the
whole workload. For 50, 200 and 500 connections, the same task (``generate()`` then
``match()``, the server answering with the question) runs in a fresh process:

- assay: ``assay.eval(bench/tasks/assay_network.py, model="openai/bench",
  base_url=…, max_samples=C, max_connections=C)``;
- Inspect AI: ``inspect_ai.eval(bench/tasks/inspect_overhead.py@network,
  model="openai/bench", model_base_url=…, -M responses_api=false, max_connections=C,
  max_samples=C)`` (``responses_api=false``: Inspect sends unknown model names to the
  Responses API otherwise; every OpenAI-compatible server speaks chat completions).

Each gives samples/s over the eval call and its share of the limit C / latency (what a
harness with no cost of its own would reach), CPU seconds, and the server's own CPU per
request (from its ``/stats``), which shows whether the server was the bottleneck. assay's
runs take turns with the same task answered by a 50 ms timer instead of the server
(``network_nosocket``): the difference in CPU per sample is what the network path costs,
the rest is the harness's own.

    python bench/network.py [--connections 50,200,500] [--runs 1] [--samples 5000]
                            [--inspect-samples 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from _common import (
    BENCH,
    REPO,
    Row,
    checked,
    inspect_env,
    inspect_python,
    median,
    remove,
    run_child,
    run_process,
    scratch_dir,
    show_rows,
)

CONNECTIONS = (50, 200, 500)
LATENCY = 0.05
TARGET_RATIO = 20.0  # assay >= 20 x Inspect at 200 connections
TARGET_SHARE = {200: 0.8, 500: 0.5}  # issue 19: >= 3,200/s at 200, >= 5,000/s at 500
TARGET_CPU_MS = 0.25  # issue 19: harness CPU per sample at those connection counts
ASSAY_TASK = BENCH / "tasks" / "assay_network.py"
INSPECT_TASK = BENCH / "tasks" / "inspect_overhead.py"
INSPECT_CHILD = BENCH / "_inspect_child.py"
MODEL = "openai/bench"


class Server:
    """``bench/server.py`` in a subprocess, for the length of a ``with`` block."""

    def __init__(self, latency: float = LATENCY, faults: str = "") -> None:
        self.latency = latency
        self.faults = faults
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0

    def __enter__(self) -> Server:
        self.proc = subprocess.Popen(
            [
                *(sys.executable, str(BENCH / "server.py"), "--latency", str(self.latency)),
                *(("--faults", self.faults) if self.faults else ()),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().split()
        if len(line) != 2 or line[0] != "listening":
            raise RuntimeError(f"bench/server.py did not start: {line}")
        self.port = int(line[1])
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self, reset: bool = False) -> dict[str, Any]:
        """Requests served and CPU so far; *reset* starts a new count of open connections."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        url = f"http://127.0.0.1:{self.port}/stats" + ("/reset" if reset else "")
        with opener.open(url, timeout=10) as answer:
            return json.loads(answer.read())  # type: ignore[no-any-return]

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.communicate(timeout=10)


def assay_has_openai() -> bool:
    """Whether this assay has the ``openai/<model>`` provider (it is being written)."""
    code = (
        "from assay.model import get_model\n"
        "get_model('openai/bench', base_url='http://127.0.0.1:9/v1', api_key='sk-x')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=REPO)
    return proc.returncode == 0


def _assay_once(server: Server, connections: int, samples: int, base: Path) -> dict[str, Any]:
    log_dir = base / f"assay-net-{connections}"
    argv = ["task", str(ASSAY_TASK) + "@network", str(log_dir), str(samples), str(connections)]
    argv += ["--model", MODEL, "--model-base-url", server.base_url]
    env = {**inspect_env(), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    before = server.stats(reset=True)
    result = checked(run_child(argv, env=env), f"assay network at {connections} connections")
    after = server.stats()
    remove(log_dir)
    if result.report["status"] != "success":
        raise RuntimeError(f"assay network run failed: {result.report}")
    return _figures(result, samples, connections, before, after)


def _nosocket_once(connections: int, samples: int, base: Path) -> float:
    """CPU ms per sample of the same task with the answer from a 50 ms timer instead of
    the server (``network_nosocket``): the harness alone, as many trials waiting."""
    log_dir = base / f"assay-nosocket-{connections}"
    argv = ["task", f"{ASSAY_TASK}@network_nosocket", str(log_dir), str(samples)]
    argv.append(str(connections))
    env = {**inspect_env(), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    result = checked(run_child(argv, env=env), f"assay without a socket at {connections}")
    remove(log_dir)
    if result.report["status"] != "success":
        raise RuntimeError(f"assay run without a socket failed: {result.report}")
    return 1000.0 * float(result.report["cpu_s"]) / samples


def _inspect_once(server: Server, connections: int, samples: int, base: Path) -> dict[str, Any]:
    python = inspect_python()
    assert python is not None
    log_dir = base / f"inspect-net-{connections}"
    argv = [str(python), str(INSPECT_CHILD), "eval", f"{INSPECT_TASK}@network", str(log_dir)]
    argv += [str(samples), str(connections), "--model", MODEL]
    argv += ["--model-base-url", server.base_url, "-M", "responses_api=false"]
    before = server.stats(reset=True)
    result = checked(run_process(argv, inspect_env(log_dir)), f"Inspect at {connections}")
    after = server.stats()
    remove(log_dir)
    if result.report["status"] != "success":
        raise RuntimeError(f"Inspect network run failed: {result.report}")
    return _figures(result, samples, connections, before, after)


def _figures(
    result: Any, samples: int, connections: int, before: dict[str, Any], after: dict[str, Any]
) -> dict[str, Any]:
    rate = samples / result.report["total_s"]
    requests = after["requests"] - before["requests"]
    return {
        "samples": samples,
        "rate": rate,
        "flowing_rate": _flowing_rate(before, after),
        "share": rate / (connections / LATENCY),
        "cpu_s": result.report["cpu_s"],
        "cpu_ms_per_sample": 1000.0 * result.report["cpu_s"] / samples,
        "process_wall_s": result.wall,
        "maxrss_mb": result.maxrss_mb,
        "server_requests": requests,
        "server_cpu_us_per_request": 1e6 * (after["cpu_s"] - before["cpu_s"]) / max(requests, 1),
        "server_max_open": after["max_open"],
        "server_busy": (after["cpu_s"] - before["cpu_s"]) / result.wall,  # share of one core
    }


def _flowing_rate(before: dict[str, Any], after: dict[str, Any]) -> float:
    """Answers a second over the middle 80 % of this run's answers, by the server's
    clock: the rate while calls flow, without the run's start (task, plan) and end
    (scores, reports, seal), which at N = 5,000 take a third of the wall time."""
    times = after.get("answered_at", [])[len(before.get("answered_at", [])) :]
    low, high = len(times) // 10, len(times) - 1 - len(times) // 10
    if high <= low or times[high] <= times[low]:
        return float("nan")
    return (high - low) / (times[high] - times[low])


def measure(
    connections: tuple[int, ...] = CONNECTIONS,
    runs: int = 1,
    samples: int = 5_000,
    inspect_samples: int = 1_000,
    base: Path | None = None,
    progress: bool = True,
) -> list[Row]:
    """Both harnesses at each connection count; one row set per count."""
    folder = scratch_dir() if base is None else base
    has_assay, has_inspect = assay_has_openai(), inspect_python() is not None
    rows: list[Row] = []
    try:
        with Server() as server:
            for c in connections:
                a = i = None
                if has_assay:  # the network run and the one without a socket take turns
                    done = [
                        (
                            _assay_once(server, c, samples, folder),
                            _nosocket_once(c, samples, folder),
                        )
                        for _ in range(runs)
                    ]
                    a = _median([{**f, "nosocket_cpu_ms": ms} for f, ms in done])
                if has_inspect and inspect_samples > 0:  # 0: assay alone (A/B pairs)
                    i = _median(
                        [_inspect_once(server, c, inspect_samples, folder) for _ in range(runs)]
                    )
                if progress:
                    pairs = (("assay", a), ("Inspect", i))
                    shown = ", ".join(f"{k} {f['rate']:,.0f}/s" for k, f in pairs if f)
                    print(f"  network {c} connections: {shown or 'nothing ran'}", flush=True)
                rows.extend(_rows(c, a, i, has_assay))
    finally:
        if base is None:
            remove(folder)
    return rows


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    figures = {k: median(r[k] for r in runs) for k in runs[0]}
    figures["runs"] = len(runs)
    return figures


def _rows(c: int, a: dict[str, Any] | None, i: dict[str, Any] | None, has_assay: bool) -> list[Row]:
    name = f"network {c} connections"
    limit = c / LATENCY
    missing = "assay: not available (no openai provider in this assay yet)"
    note = missing if not has_assay else f"assay N={int(a['samples']):,}" if a else ""
    if i:
        note += f"; Inspect N={int(i['samples']):,}"
    rate = Row(
        name,
        f"samples/s (limit {limit:,.0f}/s)",
        a["rate"] if a else float("nan"),
        "/s",
        inspect=i["rate"] if i else None,
        note=note,
        extra={"assay": a, "inspect": i},
    )
    if c == 200:
        rate.gate_ratio(TARGET_RATIO)
    flowing = Row(
        name,
        "rate while answers flow (info)",
        a["flowing_rate"] if a else float("nan"),
        "/s",
        inspect=i["flowing_rate"] if i else None,
        note="the middle 80 % of the answers, by the server's clock: no run start or end",
    )
    share = Row(
        name,
        "share of the limit",
        100.0 * a["share"] if a else float("nan"),
        "% of limit",
        inspect=100.0 * i["share"] if i else None,
    )
    cpu = Row(
        name,
        "harness CPU per sample",
        a["cpu_ms_per_sample"] if a else float("nan"),
        "ms",
        inspect=i["cpu_ms_per_sample"] if i else None,
    )
    if c in TARGET_SHARE:  # issue 19, item 2
        wanted = TARGET_SHARE[c]
        share.target = f">= {100 * wanted:.0f} % ({wanted * limit:,.0f}/s)"
        share.ok = a is not None and a["share"] >= wanted
        cpu.target = f"<= {TARGET_CPU_MS} ms"
        cpu.ok = a is not None and a["cpu_ms_per_sample"] <= TARGET_CPU_MS
    harness = Row(
        name,
        "harness CPU per sample, no socket (info)",
        a["nosocket_cpu_ms"] if a else float("nan"),
        "ms",
        note="the same task answered by a 50 ms timer instead of the server: what the "
        "network path adds is the row above minus this one",
    )
    served = [f for f in (a, i) if f]
    server = Row(
        name,
        "server CPU per request (info)",
        served[0]["server_cpu_us_per_request"] if served else float("nan"),
        "µs",
        note="; ".join(
            f"{k}: {f['server_cpu_us_per_request']:.0f} µs/request, server busy "
            f"{100 * f['server_busy']:.1f}% of one core, "
            f"{int(f['server_max_open'])} connections open at most"
            for k, f in (("assay run", a), ("Inspect run", i))
            if f
        ),
    )
    return [rate, flowing, share, cpu, harness, server]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", default=",".join(map(str, CONNECTIONS)))
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--samples", type=int, default=5_000, help="samples per assay run")
    parser.add_argument("--inspect-samples", type=int, default=1_000)
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    counts = tuple(int(c) for c in args.connections.split(","))
    rows = measure(counts, args.runs, args.samples, args.inspect_samples)
    show_rows(rows, args.json)


if __name__ == "__main__":
    main()
