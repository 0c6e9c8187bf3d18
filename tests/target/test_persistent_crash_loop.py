"""A persistent program that can never answer stops the run in one line (exit 5), after
``CRASH_LOOP`` starts in a row that each ended without an answer, instead of being
started again for every call and every retry; a program that answers now and then, or
dies on one poison input only, is never stopped so. Real programs, run through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import read_jsonl, run_cli
from tests.target._persistent import attempts_of, logged_pids, program_spec, sample_list

HEAD = """
import json, os, sys, time

with open(sys.argv[1], "a") as log:
    log.write(f"{os.getpid()}\\n")
"""
"""The start of each program here: it logs its pid (``logged_pids`` counts the starts)."""

NEVER_ANSWERS = {
    "exits at start": """print("cannot load the model: weights.bin missing", file=sys.stderr)
sys.exit(3)
""",
    "banner on stdout": """print("model loaded, ready", flush=True)  # not an answer line
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
""",
    "hangs at start": """time.sleep(600)  # loading, for ever
""",
}
LAST_FAILURE = {
    "exits at start": "crashed: the program exited with code 3 with call(s) in flight; its "
    "stderr ended: 'cannot load the model: weights.bin missing\\n'",
    "banner on stdout": "protocol: stdout line b'model loaded, ready': not a JSON answer",
    "hangs at start": "timeout: no answer within 0.2 s",
}
CRASH_LOOP = 10
"""The limit docs/spec.md states (`assay.target._persistent.CRASH_LOOP`)."""
FAST_RETRY = {"max_attempts": 3, "initial_backoff": 0.01, "max_backoff": 0.02}


@pytest.mark.parametrize("kind", list(NEVER_ANSWERS))
@pytest.mark.doc(
    "docs/spec.md",
    "A program that can never answer is not started for ever: once 10 of a worker's "
    "processes in a row (more when `retry.max_attempts` is over 3: three times it, plus "
    "one) have ended without answering a single call, the run stops with one line naming "
    "the target, the count and the last failure (its exit code and the end of its stderr), "
    "exit 5; finished trials are kept and `assay resume` finishes the run.",
)
def test_a_program_that_never_answers_stops_the_run_in_one_line(tmp_path: Path, kind: str) -> None:
    source = HEAD + NEVER_ANSWERS[kind]
    hang = kind == "hangs at start"
    timeout = {"timeout": 0.2} if hang else {}  # (a short one for the others: a slow start)
    spec, log = program_spec(tmp_path, source, sample_list(*range(30)), retry=FAST_RETRY, **timeout)
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "4")
    assert proc.returncode == 5, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()  # one line, no traceback
    assert line.startswith(f"assay: target t: the program's last {CRASH_LOOP} starts in a row")
    assert LAST_FAILURE[kind] in line, line
    assert f"assay resume {run}" in line
    # the calls that waited for the tenth start's end started no eleventh (a process
    # that hangs may be killed before it logs, on a slow machine)
    starts = len(logged_pids(log))
    assert starts == CRASH_LOOP or (hang and starts < CRASH_LOOP)
    verified = run_cli("verify", run)
    assert verified.returncode == 3, verified.stdout + verified.stderr  # unfinished, intact
    assert "every digest of what it holds matches" in verified.stdout + verified.stderr


def test_the_crash_loop_line_is_said_in_chinese_too(tmp_path: Path) -> None:
    spec, _ = program_spec(
        tmp_path, HEAD + NEVER_ANSWERS["exits at start"], sample_list(*range(30)), retry=FAST_RETRY
    )
    proc = run_cli("--lang", "zh", "run", spec, "-o", tmp_path / "run", "-j", "2")
    assert proc.returncode == 5, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert f"程序连续 {CRASH_LOOP} 次启动" in line and "weights.bin missing" in line


NEEDS_WEIGHTS = (
    HEAD
    + """if not os.path.exists(sys.argv[2]):
    print("cannot load the model: weights.bin missing", file=sys.stderr)
    sys.exit(3)
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
"""
)


@pytest.mark.doc("docs/spec.md", "finished trials are kept and `assay resume` finishes the run")
def test_a_run_stopped_so_is_finished_by_resume_once_the_program_answers(tmp_path: Path) -> None:
    weights = tmp_path / "weights.bin"  # outside the spec: the spec's digest is unchanged
    samples = sample_list(*range(30))
    spec, _ = program_spec(tmp_path, NEEDS_WEIGHTS, samples, retry=FAST_RETRY, args=[str(weights)])
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "2")
    assert proc.returncode == 5, proc.stdout + proc.stderr
    weights.write_bytes(b"")
    resumed = run_cli("resume", run)
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr  # the blocked ones stay
    status = {r["sample_id"]: r["status"] for r in read_jsonl(run / "scores.jsonl")}
    assert len(status) == 30 and "passed" in status.values()
    assert run_cli("verify", run).returncode == 0


POISONED = (
    HEAD
    + """for line in sys.stdin:
    request = json.loads(line)
    if str(request["input"]).startswith("poison"):
        os._exit(9)  # at once, before answering anything
    print(json.dumps({"id": request["id"], "output": request["input"]}), flush=True)
"""
)


@pytest.mark.parametrize(
    ("attempts", "poisons", "concurrency"),
    [
        (3, 3, 3),  # three poison inputs at once, nothing else: up to 9 ends in a row
        (2 * CRASH_LOOP, 1, 1),  # more attempts than CRASH_LOOP: the limit allows for them
    ],
)
@pytest.mark.doc(
    "docs/spec.md",
    "an input the program dies on at once (a poison input, its trial `blocked` after its "
    "attempts) does not reach it",
)
def test_poison_inputs_alone_never_stop_the_run(
    tmp_path: Path, attempts: int, poisons: int, concurrency: int
) -> None:
    inputs = [f"poison{i}" for i in range(poisons)]  # no answer in between: the worst case
    retry = {**FAST_RETRY, "max_attempts": attempts}
    spec, log = program_spec(tmp_path, POISONED, sample_list(*inputs), retry=retry)
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", str(concurrency))
    assert proc.returncode == 3, proc.stdout + proc.stderr  # blocked: inconclusive
    assert proc.stderr == ""
    for i in range(poisons):
        assert attempts_of(run, f"s{i}") == [("infra_failed", "crashed")] * attempts
    assert len(logged_pids(log)) >= attempts  # one process per attempt, or fewer shared


@pytest.mark.doc(
    "docs/spec.md",
    "an input the program dies on at once (a poison input, its trial `blocked` after its "
    "attempts) does not reach it",
)
def test_a_poison_input_among_healthy_ones_blocks_its_trial_only(tmp_path: Path) -> None:
    # 4 workers for -j 2: a call always finds one idle, so a healthy call never shares
    # a process with the poison (a crash fails every call in flight, retried or not)
    samples = sample_list("poison", *(f"ok{i}" for i in range(12)))
    retry = {**FAST_RETRY, "max_attempts": 3}
    spec, _ = program_spec(tmp_path, POISONED, samples, retry=retry, workers=4)
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "2")
    assert proc.returncode == 3, proc.stdout + proc.stderr  # blocked: inconclusive
    assert proc.stderr == ""
    assert attempts_of(run, "s0") == [("infra_failed", "crashed")] * 3
    status = {r["sample_id"]: r["status"] for r in read_jsonl(run / "scores.jsonl")}
    assert sorted(s for s, v in status.items() if v == "passed") == sorted(
        f"s{i}" for i in range(1, 13)
    )


ANSWERS_ONCE = (
    HEAD
    + """first = True
for line in sys.stdin:
    if not first:
        os._exit(0)  # the second request: it ends without answering it
    first = False
    request = json.loads(line)
    print(json.dumps({"id": request["id"], "FIELD": request["input"]}), flush=True)
"""
)


@pytest.mark.parametrize("field", ["output", "error"])
@pytest.mark.doc("docs/spec.md", "The count restarts at any answer, an `error` answer included")
def test_a_program_that_answers_before_each_end_is_restarted_without_limit(
    tmp_path: Path, field: str
) -> None:
    samples = sample_list(*(f"q{i}" for i in range(4 * CRASH_LOOP)))
    source = ANSWERS_ONCE.replace("FIELD", field)
    # one attempt, one call at a time: each process answers one call and ends on the next
    spec, log = program_spec(tmp_path, source, samples, retry={"max_attempts": 1})
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "1")
    assert proc.returncode == 3, proc.stdout + proc.stderr  # blocked: inconclusive
    assert proc.stderr == ""
    assert len(logged_pids(log)) == 2 * CRASH_LOOP  # 20 processes ended, each answered once
    answered = ("succeeded", None)
    assert [attempts_of(run, f"s{i}")[0] for i in range(0, 4 * CRASH_LOOP, 2)] == [answered] * (
        2 * CRASH_LOOP
    )
