"""The artifact store's de-duplication of recent payloads (``_store.RECENT``): two
generations of digests instead of an ordered dict kept in use order (issue 19, item 1).

Pinned: a repeat within ``RECENT // 2`` new digests is stored once; a payload used again
and again is stored once however long the run; what is remembered never exceeds
``RECENT``; and which puts write a record is exactly what the two-generation rule says
(an older duplicate merely stored twice), checked against a model of the rule.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.evidence import ArtifactStore, _store
from assay.evidence._pack import scan_headers

SMALL = 16  # RECENT in these tests: generations of 8


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ArtifactStore]:
    monkeypatch.setattr(_store, "RECENT", SMALL)
    made = ArtifactStore(tmp_path / "artifacts")
    yield made
    made.close()


def _records(store: ArtifactStore) -> list[str]:
    """The digests of the pack's records, in the order written."""
    ((name, _),) = store.written_packs().items()
    return [record.sha256 for record in scan_headers(store.root / name)]  # type: ignore[union-attr]


def _modelled(puts: list[int]) -> list[int]:
    """Which of *puts* write a record under the two-generation rule of ``RECENT``."""
    current: set[int] = set()
    older: set[int] = set()
    written = []
    for item in puts:
        if item in current:
            continue
        known = item in older
        current.add(item)
        if len(current) >= SMALL // 2:
            older, current = current, set()
        if not known:
            written.append(item)
    return written


def test_which_puts_are_stored_is_the_two_generation_rule(store: ArtifactStore) -> None:
    chooser = random.Random(19)
    puts = [chooser.randrange(40) for _ in range(2_000)]  # repeats near and far
    digests = [store.put_digest(b"payload %d" % item) for item in puts]
    by_item = dict(zip(puts, digests, strict=True))
    assert _records(store) == [by_item[item] for item in _modelled(puts)]


def test_a_recent_repeat_is_stored_once(store: ArtifactStore) -> None:
    first = store.put_digest(b"answer")
    for n in range(SMALL // 2 - 1):  # fewer new digests than a generation holds
        store.put_digest(b"other %d" % n)
    assert store.put_digest(b"answer") == first
    assert _records(store).count(first) == 1


def test_a_payload_every_trial_uses_is_stored_once_however_long_the_run(
    store: ArtifactStore,
) -> None:
    for n in range(50 * SMALL):  # many generations come and go around it
        store.put_digest(b"system prompt")
        store.put_digest(b"input %d" % n)
        store.put_digest(b"system prompt")
    records = _records(store)
    assert len(records) == 50 * SMALL + 1
    assert len(store._recent) + len(store._older) <= SMALL  # memory stays flat


def test_an_old_duplicate_is_stored_twice(store: ArtifactStore) -> None:
    first = store.put_digest(b"long ago")
    for n in range(SMALL):  # RECENT new digests: both generations have moved on
        store.put_digest(b"since %d" % n)
    assert store.put_digest(b"long ago") == first
    assert _records(store).count(first) == 2
