"""Persistent program targets that fail, run for real through the CLI: a crash mid-call
or with several calls in flight, a hang, a slow program, garbage on stdout, an error
answer. Each is an infrastructure failure of the calls it touched (retried on a fresh
process) or the product's own failure, never a hang."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import (
    bundles_by_sample,
    process_gone,
    read_jsonl,
    run_cli,
)
from tests.target._persistent import (
    ONCE_HEAD,
    attempts_of,
    error_details,
    logged_pids,
    program_spec,
    sample_list,
)

CRASH_ONCE = (
    ONCE_HEAD
    + """original = sys.argv[3]
for line in sys.stdin:
    request = json.loads(line)
    if request["input"] == "boom" and not os.path.exists(marker):
        open(marker, "w").close()
        with open(original, "w") as handle:  # the restart must not run this rewrite
            handle.write("import json, sys\\nfor line in sys.stdin:\\n"
                         "    r = json.loads(line)\\n"
                         "    print(json.dumps({'id': r['id'], 'output': 'cheat'}), flush=True)\\n")
        print("dying now", file=sys.stderr, flush=True)
        os._exit(3)
    print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
"""
)


@pytest.mark.doc(
    "docs/spec.md",
    "A crash (stdout closes)",
    "is an infrastructure failure of every call in flight: the process group is killed, the "
    "calls are retried (`retry`), and the next call starts a fresh process",
    "with the same environment allow-list, pinned script copy",
)
def test_a_crash_mid_call_restarts_the_program_and_retries_the_call(tmp_path: Path) -> None:
    marker = tmp_path / "crashed"
    original = tmp_path / "spec" / "program.py"
    spec, log = program_spec(
        tmp_path, CRASH_ONCE, sample_list("a", "boom", "c"), args=[str(marker), str(original)]
    )
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the retry answered "boom"
    assert marker.exists() and "cheat" in original.read_text()
    assert attempts_of(run, "s1") == [("infra_failed", "crashed"), ("succeeded", None)]
    (detail,) = error_details(run)
    assert "exited with code 3" in detail and "dying now" in detail
    first, second = logged_pids(log)
    assert process_gone(first) and process_gone(second)


CRASH_WITH_THREE_IN_FLIGHT = (
    ONCE_HEAD
    + """held = []
for line in sys.stdin:
    held.append(json.loads(line))
    if len(held) < 3:
        continue
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)  # three calls in flight, none answered
    for request in held:
        print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
    held = []
"""
)


@pytest.mark.doc(
    "docs/spec.md",
    "is an infrastructure failure of every call in flight: the process group is killed, the "
    "calls are retried (`retry`)",
)
def test_a_crash_fails_every_call_in_flight_and_each_is_retried(tmp_path: Path) -> None:
    marker = tmp_path / "crashed"
    samples = sample_list("a", "b", "c")
    spec, log = program_spec(tmp_path, CRASH_WITH_THREE_IN_FLIGHT, samples, args=[str(marker)])
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for sample_id in ("s0", "s1", "s2"):
        assert attempts_of(run, sample_id) == [("infra_failed", "crashed"), ("succeeded", None)]
    assert len(logged_pids(log)) == 2


HANG_ONCE = (
    ONCE_HEAD
    + """for line in sys.stdin:
    request = json.loads(line)
    if request["input"] == "hang" and not os.path.exists(marker):
        open(marker, "w").close()
        time.sleep(600)
    print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
"""
)


@pytest.mark.doc(
    "docs/spec.md",
    "a hang (a call past its `timeout`)",
    "is an infrastructure failure of every call in flight",
)
def test_a_hang_times_out_and_the_call_is_retried_on_a_fresh_process(tmp_path: Path) -> None:
    marker = tmp_path / "hung"
    # 2 s: a call's timeout counts from its request, and the program's first answer
    # includes Python's start (a fresh one's too, after the hang), slow on a loaded machine
    spec, log = program_spec(
        tmp_path, HANG_ONCE, sample_list("a", "hang", "c"), args=[str(marker)], timeout=2
    )
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert attempts_of(run, "s1") == [("infra_failed", "timeout"), ("succeeded", None)]
    assert error_details(run) == ["no answer within 2 s"]
    hung, fresh = logged_pids(log)
    assert process_gone(hung) and process_gone(fresh)


ONE_AT_A_TIME = """
import json, sys, time

sys.argv.pop(1)
for line in sys.stdin:
    request = json.loads(line)
    time.sleep(0.3)  # a slow model, answering one call at a time
    print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
"""


@pytest.mark.doc(
    "docs/spec.md",
    "A call's `timeout` counts from its request or from the program's latest answer, "
    "whichever is later, so calls queued behind a program that answers one at a time do not "
    "time out while it works through them.",
)
def test_calls_queued_behind_a_slow_program_do_not_time_out(tmp_path: Path) -> None:
    samples = sample_list(*(f"q{i}" for i in range(8)))
    spec, _ = program_spec(tmp_path, ONE_AT_A_TIME, samples, timeout=1.5, retry={"max_attempts": 1})
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "8")
    # the last of the eight waits about 2.4 s from its request, past the 1.5 s timeout
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert all(attempts_of(run, f"s{i}") == [("succeeded", None)] for i in range(8))


GARBAGE = {
    "not JSON": 'print("hello, this is not JSON", flush=True)',
    "unknown id": 'print(json.dumps({"id": request["id"] + 1000, "output": 1}), flush=True)',
    "endless line": 'sys.stdout.write("x" * 5000); sys.stdout.flush()',  # never ends the line
}


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("not JSON", "stdout line b'hello, this is not JSON': not a JSON answer"),
        ("unknown id", "no call in flight has id"),
        ("endless line", "a line passed 1000 bytes"),
    ],
)
@pytest.mark.doc(
    "docs/spec.md",
    "garbage on stdout (a line that is not one JSON answer, an `id` no call waits for, a line "
    "longer than `max_output_bytes`)",
)
def test_garbage_on_stdout_is_a_clear_error_never_a_hang(
    tmp_path: Path, kind: str, expected: str
) -> None:
    source = (
        "import json, sys\nfor line in sys.stdin:\n    request = json.loads(line)\n"
        f"    {GARBAGE[kind]}\n"
    )
    program = "import sys\nsys.argv.pop(1)\n" + source
    spec, _ = program_spec(tmp_path, program, sample_list("a"), max_output_bytes=1000)
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run)
    assert proc.returncode == 3, proc.stdout + proc.stderr  # blocked: inconclusive
    assert attempts_of(run, "s0") == [("infra_failed", "protocol")] * 2
    details = error_details(run)
    assert len(details) == 2 and all(expected in detail for detail in details)


ANSWERS_AN_ERROR = """
import json, sys

sys.argv.pop(1)
for line in sys.stdin:
    request = json.loads(line)
    if request["input"] == "bad":
        print(json.dumps({"id": request["id"], "error": "cannot parse the input"}), flush=True)
    elif request["input"] == "empty":
        print(json.dumps({"id": request["id"]}), flush=True)
    else:
        print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
"""


@pytest.mark.doc(
    "docs/spec.md",
    "`error` is a product failure (scored `failed`, never retried), as is a line with neither",
)
def test_an_error_answer_is_the_products_failure(tmp_path: Path) -> None:
    spec, _ = program_spec(tmp_path, ANSWERS_AN_ERROR, sample_list("good", "bad", "empty"))
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "1")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # gate failed
    status = {r["sample_id"]: r["status"] for r in read_jsonl(run / "scores.jsonl")}
    assert status == {"s0": "passed", "s1": "failed", "s2": "failed"}
    bundles = bundles_by_sample(run)
    assert attempts_of(run, "s1") == [("succeeded", None)]  # one attempt: not retried
    assert "cannot parse the input" in bundles["s1"]["observation"]["failure"]
    assert "neither 'output' nor 'error'" in bundles["s2"]["observation"]["failure"]
