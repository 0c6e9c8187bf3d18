"""A Python task's model on a real Dask cluster (``dask scheduler`` and ``dask worker
--nworkers 2`` started as programs, on 127.0.0.1): where its connections, its server
and its prices live.

The task's solver puts its worker's process id in the prompt, so the OpenAI-compatible
server on 127.0.0.1 counts the requests in flight from each worker.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.dask_cluster import DaskCluster
from tests.helpers import log_events, results_view, run_cli, write_module
from tests.servers.openai_compat import Action, OpenAICompatServer, status

distributed = pytest.importorskip("distributed")

SAMPLES = 16
TASK = """
import os

from assay import Sample, Task, generate, match, solver, task
from assay.model import system_message


@solver
def tagged():
    async def solve(state, generate):
        state.messages.insert(0, system_message(f"pid {os.getpid()}"))
        return await generate(state, max_retries=%d)
    return solve


@task
def tagged_task():
    return Task(
        dataset=[Sample(input=f"say {i}", target=f"say {i}", id=f"s{i:02d}") for i in range(%d)],
        solver=[tagged()],
        scorer=match(),
        model="openai/counted",
    )
"""


def _client(body: dict[str, object]) -> str:
    """The worker a request comes from: the process id in its system message."""
    messages = body.get("messages") or []
    first = messages[0] if isinstance(messages, list) and messages else {}
    return str(first.get("content", "")) if isinstance(first, dict) else ""


def _task(folder: Path, samples: int = SAMPLES, retries: int = 5) -> str:
    path = write_module(folder, f"tagged_{folder.parent.name}", TASK % (retries, samples))
    return f"{path}@tagged_task"


def _on(server: OpenAICompatServer) -> tuple[str, ...]:
    return ("--model-base-url", server.url)


@pytest.mark.doc("docs/cli.md", "`--max-connections` holds on each worker, `-j` over them all")
def test_connections_are_per_worker_and_j_caps_them_all(
    cluster: DaskCluster, tmp_path: Path
) -> None:
    """``--max-connections 2``: the 16 trials in flight (``-j 16``) go to both workers,
    and each has 2 calls in flight, never more; ``-j 3`` with the default 10 connections
    a worker: never more than 3 calls in flight over the whole cluster."""
    task = _task(tmp_path / "task")
    with OpenAICompatServer(latency=0.2, client_of=_client) as server:
        args = ("-j", "16", "--max-connections", "2", "--cluster", cluster.address)
        proc = run_cli("run", task, "-o", tmp_path / "per-worker", *_on(server), *args)
        assert proc.returncode == 0, proc.stderr
        per_worker = {k: v for k, v in server.max_in_flight_by.items() if k}
    assert len(server.requests) == SAMPLES
    assert _pids(server) <= cluster.worker_pids | _now(cluster)  # calls from the workers
    # the 16 trials spread over both workers, each with 2 calls in flight, never more
    assert sorted(per_worker.values()) == [2, 2], per_worker
    assert server.max_in_flight == 4, server.max_in_flight

    with OpenAICompatServer(latency=0.2, client_of=_client) as server:
        args = ("-j", "3", "--cluster", cluster.address)
        proc = run_cli("run", task, "-o", tmp_path / "capped", *_on(server), *args)
        assert proc.returncode == 0, proc.stderr
    assert len(server.requests) == SAMPLES
    assert server.max_in_flight == 3, server.max_in_flight  # the cap over every worker


def test_a_workers_429s_lower_its_own_adaptive_limit_only(
    cluster: DaskCluster, tmp_path: Path
) -> None:
    """The server refuses the first 20 calls of the first worker it hears from (429,
    ``Retry-After: 0``; more than half of a window of 32 calls), a burst: that worker's
    model halves its limit; the other
    worker's, which made its calls too (``-j 1``: each trial a chunk of its own, and
    the workers take turns), stays where it was."""
    import cloudpickle

    task = _task(tmp_path / "task", samples=8, retries=30)
    refused: dict[str, int] = {}

    def refuse_first_worker(body: dict[str, Any]) -> Action | None:
        client = _client(body)
        refused.setdefault(client, 20 if not refused else 0)
        if refused[client]:
            refused[client] -= 1
            return status(429, retry_after="0")
        return None

    with OpenAICompatServer(client_of=_client, action_for=refuse_first_worker) as server:
        args = ("-j", "1", "--max-connections", "4", "--cluster", cluster.address)
        proc = run_cli("run", task, "-o", tmp_path / "run", *_on(server), *args)
        assert proc.returncode == 0, proc.stderr
        url = server.url
    assert len(refused) == 2, refused  # both workers called the model
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        with distributed.Client(cluster.address, timeout=30) as client:
            gates = client.run(_gate_of, url)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    halved = {f"pid {pid}": decreases for pid, decreases, _ in gates.values() if pid}
    first = next(iter(refused))
    assert halved == {client: (1 if client == first else 0) for client in refused}, gates


def _gate_of(url: str) -> tuple[int, int, float]:
    """On a worker: its process id and the adaptive gate (halvings, limit) of the model
    the task rebuilt there calls at *url*; (0, 0, 0.0) if it has none."""
    import os

    from assay.run import _cluster_worker

    for caller in _cluster_worker._targets.values():
        model = getattr(getattr(caller, "target", None), "model", None)
        if model is not None and model.endpoint == url:
            return os.getpid(), model.gate.decreases, model.gate.limit
    return 0, 0, 0.0


def _pids(server: OpenAICompatServer) -> set[int]:
    return {int(_client(seen.body).split()[-1]) for seen in server.requests}


@pytest.mark.doc("docs/cli.md", "its calls are priced from the driver's `--prices` file")
def test_a_price_file_prices_the_workers_calls_as_a_local_run(
    cluster: DaskCluster, tmp_path: Path
) -> None:
    """``--prices FILE`` is given to the driver only: the calls made on the workers are
    priced from it, and each call's cost, and the run's, equal a local run's."""
    task = _task(tmp_path / "task", samples=4)
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai/counted: {input: 1000.0, output: 2000.0}\n")
    with OpenAICompatServer() as server:
        on = ("--prices", prices, *_on(server))
        local = run_cli("run", task, "-o", tmp_path / "local", *on)
        assert local.returncode == 0, local.stderr
        remote = run_cli("run", task, "-o", tmp_path / "cluster", *on, "--cluster", cluster.address)
        assert remote.returncode == 0, remote.stderr
    costs = {run: _costs(tmp_path / run) for run in ("local", "cluster")}
    assert len(costs["local"]) == 4 and None not in costs["local"], costs
    assert costs["cluster"] == costs["local"], costs
    assert results_view(tmp_path / "cluster") == results_view(tmp_path / "local")


def _costs(run: Path) -> list[float | None]:
    """Each model call's cost, as its ``sampling`` event records it, in sample order."""
    events = log_events(run)
    sample_of = {e["trial"]: e["data"]["sample_id"] for e in events if e["type"] == "trial_started"}
    calls = [
        (sample_of[e["trial"]], e["data"]["cost"])
        for e in events
        if e["type"] == "sampling" and "model" in e["data"]
    ]
    return [cost for _, cost in sorted(calls)]


LOCAL_TASK = """
import os

import assay
from assay import Sample, Task, generate, match, solver, task
from assay.model import GenerateConfig
from assay.model._local_server import running


@solver
def where():
    async def solve(state, generate):
        state = await generate(state)
        assay.record_event("where", {"pid": os.getpid(), "servers": running()})
        return state
    return solve


@task
def small():
    return Task(
        dataset=[Sample(input=f"Say {i}.", target=str(i), id=f"s{i}") for i in range(6)],
        solver=[where()],
        scorer=match(),
        model="local/smollm2",
        config=GenerateConfig(max_tokens=2, temperature=0.0),
    )
"""
DRIVER = """
import json
import sys

from assay.pipeline import eval as run_eval

(result,) = run_eval(sys.argv[1], cluster=sys.argv[2], log_dir=sys.argv[3], max_samples=1)
print(json.dumps({"status": result.status, "xllamacpp": "xllamacpp" in sys.modules}))
"""


def test_a_local_model_starts_one_server_per_worker(cluster: DaskCluster, tmp_path: Path) -> None:
    """SmolLM2 on two workers, six trials, one at a time: each worker starts one
    llama.cpp server and every trial there uses it; the driver never loads llama.cpp."""
    pytest.importorskip("xllamacpp")
    task = write_module(tmp_path / "task", f"small_{tmp_path.name}", LOCAL_TASK)
    driver = subprocess.run(
        [sys.executable, "-c", DRIVER, f"{task}@small", cluster.address, str(tmp_path / "runs")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert driver.returncode == 0, driver.stderr
    said = json.loads(driver.stdout.splitlines()[-1])
    assert said == {"status": "success", "xllamacpp": False}, said
    (run,) = (tmp_path / "runs").iterdir()
    where = [e["data"] for e in log_events(run) if e["type"] == "where"]
    assert len(where) == 6
    servers: dict[int, set[str]] = {}
    for seen in where:
        assert len(seen["servers"]) == 1, seen  # one server running in that worker
        servers.setdefault(seen["pid"], set()).update(seen["servers"])
    # -j 1: each trial is a chunk of its own, and the workers take turns: both run some
    assert len(servers) == 2 and set(servers) <= cluster.worker_pids | _now(cluster), servers
    assert all(len(urls) == 1 for urls in servers.values()), servers  # not one per trial


def _now(cluster: DaskCluster) -> set[int]:
    from tests.dask_cluster import worker_pids

    return worker_pids(cluster.address)
