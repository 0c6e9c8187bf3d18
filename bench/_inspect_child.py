"""The measured side of an Inspect AI bench: runs under ``bench/.venv-inspect``'s Python.

    python bench/_inspect_child.py eval TASK_FILE@NAME LOG_DIR SAMPLES CONNECTIONS
                                   [--model M] [--model-base-url URL] [-M key=value ...]
    python bench/_inspect_child.py readlog LOG_FILE SAMPLE_ID

It imports nothing of assay (Inspect has its own environment). Timings are printed as
one JSON line; the parent (``_common.run_process``) adds peak RSS and CPU of the whole
process from ``os.wait4``. The parent also sets the environment that keeps Inspect off
the internet (``_common.inspect_env``).
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

# run as ``python bench/_inspect_child.py``: bench/ must not shadow anything Inspect imports
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _eval(argv: list[str]) -> dict[str, object]:
    task, log_dir, samples, connections, *rest = argv
    model, base_url, model_args = None, None, {}
    while rest:
        flag, value, *rest = rest
        if flag == "--model":
            model = value
        elif flag == "--model-base-url":
            base_url = value
        elif flag == "-M":
            key, _, raw = value.partition("=")
            model_args[key] = {"false": False, "true": True}.get(raw, raw)
        else:
            raise SystemExit(f"unknown option {flag!r}")
    t0, c0 = time.perf_counter(), _cpu()
    import inspect_ai

    t1, c1 = time.perf_counter(), _cpu()
    logs = inspect_ai.eval(
        task,
        model=model,
        model_base_url=base_url,
        model_args=model_args,
        task_args={"samples": int(samples)},
        log_dir=log_dir,
        display="none",
        max_connections=int(connections),
        max_samples=int(connections),
        max_retries=0,
        fail_on_error=True,
    )
    t2, c2 = time.perf_counter(), _cpu()
    log = logs[0]
    location = Path(log.location)
    results = log.results
    return {
        "import_s": t1 - t0,
        "import_cpu_s": c1 - c0,
        "total_s": t2 - t1,  # inspect_ai.eval(): task load, samples, scoring, log
        "cpu_s": c2 - c1,
        "status": log.status,
        "samples": results.completed_samples if results else 0,
        "accuracy": (
            results.scores[0].metrics["accuracy"].value if results and results.scores else None
        ),
        "log": str(location),
        "log_bytes": location.stat().st_size,
        "error": str(log.error.message)[:300] if log.error else None,
    }


def _readlog(log_file: str, sample_id: str) -> dict[str, object]:
    from inspect_ai.log import read_eval_log, read_eval_log_sample

    t0 = time.perf_counter()
    log = read_eval_log(log_file)
    t1 = time.perf_counter()
    header = read_eval_log(log_file, header_only=True)
    t2 = time.perf_counter()
    sample = read_eval_log_sample(log_file, id=sample_id, epoch=1)
    t3 = time.perf_counter()
    return {
        "whole_s": t1 - t0,
        "header_s": t2 - t1,
        "sample_s": t3 - t2,
        "samples": len(log.samples or []),
        "status": header.status,
        "sample_id": str(sample.id),
    }


def main(argv: list[str]) -> None:
    command, *rest = argv
    if command == "eval":
        report = _eval(rest)
    elif command == "readlog":
        report = _readlog(rest[0], rest[1])
    else:
        raise SystemExit(f"unknown command {command!r}")
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
