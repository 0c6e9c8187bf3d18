"""The texts report.html opens a trial on, read back from the run as the report is made:
found through the packs' indexes (or one pass over a pack without one), never through
an index of every artifact held in memory, and the same either way."""

from __future__ import annotations

from pathlib import Path

from assay.evidence import ArtifactStore
from assay.report._details import read_details
from tests.helpers import read_jsonl, run_spec_at, unique_callable_spec

ANSWERS = """
def answer(text):
    return text if not text.endswith("7") else "seven"
"""
SAMPLES = [{"id": f"s{i:03d}", "input": f"q{i}", "expected": f"q{i}"} for i in range(150)]


def _run(tmp_path: Path) -> Path:
    spec = unique_callable_spec(tmp_path / "spec", ANSWERS, samples=SAMPLES, gate={})
    run_spec_at(spec, tmp_path / "run")
    return tmp_path / "run"


def test_every_listed_trial_gets_its_texts_with_or_without_the_pack_indexes(
    tmp_path: Path,
) -> None:
    """150 trials: more lookups than the store's few-lookups path takes (64)."""
    run = _run(tmp_path)
    ids = {
        b["trial"]["trial_id"]: b["trial"]["sample_id"] for b in read_jsonl(run / "bundles.jsonl")
    }
    indexed = read_details(run, set(ids))
    assert len(indexed) == len(SAMPLES)
    for trial_id, sample_id in ids.items():
        n = int(sample_id[1:])
        detail = indexed[trial_id]
        assert (detail.input, detail.expected) == (f"q{n}", f"q{n}")
        assert detail.answer == ("seven" if n % 10 == 7 else f"q{n}")
    indexes = list((run / "artifacts").glob("*.idx"))
    assert indexes  # a complete run's packs are indexed
    for index in indexes:
        index.unlink()
    assert read_details(run, set(ids)) == indexed  # one pass over each pack instead
    some = set(list(ids)[:3])
    assert read_details(run, some) == {t: indexed[t] for t in some}


def test_get_many_returns_the_stored_ones_only(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    small, large = b"small", b"x" * 70_000  # a pack record, and a loose file
    refs = [store.put(small, "text/plain"), store.put(large, "text/plain")]
    store.close()
    reader = ArtifactStore(tmp_path / "artifacts", write=False)
    absent = "0" * 64
    found = reader.get_many([refs[0].sha256, refs[1].sha256, absent])
    assert found == {refs[0].sha256: small, refs[1].sha256: large}
    assert reader.get_many([]) == {}


def test_a_bundle_line_is_skipped_undecoded_only_when_its_one_trial_id_is_not_wanted() -> None:
    """The report reads a bundle's trial id off its bytes to skip the other trials'
    lines; a line naming an id in its data too, or none it can read, is decoded."""
    from assay.report._details import _may_be

    wanted, other = "t-" + "a" * 24, "t-" + "b" * 24

    def line(*ids: str) -> bytes:
        data = ",".join(f'"trial_id":"{i}"' for i in ids[:-1])
        return f'{{"observation":{{{data}}},"trial":{{"trial_id":"{ids[-1]}"}}}}\n'.encode()

    ids = {wanted.encode()}
    assert _may_be(line(wanted), ids)
    assert not _may_be(line(other), ids)
    assert _may_be(line(wanted, other), ids)  # an id in its data: decoded, then judged
    assert _may_be(line(other, wanted), ids)
    assert _may_be(b'{"trial":{"trial_id":"s-1"}}\n', ids)  # not a t- id: decoded
    assert _may_be(line("t-" + "a" * 23), ids)  # not 24 digits: decoded
