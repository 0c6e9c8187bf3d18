"""The plan: sample × target × repetition, sample-major, fixing every denominator."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.plan import Plan, Trial, plan, trial_id
from assay.spec import DatasetRef, EvalSpec, ScorerSpec, TargetSpec, load_spec
from tests.helpers import REPO, SHIPPING, run_cli, simple_spec


def make_spec(evaluation: str, targets: list[str], repetitions: int) -> EvalSpec:
    return EvalSpec(
        evaluation=evaluation,
        dataset=DatasetRef(path="data.jsonl", digest="sha256:" + "0" * 64, samples=0),
        targets=tuple(TargetSpec(id=t, kind="callable", callable="m:f") for t in targets),
        scorers=(ScorerSpec(id="exact", kind="exact"),),
        repetitions=repetitions,
    )


shapes = st.tuples(
    st.lists(st.text(max_size=6), min_size=1, max_size=6, unique=True),
    st.lists(st.from_regex(r"\A[a-z][a-z0-9-]{0,6}\Z"), min_size=1, max_size=4, unique=True),
    st.integers(min_value=1, max_value=4),
)


@settings(max_examples=150, database=None, deadline=None)
@given(shapes)
@pytest.mark.doc(
    "docs/evidence.md",
    "The plan is sample-major: for each sample, each target, each repetition.",
)
def test_plan_shape_order_and_ids(shape: tuple[list[str], list[str], int]) -> None:
    samples, targets, reps = shape
    the_plan = plan(make_spec("ev", targets, reps), samples)
    trials = list(the_plan)

    assert len(the_plan) == len(trials) == len(samples) * len(targets) * reps
    expected = [
        (si, s, t, r) for si, s in enumerate(samples) for t in targets for r in range(1, reps + 1)
    ]
    assert [(x.sample_index, x.sample_id, x.target_id, x.repetition) for x in trials] == expected
    assert [x.index for x in trials] == list(range(len(trials)))
    assert len({x.trial_id for x in trials}) == len(trials)
    for x in trials:
        assert x.trial_id == trial_id("ev", x.target_id, x.sample_id, x.repetition)
    assert list(the_plan) == trials, "walking the plan twice gives the same trials"

    denominators = the_plan.denominators()
    assert denominators == dict.fromkeys(targets, len(samples) * reps)
    assert list(denominators) == targets
    assert sum(denominators.values()) == len(the_plan)
    for target in targets:
        assert sum(1 for x in trials if x.target_id == target) == denominators[target]


@pytest.mark.doc(
    "docs/evidence.md",
    "The plan is sample-major: for each sample, each target, each repetition.",
)
def test_plan_of_the_shipping_example() -> None:
    loaded = load_spec(SHIPPING / "eval.yaml")
    the_plan = plan(loaded.spec, loaded.dataset.ids)
    assert isinstance(the_plan, Plan)
    trials = list(the_plan)
    assert len(trials) == 6
    assert the_plan.denominators() == {"buggy-release": 3, "fixed-release": 3}
    # Sample-major: each sample is asked of both targets before the next sample.
    assert [(t.sample_index, t.target_id) for t in trials] == [
        (i, target) for i in range(3) for target in ("buggy-release", "fixed-release")
    ]
    assert all(isinstance(t, Trial) and t.repetition == 1 for t in trials)


def test_a_large_plan_costs_nothing_until_walked() -> None:
    samples = [str(i) for i in range(1_000_000)]
    the_plan = plan(make_spec("big", ["a", "b", "c"], 10), samples)
    assert len(the_plan) == 30_000_000
    assert the_plan.denominators() == {"a": 10_000_000, "b": 10_000_000, "c": 10_000_000}
    first = next(iter(the_plan))
    assert (first.index, first.sample_id, first.target_id, first.repetition) == (0, "0", "a", 1)


class _CountingSha256:
    """``hashlib`` as the plan module sees it, counting the SHA-256s it starts."""

    def __init__(self) -> None:
        self.made = 0

    def sha256(self, data: bytes = b"") -> Any:
        self.made += 1
        return hashlib.sha256(data)


def test_a_walked_plan_hashes_nothing_the_next_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run walks its plan twice (``plan.jsonl``, then the trials): the ids are hashed
    on the first whole walk only; a walk left half-way keeps nothing."""
    the_plan = plan(make_spec("ev", ["a", "b"], 2), ["s1", "s2", "s3"])
    counting = _CountingSha256()
    monkeypatch.setattr("assay.plan._plan.hashlib", counting)
    walk = iter(the_plan)
    half = [next(walk) for _ in range(5)]
    first = list(the_plan)
    second = list(the_plan)
    assert counting.made == 5 + len(the_plan)
    assert first == second and first[:5] == half
    for x in second:
        assert x.trial_id == trial_id("ev", x.target_id, x.sample_id, x.repetition)


def test_a_plan_past_the_kept_size_keeps_no_digests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``KEPT_UP_TO`` trials a walk keeps nothing: a million-trial run's memory
    follows its concurrency, not its plan; its walks hash the ids each time."""
    monkeypatch.setattr("assay.plan._plan.KEPT_UP_TO", 11)
    the_plan = plan(make_spec("ev", ["a", "b"], 2), ["s1", "s2", "s3"])  # 12 trials
    counting = _CountingSha256()
    monkeypatch.setattr("assay.plan._plan.hashlib", counting)
    first, second = list(the_plan), list(the_plan)
    assert counting.made == 2 * len(the_plan) and first == second
    assert the_plan._ids is None


def test_plan_is_the_same_in_another_process(tmp_path: Path) -> None:
    path = simple_spec(
        tmp_path,
        targets=[
            {"id": "a", "callable": "answers:echo"},
            {"id": "b", "callable": "answers:echo"},
        ],
        repetitions=3,
    )
    loaded = load_spec(path)
    here = [t.trial_id for t in plan(loaded.spec, loaded.dataset.ids)]
    code = (
        "import sys, json\n"
        "from pathlib import Path\n"
        "from assay.spec import load_spec\n"
        "from assay.plan import plan\n"
        "loaded = load_spec(Path(sys.argv[1]))\n"
        "print(json.dumps([t.trial_id for t in plan(loaded.spec, loaded.dataset.ids)]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONHASHSEED": "99"},
        check=True,
        timeout=60,
    )
    assert json.loads(proc.stdout) == here
    assert len(here) == 3 * 2 * 3 == len(set(here))


def test_two_runs_plan_identical_trials(tmp_path: Path) -> None:
    path = simple_spec(tmp_path / "suite", repetitions=2)
    plans = []
    for name in ("one", "two"):
        out = tmp_path / name
        proc = run_cli("run", path, "--output", out, "--max-concurrency", "3")
        assert proc.returncode == 0, proc.stderr
        plans.append((out / "plan.jsonl").read_bytes())
    assert plans[0] == plans[1]
    lines = [json.loads(line) for line in plans[0].splitlines()]
    loaded = load_spec(path)
    assert [line["trial_id"] for line in lines] == [
        t.trial_id for t in plan(loaded.spec, loaded.dataset.ids)
    ]
    assert [line["index"] for line in lines] == list(range(6))


@given(
    st.integers(0, 2**40),
    st.text(max_size=30),
    st.text(max_size=30),
    st.integers(1, 1000),
)
@settings(max_examples=50, deadline=None)
def test_a_plan_line_is_the_trials_fields_in_order_as_before(
    index: int, sample_id: str, target_id: str, repetition: int
) -> None:
    """The writer encodes the ``Trial`` itself (no dict made): the same bytes as its
    ``asdict``, which is what plan.jsonl always held."""
    import msgspec

    from assay._digest import fast_json

    trial = Trial(
        index, trial_id("e", target_id, sample_id, repetition), 3, sample_id, target_id, repetition
    )
    assert fast_json(trial) == fast_json(msgspec.structs.asdict(trial))


@settings(max_examples=100, database=None, deadline=None)
@given(
    st.text(max_size=12),
    st.lists(st.text(max_size=8), min_size=1, max_size=3, unique=True),
    st.lists(st.text(max_size=8), min_size=1, max_size=4, unique=True),
    st.integers(min_value=1, max_value=3),
)
def test_a_walk_spells_each_id_as_trial_id_does_whatever_the_names(
    evaluation: str, targets: list[str], samples: list[str], reps: int
) -> None:
    """A walk hashes the id's JSON array cut around the sample id (its head and tail
    made once a plan): the same id as ``trial_id`` for any evaluation and target
    names (quotes, backslashes, control and non-ASCII characters), on both walks."""
    the_plan = plan(make_spec(evaluation, targets, reps), samples)
    for walk in (list(the_plan), list(the_plan)):
        for x in walk:
            assert x.trial_id == trial_id(evaluation, x.target_id, x.sample_id, x.repetition)


def test_plan_jsonl_written_in_batches_is_a_line_per_trial_as_encoded_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer encodes the plan's trials a batch at a time: the file holds each
    trial's own encoding and a newline, in plan order, across the batches' edges."""
    from assay._digest import fast_json
    from assay.evidence import RunWriter

    monkeypatch.setattr("assay.evidence._rundir.PLAN_BATCH", 4)
    the_plan = plan(make_spec("ev", ["a", "b"], 3), ["s1", "s\u00e92", 's"3'])  # 18 trials
    writer = RunWriter(tmp_path / "run")
    try:
        writer.write_plan(the_plan)
        writer.plan_written()
    finally:
        writer.close()
    expected = b"".join(fast_json(t) + b"\n" for t in the_plan)
    assert (tmp_path / "run" / "plan.jsonl").read_bytes() == expected
    assert expected.count(b"\n") == 18
