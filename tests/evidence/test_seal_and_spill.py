"""Two writers of the trial's hot path that build their bytes by hand instead of the
plain way (issue 19, item 1): each must give exactly the plain way's bytes.

- ``seal_bundle`` puts ``"digest"`` into the digested canonical JSON instead of encoding
  the bundle a second time;
- ``ArtifactStore`` keeps a pack's index entries in 256 buckets by first byte as it
  writes, spilling each to a scratch file past ``HELD`` bytes, and the seal sorts each
  bucket alone instead of every record.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from assay._digest import canonical_json
from assay.evidence import ArtifactStore, _buckets, _index, _store, seal_bundle
from assay.evidence._pack import scan_headers


def _bundle(**changes: Any) -> dict[str, Any]:
    bundle: dict[str, Any] = {
        "schema": "assay.bundle/1",
        "trial": {
            "index": 0,
            "trial_id": "t-1",
            "sample_id": "s",
            "target_id": "m",
            "repetition": 1,
        },
        "state": "completed",
        "canonical_attempt": {"attempt": 2, "event": 5},
        "attempts": [
            {"attempt": 1, "status": "infra_failed", "event": 2, "reason": ',"events":[1]'},
            {"attempt": 2, "status": "succeeded", "event": 5, "reason": None},
        ],
        "events": [[9, "a" * 64]],
        "artifacts": {"answer": "d" * 64, "events": "b" * 64, "output": "c" * 64},
        "observation": {"expected": {"events": [1, 2]}, "outcome": "answered"},
        "usage": {"calls": 1, "cost": None},
    }
    bundle.update(changes)
    return {k: v for k, v in bundle.items() if v is not None}


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"usage": None},
        {"events": []},
        {"events": None},  # no event list at all: encoded the plain way
        {"canonical_attempt": None, "attempts": [], "artifacts": {}},
        {"epoch": 2},  # a key added later that sorts between digest and events
        {"cluster": {"a": 1, "events": [1]}},  # ... or before them, holding an event list
    ],
)
def test_a_sealed_line_is_the_canonical_json_of_the_bundle_with_its_digest(
    changes: dict[str, Any],
) -> None:
    bundle = _bundle(**changes)
    body = canonical_json(bundle)
    line, digest = seal_bundle(bundle)
    assert digest == "sha256:" + hashlib.sha256(body).hexdigest()
    assert bundle["digest"] == digest
    assert line == canonical_json(bundle)


def test_spilled_index_entries_name_every_record_of_a_long_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = 2 * _index.PACK_ENTRY.size  # a bucket spills every second record
    monkeypatch.setattr(_store, "HELD", held)  # the store's inlined ``Buckets.add``
    monkeypatch.setattr(_buckets, "HELD", held)
    monkeypatch.setattr(_store, "RECENT", 64)
    root = tmp_path / "artifacts"
    store = ArtifactStore(root)
    count = 3 * 256 * 2 + 7  # each bucket spilled about three times, some held
    refs = [store.put(b"payload %d" % n, "text/plain") for n in range(count)]
    store.put(b"payload %d" % (count - 5), "text/plain")  # stored recently: not again
    wanted = [refs[0].sha256, refs[count // 2].sha256, refs[-1].sha256]
    found = store.get_many(wanted)  # the pack being written: through the entries
    assert found == {refs[i].sha256: b"payload %d" % i for i in (0, count // 2, count - 1)}
    store.put(b"after", "text/plain")  # the writer goes on after reading its entries
    store.put(b"payload 0", "text/plain")  # long forgotten: a second record, same bucket
    ((name, entries),) = store.written_packs().items()
    written = _index.write_pack_index(root / name, entries).read_bytes()
    store.close()
    copy = tmp_path / "copy" / name
    copy.parent.mkdir()
    copy.write_bytes((root / name).read_bytes())
    assert written == _index.write_pack_index(copy).read_bytes()  # scanned from the pack
    assert len(written) == _index.PACK_ENTRY.size * (count + 2)
    assert sum(1 for _ in scan_headers(root / name)) == count + 2
