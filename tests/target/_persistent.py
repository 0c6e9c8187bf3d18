"""What the persistent-target tests share: the echo program, a spec folder around a
program, and readers of what it logged and what the run recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers import (
    bundles_by_sample,
    events_of,
    simple_spec,
    write_module,
)

ECHO = """
import json, os, sys

with open(sys.argv[1], "a") as log:
    log.write(f"{os.getpid()}\\n")
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
"""

ONCE_HEAD = """
import json, os, signal, sys, time

log, marker = sys.argv[1], sys.argv[2]
with open(log, "a") as handle:
    handle.write(f"{os.getpid()}\\n")
"""
"""The start of a program that misbehaves once: it logs its pid (``logged_pids``), and
the *marker* file it makes says it has misbehaved (its restart then behaves)."""

CHATTY = """
import json, sys

print("loading, before any call", file=sys.stderr, flush=True)
for line in sys.stdin:
    request = json.loads(line)
    print(f"working on {request['sample_id']}", file=sys.stderr, flush=True)
    print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
"""

QUICK_RETRY = {"max_attempts": 2, "initial_backoff": 0.01, "max_backoff": 0.02}


def sample_list(*inputs: Any) -> list[dict[str, Any]]:
    return [{"id": f"s{i}", "input": value, "expected": value} for i, value in enumerate(inputs)]


def program_spec(
    tmp_path: Path, source: str, samples: list[dict[str, Any]], **target: Any
) -> tuple[Path, Path]:
    """A spec folder with *source* as ``program.py``, run by a ``protocol: jsonl`` target
    whose first argument is a log file outside the scratch folder; (spec, log)."""
    folder = tmp_path / "spec"
    write_module(folder, "program", source)
    log = tmp_path / "log.txt"
    declared = {"id": "t", "script": "program.py", "protocol": "jsonl", **target}
    declared["args"] = [str(log), *declared.get("args", [])]
    retry = declared.pop("retry", QUICK_RETRY)
    spec = simple_spec(folder, samples=samples, targets=[declared], retry=retry)
    return spec, log


def logged_pids(log: Path) -> list[int]:
    """The pids the program logged as it started, in order."""
    return [int(line) for line in log.read_text().split() if line.isdigit()]


def attempts_of(run: Path, sample_id: str) -> list[tuple[str, str | None]]:
    """(status, reason) of each attempt of *sample_id*'s trial."""
    bundle = bundles_by_sample(run)[sample_id]
    return [(a["status"], a["reason"]) for a in bundle["attempts"]]


def error_details(run: Path) -> list[str]:
    return [event["data"]["detail"] for event in events_of(run, "error")]
