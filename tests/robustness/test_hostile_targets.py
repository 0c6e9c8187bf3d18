"""Hostile subprocess targets: each ends within its timeout and leaves nothing running.

One spec, one target per kind of misbehaviour, all run side by side by the real CLI on
two samples (a small input and a 1 MB one, more than a pipe holds, so a program that
never reads stdin also blocks assay's write). Every program writes its process group id
(and the pids of the children it starts) to a file before it misbehaves. Afterwards:

- each attempt ended within the target's timeout (plus slack for starting Python);
- every process group it ran in is gone (``os.killpg(pgid, 0)`` raises
  ``ProcessLookupError``), children and double-forked grandchildren included;
- each is classified as the design says (hangs: infrastructure, retried then blocked;
  floods, invalid UTF-8, non-zero exits, signals: product failures, not retried; a
  program that ignores stdin but answers: answered), the output artifact is capped,
  and the well-behaved target beside them passes: the run went on.

- a daemon that called ``setsid()`` (so left the group), holding the program's stdout
  open, is gone too: assay finds it by the tag in its environment.

Out of reach by design: a descendant that clears its environment and execs again after
``setsid()`` (that would take a cgroup).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import (
    artifact_bytes,
    log_events,
    process_gone,
    process_group_gone,
    read_jsonl,
    run_cli,
    write_dataset,
    write_module,
    write_spec,
)

TIMEOUT = 1.0
MAX_OUTPUT = 100_000
SLACK = 2.0  # starting Python and killing a group, on a loaded 2-core machine

HOSTILE = r"""
import json
import os
import signal
import subprocess
import sys
import time

kind, pids = sys.argv[1], sys.argv[2]


def note(*extra):
    with open(os.path.join(pids, f"{kind}@{os.getpid()}"), "w") as handle:
        handle.write(" ".join(str(n) for n in (os.getpgid(0), os.getpid(), *extra)))


def sleeper():
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])


def double_fork():
    # child forks a grandchild (which holds stdout open) and exits: an orphan in our group
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        grandchild = os.fork()
        if grandchild == 0:
            time.sleep(3600)
            os._exit(0)
        os.write(write, str(grandchild).encode())
        os._exit(0)
    os.waitpid(child, 0)
    return int(os.read(read, 32))


def daemon():
    # a child that leaves the session and group, holding stdout open, and sleeps on
    child = os.fork()
    if child == 0:
        os.setsid()
        time.sleep(3600)
        os._exit(0)
    return child


def answer():
    print(json.dumps({"answer": "ok"}), flush=True)


if kind == "hang":
    note()
    time.sleep(3600)
elif kind == "child-hang":
    note(sleeper().pid)
    time.sleep(3600)
elif kind == "child-answers":
    note(sleeper().pid)
    sys.stdin.read()
    answer()
elif kind == "double-fork-hang":
    note(double_fork())
    time.sleep(3600)
elif kind == "double-fork-answers":
    note(double_fork())
    sys.stdin.read()
    answer()
elif kind == "setsid-hang":
    note(daemon())
    time.sleep(3600)
elif kind == "setsid-answers":
    note(daemon())
    sys.stdin.read()
    answer()
elif kind == "close-stdout-hang":
    note()
    os.close(1)
    time.sleep(3600)
elif kind == "flood":
    note()
    chunk = b"x" * 65536
    while True:
        os.write(1, chunk)
elif kind == "flood-stderr":
    note()
    chunk = b"e" * 65536
    while True:
        os.write(2, chunk)
elif kind == "invalid-utf8":
    note()
    sys.stdin.read()
    os.write(1, b'{"answer": "\xff\xfe"}')
    os.write(2, b"\xc3\x28 invalid utf-8 on stderr too")
elif kind == "exit-nonzero":
    note()
    sys.stdin.read()
    sys.exit(7)
elif kind == "segfault":
    note()
    os.kill(os.getpid(), signal.SIGSEGV)
elif kind == "ignores-stdin":
    note()
    answer()  # exits without reading a byte of its input
elif kind == "polite":
    note()
    sys.stdin.read()
    answer()
"""

# kind -> (trial state, outcome, what the failure says)
EXPECTED: dict[str, tuple[str, str | None, str | None]] = {
    "hang": ("blocked", None, None),
    "child-hang": ("blocked", None, None),
    "double-fork-hang": ("blocked", None, None),
    "close-stdout-hang": ("blocked", None, None),
    "child-answers": ("completed", "answered", None),
    "double-fork-answers": ("completed", "answered", None),
    "setsid-hang": ("blocked", None, None),
    "setsid-answers": ("completed", "answered", None),
    "flood": ("completed", "product_failure", f"output exceeded {MAX_OUTPUT} bytes"),
    "flood-stderr": ("completed", "product_failure", "exited with code"),
    "invalid-utf8": ("completed", "product_failure", "not JSON"),
    "exit-nonzero": ("completed", "product_failure", "exited with code 7"),
    "segfault": ("completed", "product_failure", "exited with code -11"),
    "ignores-stdin": ("completed", "answered", None),
    "polite": ("completed", "answered", None),
}
ATTEMPTS = 2


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Any]:
    root = tmp_path_factory.mktemp("hostile")
    folder, pids = root / "spec", root / "pids"
    pids.mkdir()
    write_module(folder, "hostile", HOSTILE)
    write_dataset(
        folder,
        [
            {"id": "small", "input": "hi", "expected": {"answer": "ok"}},
            {"id": "large", "input": "x" * 1_000_000, "expected": {"answer": "ok"}},
        ],
    )
    targets = [
        {
            "id": kind,
            "script": "hostile.py",
            "args": [kind, str(pids)],
            "timeout": TIMEOUT,
            "max_output_bytes": MAX_OUTPUT,
        }
        for kind in EXPECTED
    ]
    spec = write_spec(
        folder,
        {
            "evaluation": "hostile",
            "dataset": "data.jsonl",
            "targets": targets,
            "scorers": [{"id": "answer", "type": "field_match", "field": "answer"}],
            "gate": {"targets": {"polite": 1.0}},
            "retry": {"max_attempts": ATTEMPTS, "initial_backoff": 0.01, "max_backoff": 0.02},
        },
    )
    proc = run_cli("run", spec, "-o", root / "run", "-j", "8", timeout=120)
    return root / "run", pids, proc


def _bundles(run: Path) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (b["trial"]["target_id"], b["trial"]["sample_id"]): b
        for b in read_jsonl(run / "bundles.jsonl")
    }


def test_the_run_goes_on_past_every_hostile_target(hostile_run: tuple[Path, Path, Any]) -> None:
    run, _, proc = hostile_run
    # the polite target is the only gated one, and it passed beside all the others; the
    # hanging ones are not gated but blocked, and evidence comes first: inconclusive (3)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    report = json.loads((run / "report.json").read_text())
    verdicts = {t["target_id"]: t["status"] for t in report["gate"]["targets"]}
    blocked = {kind for kind, (state, _, _) in EXPECTED.items() if state == "blocked"}
    assert verdicts["polite"] == "passed"
    assert {k for k, v in verdicts.items() if v == "inconclusive"} == blocked
    assert {v for k, v in verdicts.items() if k not in blocked | {"polite"}} == {"ungated"}
    assert len(_bundles(run)) == 2 * len(EXPECTED)
    verify = run_cli("verify", run)
    assert verify.returncode == 0, verify.stdout


@pytest.mark.parametrize("kind", list(EXPECTED))
@pytest.mark.doc(
    "docs/spec.md",
    "Failing to start and timing out are infrastructure failures (retried); a non-zero exit, "
    "non-JSON output or too much output are product failures (recorded, scored `failed`, "
    "never retried).",
)
def test_each_ends_within_its_timeout_as_classified(
    hostile_run: tuple[Path, Path, Any], kind: str
) -> None:
    run, _, _ = hostile_run
    state, outcome, failure = EXPECTED[kind]
    events: dict[str, list[dict[str, Any]]] = {}
    for event in log_events(run):
        events.setdefault(event["trial"] or "", []).append(event)
    for sample in ("small", "large"):
        bundle = _bundles(run)[(kind, sample)]
        assert bundle["state"] == state, (kind, sample)
        assert bundle["observation"]["outcome"] == outcome, (kind, sample)
        if failure is not None:
            assert failure in bundle["observation"]["failure"], bundle["observation"]
        expected_attempts = ATTEMPTS if state == "blocked" else 1  # product results end it
        assert len(bundle["attempts"]) == expected_attempts, (kind, sample)
        if state == "blocked":
            assert {a["reason"] for a in bundle["attempts"]} == {"timeout"}
        mine = events[bundle["trial"]["trial_id"]]
        started = {e["data"]["attempt"]: e["at"] for e in mine if e["type"] == "attempt_started"}
        for e in mine:
            if e["type"] == "attempt_finished":
                took = e["at"] - started[e["data"]["attempt"]]
                assert took < TIMEOUT + SLACK, (kind, sample, took)


@pytest.mark.parametrize("kind", list(EXPECTED))
@pytest.mark.doc(
    "docs/spec.md",
    "It runs in its own process group, killed on timeout, on an output flood, and once it "
    "has answered (with any daemon it started that left the group: it is found by a tag in "
    "its environment, `ASSAY_PROCESS_TAG`).",
)
def test_its_whole_process_group_is_gone(hostile_run: tuple[Path, Path, Any], kind: str) -> None:
    _, pids, _ = hostile_run
    notes = [p.read_text().split() for p in pids.glob(f"{kind}@*")]
    runs = 2 * (ATTEMPTS if EXPECTED[kind][0] == "blocked" else 1)
    assert len(notes) == runs, (kind, notes)
    for pgid, pid, *children in (list(map(int, note)) for note in notes):
        assert pgid == pid  # it led its own group (start_new_session)
        assert process_group_gone(pgid), f"{kind}: group {pgid} (children {children}) alive"
        with pytest.raises(ProcessLookupError):
            os.killpg(pgid, 0)
        for child in children:  # a daemon left the group: it must be gone all the same
            assert process_gone(child), f"{kind}: {child} (of group {pgid}) alive"


def test_a_flood_is_capped_in_the_evidence(hostile_run: tuple[Path, Path, Any]) -> None:
    run, _, _ = hostile_run
    bundles = _bundles(run)
    for sample in ("small", "large"):
        output = artifact_bytes(run, bundles[("flood", sample)]["observation"]["output"])
        assert 0 < len(output) <= MAX_OUTPUT and set(output) == {ord("x")}
    trial = bundles[("flood-stderr", "small")]["trial"]["trial_id"]
    (sampling,) = [
        e["data"] for e in log_events(run) if e["type"] == "sampling" and e["trial"] == trial
    ]
    assert 0 < len(artifact_bytes(run, sampling["stderr"])) <= 2 * 65_536  # capped too


def test_invalid_utf8_is_kept_byte_for_byte(hostile_run: tuple[Path, Path, Any]) -> None:
    run, _, _ = hostile_run
    bundle = _bundles(run)[("invalid-utf8", "small")]
    assert artifact_bytes(run, bundle["observation"]["output"]) == b'{"answer": "\xff\xfe"}'
    report = json.loads((run / "report.json").read_bytes())  # and the reports still render
    assert report["planned"] == 2 * len(EXPECTED)
    (run / "report.md").read_text(encoding="utf-8")
    (run / "report.html").read_text(encoding="utf-8")
