"""Invariant 2: a trial id is stable (any process, machine, day) and unique per trial."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from assay.plan import trial_id

# Evaluation and target ids are validated by the spec loader with this pattern;
# sample ids may be any text (or an integer, planned as its text).
ids = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,20}\Z")
sample_ids = st.text(max_size=12) | st.integers(min_value=-(10**12), max_value=10**12).map(str)
repetitions = st.integers(min_value=1, max_value=10_000)
coordinates = st.tuples(ids, ids, sample_ids, repetitions)

TRIAL_ID = re.compile(r"\At-[0-9a-f]{24}\Z")


@settings(max_examples=300, database=None, deadline=None)
@given(coordinates)
def test_trial_id_is_stable_and_well_formed(coords: tuple[str, str, str, int]) -> None:
    first = trial_id(*coords)
    assert TRIAL_ID.match(first)
    assert trial_id(*coords) == first


@settings(max_examples=100, database=None, deadline=None)
@given(st.sets(coordinates, min_size=2, max_size=40))
@example({("e", "t", "a\x1f1", 1), ("e", "t", "a", 11), ("e", "t", "a\x1f", 11)})
@example({("e", "t1", "s", 1), ("e", "t", "1s", 1), ("e", "t", "s", 11), ("e1", "t", "s", 1)})
def test_distinct_trials_get_distinct_ids(trials: set[tuple[str, str, str, int]]) -> None:
    assert len({trial_id(*c) for c in trials}) == len(trials)


@settings(max_examples=100, database=None, deadline=None)
@given(coordinates, st.sampled_from(range(4)), st.data())
def test_changing_any_coordinate_changes_the_id(
    coords: tuple[str, str, str, int], position: int, data: st.DataObject
) -> None:
    strategy = (ids, ids, sample_ids, repetitions)[position]
    replacement = data.draw(strategy.filter(lambda v: v != coords[position]))
    changed = list(coords)
    changed[position] = replacement
    assert trial_id(*coords) != trial_id(*changed)  # type: ignore[arg-type]


def _varied_coordinates(count: int) -> list[tuple[str, str, str, int]]:
    rng = random.Random(20240601)
    alphabet = "abcXYZ019._-"
    sample_alphabet = alphabet + " \x1f\n\"'\\/:|é运费🚚\u2028"
    result = []
    for _ in range(count):
        evaluation = rng.choice("aZ9") + "".join(rng.choices(alphabet, k=rng.randint(0, 12)))
        target = rng.choice("bY0") + "".join(rng.choices(alphabet, k=rng.randint(0, 12)))
        sample = "".join(rng.choices(sample_alphabet, k=rng.randint(0, 10)))
        result.append((evaluation, target, sample, rng.randint(1, 500)))
    return result


@pytest.mark.parametrize("hash_seed", ["0", "4242"])
def test_trial_ids_are_the_same_in_another_process(hash_seed: str) -> None:
    coords = _varied_coordinates(500)
    here = [trial_id(*c) for c in coords]
    assert len(set(here)) == len(coords)
    code = (
        "import json, sys\n"
        "from assay.plan import trial_id\n"
        "coords = json.load(sys.stdin)\n"
        "json.dump([trial_id(e, t, s, r) for e, t, s, r in coords], sys.stdout)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(coords),
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": hash_seed},
        check=True,
        timeout=60,
    )
    assert json.loads(proc.stdout) == here


def test_trial_ids_are_pinned() -> None:
    """Any day: these ids were computed once and must never change."""
    assert trial_id("shipping-fee", "buggy-release", "order-100", 1) == "t-30708b62b12207fa7d4cb53a"
    assert trial_id("shipping-fee", "fixed-release", "order-100", 1) == trial_id(
        "shipping-fee", "fixed-release", "order-100", 1
    )


def test_separator_in_a_coordinate_cannot_collide() -> None:
    assert trial_id("a\x1fb", "c", "s", 1) != trial_id("a", "b\x1fc", "s", 1)
