"""Invariant 2: a trial id is stable (any process, machine, day) and unique per trial."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from assay.plan import trial_id

DOC = Path(__file__).resolve().parents[2] / "docs" / "evidence.md"

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
@pytest.mark.doc(
    "docs/evidence.md",
    "So the same spec gives the same ids on any machine, and no choice of ids can make two "
    "trials hash the same bytes",
)
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
@pytest.mark.doc(
    "docs/evidence.md",
    "So the same spec gives the same ids on any machine, and no choice of ids can make two "
    "trials hash the same bytes",
)
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


def doc_recipe() -> Callable[[str, str, str, int], str]:
    """The Python recipe docs/evidence.md gives for a trial id, taken from the doc itself
    and run with nothing but hashlib and json: a stranger's way of recomputing an id."""
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    found = re.search(r"In Python: `(.+?)`\. ", text)
    assert found is not None, "docs/evidence.md no longer gives the trial id recipe"
    expression = found.group(1)

    def recipe(evaluation: str, target: str, sample: str, repetition: int) -> str:
        names = {"hashlib": hashlib, "json": json}
        coordinates = {
            "evaluation": evaluation,
            "target": target,
            "sample": sample,
            "repetition": repetition,
        }
        return str(eval(expression, names, coordinates))  # the doc's own code

    return recipe


@pytest.mark.doc(
    "docs/evidence.md",
    "A trial id is `t-` + the first 24 hex digits of the SHA-256 of the JSON array",
    'In Python: `"t-" + hashlib.sha256(json.dumps([evaluation, target, sample,',
)
def test_trial_ids_are_pinned() -> None:
    """Any day: these ids were computed once and must never change, and the doc's recipe
    gives them too."""
    pinned = "t-30708b62b12207fa7d4cb53a"
    assert trial_id("shipping-fee", "buggy-release", "order-100", 1) == pinned
    assert doc_recipe()("shipping-fee", "buggy-release", "order-100", 1) == pinned
    # the bytes the doc describes, spelled out by hand
    key = b'["shipping-fee","buggy-release","order-100",1]'
    assert "t-" + hashlib.sha256(key).hexdigest()[:24] == pinned
    assert trial_id("shipping-fee", "fixed-release", "order-100", 1) == trial_id(
        "shipping-fee", "fixed-release", "order-100", 1
    )


@pytest.mark.doc(
    "docs/evidence.md",
    "So the same spec gives the same ids on any machine, and no choice of ids can make two "
    "trials hash the same bytes",
)
def test_separator_in_a_coordinate_cannot_collide() -> None:
    assert trial_id("a\x1fb", "c", "s", 1) != trial_id("a", "b\x1fc", "s", 1)


@pytest.mark.doc(
    "docs/evidence.md",
    "A trial id is `t-` + the first 24 hex digits of the SHA-256 of the JSON array",
    'In Python: `"t-" + hashlib.sha256(json.dumps([evaluation, target, sample,',
)
def test_the_docs_recipe_gives_every_trial_id() -> None:
    """Non-ASCII text, quotes, backslashes, control characters (U+001F, a newline),
    U+2028 and emoji in the ids: the doc's recipe and ``trial_id`` hash the same bytes."""
    recipe = doc_recipe()
    awkward = [
        ("é运费", "t", "🚚", 1),
        ("e", 'say "hi"', "back\\slash", 2),
        ("e", "t", "\x1f\n\x00\x7f\u2028", 10_000),
        ("e", "t", "", 1),
        ("e", "t", "12", 3),  # an integer sample id, planned as its text
    ]
    for coords in [*awkward, *_varied_coordinates(2000)]:
        assert recipe(*coords) == trial_id(*coords), coords


@settings(max_examples=300, database=None, deadline=None)
@given(coordinates)
@pytest.mark.doc(
    "docs/evidence.md",
    'In Python: `"t-" + hashlib.sha256(json.dumps([evaluation, target, sample,',
)
def test_the_docs_recipe_agrees_on_any_coordinates(coords: tuple[str, str, str, int]) -> None:
    assert doc_recipe()(*coords) == trial_id(*coords)
