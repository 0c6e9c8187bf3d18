"""A sequential gate end to end through the real CLI: it stops a clearly good target
early, runs a target at its minimum to the end, records every look, and ``verify``
re-derives the looks and the stop from the scores."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

import assay.gate._sequential as sequential
from assay.plan import plan
from assay.spec import load_spec
from tests.helpers import (
    error_line,
    events_of,
    read_jsonl,
    run_cli,
    run_spec_at,
    simple_spec,
    start_cli,
    unique_callable_spec,
    wait_for,
)

SEQUENTIAL = {"minimum": 0.8, "confidence": 0.95, "sequential": {"every": 10}}


def samples(count: int, wrong_every: int) -> list[dict[str, Any]]:
    """*count* echo samples; every *wrong_every*-th expects what the echo never says."""
    return [
        {"id": f"s{i}", "input": f"q{i}", "expected": "zz" if i % wrong_every == 0 else f"q{i}"}
        for i in range(count)
    ]


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """400 samples × 2 repetitions, 96% right, against a minimum of 0.8; its exit code.

    The run's stdout is kept beside it (``stdout.txt``) for the test of the CLI line.
    """
    folder = tmp_path_factory.mktemp("good")
    spec = simple_spec(folder, samples=samples(400, 25), gate=SEQUENTIAL, repetitions=2)
    proc = run_cli("run", spec, "-o", folder / "run")
    (folder / "stdout.txt").write_text(proc.stdout, encoding="utf-8")
    return folder / "run", proc.returncode


@pytest.mark.doc(
    "docs/spec.md",
    "When a look decides every check, the run stops: trials in flight finish, the rest are "
    "never started and count as `not_run` (stopped: decided).",
    "Those trials do not make the gate `inconclusive`, in a sequential run only",
    "A sequential run's verdict is its last look's, not the fixed-n interval's",
)
@pytest.mark.doc(
    "docs/evidence.md",
    "A sequential gate (see [spec.md](spec.md)) adds run-level events: `look`",
)
def test_a_clearly_good_target_stops_early_and_passes(good_run: tuple[Path, int]) -> None:
    run, code = good_run
    assert code == 0
    bundles = read_jsonl(run / "bundles.jsonl")
    assert 0 < len(bundles) < 800
    looks = [e["data"] for e in events_of(run, "look")]
    assert [look["samples"] for look in looks] == [10 * (i + 1) for i in range(len(looks))]
    assert looks[-1]["decided"] and not any(look["decided"] for look in looks[:-1])
    check = looks[-1]["checks"][0]
    assert check["decision"] == "passed" and check["low"] >= 0.8 - 1e-6
    assert check["trials"] == 2 * looks[-1]["samples"]
    [stopped] = [e["data"] for e in events_of(run, "stopped")]
    assert stopped == {"samples": looks[-1]["samples"], "reason": "stopped: decided"}
    [unrun] = [e["data"] for e in events_of(run, "not_run")]
    assert unrun == {"trials": 800 - len(bundles), "reason": "stopped: decided"}
    report = json.loads((run / "report.json").read_text())
    assert report["gate"]["status"] == "passed"
    assert report["metrics"]["targets"][0]["states"]["not_run"] == 800 - len(bundles)
    assert any("stopped: decided" in r for r in report["gate"]["targets"][0]["reasons"])


def test_the_cli_line_shows_the_last_look_not_the_planned_trials(
    good_run: tuple[Path, int],
) -> None:
    # 800 planned trials, most never run: "111/800 = 0.139 ... passed" would contradict
    # its own verdict; the line shows what the verdict rests on, with the reasons below
    run, _ = good_run
    check = [e["data"] for e in events_of(run, "look")][-1]["checks"][0]
    lines = (run.parent / "stdout.txt").read_text(encoding="utf-8").splitlines()
    [line] = [x for x in lines if x.startswith("echo ")]
    rate = check["passed"] / check["trials"]
    shown = f"exact: {check['passed']}/{check['trials']} = {rate:.4f} [95% CI {check['low']:.3f}"
    assert shown in line
    assert any("(stopped: decided)" in x for x in lines if x.startswith("  - echo:"))


def test_the_stopped_run_verifies(good_run: tuple[Path, int]) -> None:
    run, _ = good_run
    proc = run_cli("verify", run)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.doc(
    "docs/spec.md",
    "The plan's samples are in a random order seeded by the evaluation id and `seed`, with "
    "all trials of a sample together, and the order is frozen in `plan.jsonl`",
)
def test_the_plan_is_a_seeded_shuffle_of_whole_samples(
    good_run: tuple[Path, int], tmp_path: Path
) -> None:
    run, _ = good_run
    lines = read_jsonl(run / "plan.jsonl")
    order = [line["sample_index"] for line in lines[::2]]
    assert sorted(order) == list(range(400)) and order != list(range(400))
    assert all(
        a["sample_index"] == b["sample_index"] for a, b in zip(lines[::2], lines[1::2], strict=True)
    )
    again = simple_spec(tmp_path / "same", samples=samples(400, 25), gate=SEQUENTIAL)
    reseeded = simple_spec(
        tmp_path / "seed",
        samples=samples(400, 25),
        gate={**SEQUENTIAL, "sequential": {"every": 10, "seed": 1}},
    )
    loaded, other = load_spec(again), load_spec(reseeded)
    assert [t.sample_index for t in plan(loaded.spec, loaded.dataset.ids)] == order
    assert [t.sample_index for t in plan(other.spec, other.dataset.ids)] != order


@pytest.mark.doc(
    "docs/spec.md",
    "Each time `every` more samples (default 10) are complete at the front of the plan, and "
    "when the whole plan is, the gate looks",
    "a target that no look decides (one exactly at its minimum, say) runs the whole plan and "
    "is `inconclusive`.",
)
def test_a_target_at_the_minimum_runs_to_the_end_and_is_inconclusive(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path, samples=samples(95, 5), gate={**SEQUENTIAL, "minimum": 0.8})
    proc = run_cli("run", spec, "-o", tmp_path / "run")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    run = tmp_path / "run"
    assert len(read_jsonl(run / "bundles.jsonl")) == 95
    looks = [e["data"] for e in events_of(run, "look")]
    assert [look["samples"] for look in looks] == [*range(10, 91, 10), 95]
    assert not any(look["decided"] for look in looks)
    assert not events_of(run, "stopped") and not events_of(run, "not_run")
    assert run_cli("verify", run).returncode == 0


@pytest.mark.doc(
    "docs/evidence.md",
    "For a sequential gate, verify recomputes every look from the plan, the bundles' states "
    "and the scores.",
    "A `look` event that differs from the recomputed look, a scheduled look that is missing, "
    "a `stopped` event no look supports, or bundles missing beyond the count of the "
    "`not_run` event are problems (exit 4).",
)
def test_looks_and_a_stop_the_scores_do_not_support_fail_verify(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose looks used a lax threshold (M_t ≥ e^0.5 instead of 2/α) stops at its
    first look; its chain is intact, but verify recomputes the looks and refuses it."""
    source = "def echo(text):\n    return text\n"
    spec = unique_callable_spec(tmp_path, source, "echo", samples=samples(200, 25), gate=SEQUENTIAL)
    monkeypatch.setattr(sequential, "threshold", lambda alpha, checks: 0.5)
    run_spec_at(spec, tmp_path / "run", handle_signals=False)
    monkeypatch.undo()
    run = tmp_path / "run"
    assert [e["data"]["samples"] for e in events_of(run, "stopped")] == [10]
    proc = run_cli("verify", run)
    assert proc.returncode == 4
    assert "look event does not follow from the scores" in proc.stdout + proc.stderr
    assert "stopped event does not follow from the scores" in proc.stdout + proc.stderr


@pytest.mark.doc(
    "docs/spec.md",
    "`assay gate RUN` and `assay score RUN` re-decide a sequential run from its last look "
    "and append that look to `regates.jsonl`, so every time a run was looked at is on record.",
)
@pytest.mark.doc(
    "docs/evidence.md",
    "Each line of `regates.jsonl` must chain to the SHA-256 of the line before (the first to "
    "the manifest's `events_head`) and repeat the run's last look.",
    "Every file in the run folder must be one assay writes:",  # regates.jsonl is one
)
def test_regating_records_a_look_and_a_doctored_one_fails_verify(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path, samples=samples(200, 25), gate=SEQUENTIAL)
    run = tmp_path / "run"
    assert run_cli("run", spec, "-o", run).returncode == 0
    assert run_cli("gate", run).returncode == 0
    assert run_cli("score", run).returncode == 0
    regates = read_jsonl(run / "regates.jsonl")
    last = events_of(run, "look")[-1]["data"]
    assert [r["look"] for r in regates] == [last, last]
    assert [r["status"] for r in regates] == ["passed", "passed"]
    assert run_cli("verify", run).returncode == 0
    lines = (run / "regates.jsonl").read_bytes().splitlines()
    doctored = lines[-1].replace(b'"passed":%d' % last["checks"][0]["passed"], b'"passed":200')
    assert doctored != lines[-1]
    (run / "regates.jsonl").write_bytes(b"\n".join([*lines[:-1], doctored]) + b"\n")
    proc = run_cli("verify", run)
    assert proc.returncode == 4
    assert "regates.jsonl:2" in proc.stdout + proc.stderr


@pytest.mark.doc(
    "docs/spec.md",
    "`sequential` needs a `minimum` and a `confidence`; with `no_regression` or `min_effect` "
    "it is refused (exit 2), as is an `every` below 1.",
)
@pytest.mark.parametrize(
    ("gate", "named"),
    [
        ({"minimum": 0.8, "sequential": True}, "declare confidence"),
        ({"confidence": 0.95, "sequential": True}, "declare a minimum"),
        ({**SEQUENTIAL, "no_regression": {"margin": 0.02}}, "no_regression"),
        ({**SEQUENTIAL, "min_effect": 0.05}, "min_effect"),
        ({**SEQUENTIAL, "sequential": {"every": 0}}, "gate.sequential.every"),
    ],
)
def test_unsupported_combinations_are_refused_in_one_line(
    tmp_path: Path, gate: dict[str, Any], named: str
) -> None:
    spec = simple_spec(tmp_path, gate=gate)
    proc = run_cli("run", spec, "-o", tmp_path / "run")
    assert proc.returncode == 2
    assert named in error_line(proc)
    assert not (tmp_path / "run").exists()


@pytest.mark.doc(
    "docs/spec.md",
    "Not declared, it is left out of `spec.json`, so older specs keep their digests.",
)
def test_an_undeclared_sequential_is_not_in_the_spec(tmp_path: Path) -> None:
    plain = load_spec(simple_spec(tmp_path / "plain", gate={"minimum": 0.8}))
    declared = load_spec(simple_spec(tmp_path / "seq", gate={**SEQUENTIAL, "sequential": True}))
    assert b"sequential" not in plain.spec.canonical()
    assert b'"sequential":true' in declared.spec.canonical()
    assert [t.sample_index for t in plan(plain.spec, plain.dataset.ids)] == [0, 1, 2]


HANGS_AFTER_30 = """
import asyncio, os, pathlib

async def answer(text):
    marks = os.environ.get("HANG_MARKS")
    if marks:
        pathlib.Path(marks, text).touch()
        if len(os.listdir(marks)) > 30:
            await asyncio.sleep(60)
    return "no" if int(text[1:]) % 25 == 0 else text
"""


def test_a_resumed_sequential_run_looks_again_stops_and_verifies(tmp_path: Path) -> None:
    """Interrupted after 30 trials, then resumed: the finished trials are fed to the gate
    again (their looks recorded again), the run stops when decided, and verifies."""
    spec = unique_callable_spec(tmp_path, HANGS_AFTER_30, samples=samples(300, 25), gate=SEQUENTIAL)
    run, marks = tmp_path / "run", tmp_path / "marks"
    marks.mkdir()
    proc = start_cli("run", spec, "--output", run, "-j", "4", env={"HANG_MARKS": str(marks)})
    assert wait_for(lambda: len(list(marks.iterdir())) >= 34, timeout=60)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"
    assert not events_of(run, "stopped")
    resumed = run_cli("resume", run)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    [stopped] = events_of(run, "stopped")
    assert len(read_jsonl(run / "bundles.jsonl")) < 300
    assert stopped["data"]["samples"] == events_of(run, "look")[-1]["data"]["samples"]
    assert run_cli("verify", run).returncode == 0
