"""The measured side of a bench: one operation in a fresh process, timings as one JSON line.

    python bench/_child.py run SPEC OUT [--max-concurrency K] [--patch NAME,...]
    python bench/_child.py task FILE@NAME LOG_DIR SAMPLES CONNECTIONS [--model M]
                                [--model-base-url URL]
    python bench/_child.py verify RUN
    python bench/_child.py rescore RUN

The parent (``_common.run_child``) adds what only the kernel knows: the whole process's
peak RSS and CPU time.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

# Run as ``python bench/_child.py``, the bench folder is sys.path[0]; drop it so none of
# the bench scripts' names can shadow a module that assay or its dependencies import.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _children_cpu() -> float:
    """CPU of reaped child processes (verify's event-chain worker)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(spec_path: str, out: str, concurrency: int) -> dict[str, object]:
    t0 = time.perf_counter()
    from assay.pipeline import RunOptions, run_spec
    from assay.spec import load_spec

    t1, c1 = time.perf_counter(), _cpu()
    loaded = load_spec(Path(spec_path))
    t2 = time.perf_counter()
    outcome = run_spec(loaded, RunOptions(output=Path(out), max_concurrency=concurrency))
    t3, c3 = time.perf_counter(), _cpu()
    return {
        "import_s": t1 - t0,
        "load_s": t2 - t1,
        "run_s": t3 - t2,
        "total_s": t3 - t1,  # load + run: spec, plan, trials, evidence, scores, gate, reports
        "cpu_s": c3 - c1,
        "trials": outcome.report.planned,
        "gate": outcome.gate.status,
    }


def _task(argv: list[str]) -> dict[str, object]:
    """The Python task path: ``assay.eval`` of a task file, as ``assay run file.py`` does."""
    task, log_dir, samples, connections, *rest = argv
    model, model_args, attempts, gauge = None, {}, 1, None
    while rest:
        flag, value, *rest = rest
        if flag == "--model":
            model = value
        elif flag == "--model-base-url":
            model_args["base_url"] = value
        elif flag == "--max-attempts":
            attempts = int(value)
        elif flag == "--gauge":  # sample the model's connections held every VALUE seconds
            gauge = float(value)
        else:
            raise SystemExit(f"unknown option {flag!r}")
    t0 = time.perf_counter()
    import assay

    held = _gauge(gauge) if gauge else None
    t1, c1 = time.perf_counter(), _cpu()
    results = assay.eval(
        task,
        model=model,
        task_args={"samples": int(samples)},
        model_args=model_args,
        log_dir=Path(log_dir),
        max_samples=int(connections),
        max_connections=int(connections),
        max_attempts=attempts,
    )
    t2, c2 = time.perf_counter(), _cpu()
    result = results[0]
    report = result.report
    extra = {"held": held.stop()} if held is not None else {}
    return {
        **extra,
        "import_s": t1 - t0,
        "total_s": t2 - t1,  # assay.eval(): task load, trials, evidence, scores, gate, reports
        "cpu_s": c2 - c1,
        "status": result.status,
        "samples": report.planned if report else 0,
        "run": str(result.path),
        "error": result.error,
    }


class _Gauge:
    """Every *every* seconds, on a thread, the calls a model's connection gate lets in
    (connections held, whether or not the event loop has read the answer yet), its limit
    and the calls waiting for it, and the run's trial slots: trials working, parked
    (waiting to retry, their slot given to another) and workers waiting to start one."""

    def __init__(self, every: float) -> None:
        import threading

        from assay import _slots
        from assay.model import _gate

        self.gates: list[Any] = []
        self.slots: list[Any] = []
        self.seen: list[tuple[int, float, int, int, int, int, int]] = []
        self.done = threading.Event()
        self.every = every
        for cls, made in ((_gate.AdaptiveGate, self.gates), (_slots.TrialSlots, self.slots)):
            cls.__init__ = _registering(cls.__init__, made)  # type: ignore[method-assign]
        self.thread = threading.Thread(target=self._run, args=(every,), daemon=True)
        self.thread.start()

    def _run(self, every: float) -> None:
        while not self.done.wait(every):
            gates, slots = list(self.gates), list(self.slots)
            if not gates:  # the model is not made yet: no row (its limit would read 0)
                continue
            self.seen.append(
                (
                    sum(g.in_flight for g in gates),
                    sum(g.limit for g in gates),
                    sum(len(g._waiters) for g in gates),
                    sum(s.working for s in slots),
                    sum(s.parked for s in slots),
                    sum(len(s._waiters) for s in slots),
                    sum(s.working < s.limit and not s._waiters for s in slots),
                )
            )

    def stop(self) -> dict[str, float]:
        """Means over the run, and over its middle 80 % (no ramp, no tail); the gate's
        limit decreases and lowest limit; the most trials parked at once."""
        self.done.set()
        self.thread.join()
        seen = self.seen or [(0, 0.0, 0, 0, 0, 0, 0)]
        middle = seen[len(seen) // 10 : len(seen) - len(seen) // 10] or seen

        def mean(rows: list[tuple[int, float, int, int, int, int, int]], i: int) -> float:
            return sum(row[i] for row in rows) / len(rows)

        return {
            "mean": mean(seen, 0),
            "middle": mean(middle, 0),
            "limit_middle": mean(middle, 1),
            "limit_low": min(row[1] for row in seen),
            "decreases": sum(g.decreases for g in self.gates),
            "queued_middle": mean(middle, 2),
            "working_middle": mean(middle, 3),
            "parked_middle": mean(middle, 4),
            "parked_most": max(row[4] for row in seen),
            "idle_middle": mean(middle, 5),
            "starved_middle": mean(middle, 6),  # a slot free, no worker to take it
            "series": seen[:: max(1, round(1 / self.every))],  # about one row a second
        }


def _registering(init: Any, made: list[Any]) -> Any:
    """*init*, keeping each object it initialises in *made* (for the gauge's thread)."""

    def register(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        made.append(self)

    return register


def _gauge(every: float) -> _Gauge:
    return _Gauge(every)


def _verify(run: str) -> dict[str, object]:
    from assay.evidence import verify_run

    t0, c0, w0 = time.perf_counter(), _cpu(), _children_cpu()
    result = verify_run(Path(run))
    t1, c1, w1 = time.perf_counter(), _cpu(), _children_cpu()
    return {
        "seconds": t1 - t0,
        "cpu_s": c1 - c0,
        "worker_cpu_s": w1 - w0,
        "ok": result.ok,
        "trials": result.trials,
        "events": result.events,
        "artifacts": result.artifacts,
        "problems": result.problems[:3],
    }


def _rescore(run: str) -> dict[str, object]:
    from assay.pipeline import rescore_run

    t0, c0, w0 = time.perf_counter(), _cpu(), _children_cpu()
    result = rescore_run(Path(run))
    t1, c1, w1 = time.perf_counter(), _cpu(), _children_cpu()
    return {
        "seconds": t1 - t0,
        "cpu_s": c1 - c0,
        "worker_cpu_s": w1 - w0,
        "scores": result.scores,
        "differing": len(result.differing),
        "gate": result.gate.status,
        "trials": result.report.planned,
    }


def _apply_patches(names: list[str]) -> None:
    import importlib.util

    path = Path(__file__).resolve().parent / "_patches.py"
    spec = importlib.util.spec_from_file_location("_bench_patches", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_bench_patches"] = module
    spec.loader.exec_module(module)
    module.apply(names)


def main(argv: list[str]) -> None:
    command, *rest = argv
    if "--patch" in rest:  # bench/whatif.py: monkeypatch assay in this process first
        i = rest.index("--patch")
        _apply_patches(rest[i + 1].split(","))
        del rest[i : i + 2]
    if command == "run":
        concurrency = 16
        if "--max-concurrency" in rest:
            i = rest.index("--max-concurrency")
            concurrency = int(rest[i + 1])
            del rest[i : i + 2]
        report = _run(rest[0], rest[1], concurrency)
    elif command == "task":
        report = _task(rest)
    elif command == "verify":
        report = _verify(rest[0])
    elif command == "rescore":
        report = _rescore(rest[0])
    else:
        raise SystemExit(f"unknown command {command!r}")
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
