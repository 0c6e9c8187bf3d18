"""Where a run's artifacts live, read the way docs/evidence.md ("Artifacts") describes
them, by a reader written here from the doc alone: loose files for large payloads, pack
records for small ones, and the sealed run's indexes, which nothing trusts."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest

from assay.evidence import ArtifactStore, pack_names, verify_run
from assay.evidence._framed import read_evidence
from tests.helpers import (
    error_line,
    log_events,
    read_jsonl,
    run_cli,
    run_spec_at,
    unique_callable_spec,
)

LOOSE_MIN = 65_536  # "A payload of 64 KiB (65,536 bytes) or more is a file"
HEADER = b"assay-artifact "
PACK_ENTRY = struct.Struct(">32sQQ")  # digest, payload offset, size
BUNDLE_ENTRY = struct.Struct(">12sQ")  # trial id's 24 hex digits as bytes, line offset

# Outputs of every size around the boundary (the output's bytes carry a little encoding
# around the text, so the sizes straddle 65,536 whatever it is), repeated twice.
SIZES = [10, *range(LOOSE_MIN - 8, LOOSE_MIN + 8)]
TARGET = """
def answer(n):
    return "x" * n
"""


def read_pack(path: Path) -> list[tuple[int, str, bytes]]:
    """``(payload offset, sha256 in the header, payload)`` of each record of a pack:
    the line ``assay-artifact <64 hex> <size>``, the payload, a newline."""
    data, position, records = read_evidence(path), 0, []  # plain or compacted
    while position < len(data):
        end = data.index(b"\n", position)
        header = data[position:end]
        assert header.startswith(HEADER), (path.name, position)
        sha, size = header[len(HEADER) :].decode("ascii").split(" ")
        start = end + 1
        payload = data[start : start + int(size)]
        assert data[start + int(size) : start + int(size) + 1] == b"\n", (path.name, position)
        records.append((start, sha, payload))
        position = start + int(size) + 1
    return records


def stored(run: Path) -> tuple[dict[str, bytes], dict[str, list[tuple[str, int, int]]]]:
    """Every loose file by its name, and every pack record by its header's digest (with
    the pack, offset and size of each copy)."""
    loose: dict[str, bytes] = {}
    packed: dict[str, list[tuple[str, int, int]]] = {}
    root = run / "artifacts"
    for entry in sorted(root.iterdir()):
        if entry.is_dir():
            for file in entry.iterdir():
                loose[file.name] = file.read_bytes()
        elif entry.name.startswith("pack-") and entry.suffix == ".bin":
            for offset, sha, payload in read_pack(entry):
                assert hashlib.sha256(payload).hexdigest() == sha
                packed.setdefault(sha, []).append((entry.name, offset, len(payload)))
    return loose, packed


def named_artifacts(run: Path) -> set[str]:
    """Every digest a bundle or an event names."""
    names: set[str] = set()
    for bundle in read_jsonl(run / "bundles.jsonl"):
        names.update(bundle["artifacts"].values())
    for event in log_events(run):
        for key in ("prompt", "output", "stderr"):
            value = event["data"].get(key)
            if isinstance(value, str) and len(value) == 64:
                names.add(value)
    return names


@pytest.fixture(scope="module")
def sized_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A run whose outputs straddle 64 KiB, each sample asked twice; and the final
    paths of the files ``os.replace`` put in place while it ran."""
    folder = tmp_path_factory.mktemp("sized")
    samples = [{"id": f"n{n}", "input": n, "expected": "x" * n} for n in SIZES]
    spec = unique_callable_spec(folder / "spec", TARGET, samples=samples, repetitions=2)
    out = folder / "run"
    renamed: list[str] = []
    real_replace = os.replace

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        renamed.append(f"{src} -> {dst}")
        real_replace(src, dst)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "replace", replace)
        run_spec_at(spec, out)
    return out, renamed


@pytest.mark.doc(
    "docs/evidence.md",
    "Every payload a run records (a sample less its hidden fields, an output, a prompt",
    "A payload of 64 KiB (65,536 bytes) or more is a file,",
    "A smaller one is a record appended to a pack, `artifacts/pack-NNNN.bin`:",
    "An artifact is found by its digest: the file of that name, else the pack record",
    "Records in a pack are the payloads' own bytes: a record's `size` is the length of its "
    "payload, and the digest in its header, like every artifact reference in the bundles and "
    "events, is the SHA-256 of the uncompressed payload.",
    "A loose file is written as `.<64 hex>.<pid>.tmp` in its folder first;",
)
def test_large_payloads_are_files_and_small_ones_pack_records(
    sized_run: tuple[Path, list[str]],
) -> None:
    run, renamed = sized_run
    assert verify_run(run).ok
    loose, packed = stored(run)
    named = named_artifacts(run)
    sizes = set()
    store = ArtifactStore(run / "artifacts", write=False)
    for sha in named:
        if sha in loose:
            data = loose[sha]
            assert len(data) >= LOOSE_MIN, (sha, len(data))
            assert sha not in packed
            path = run / "artifacts" / sha[:2] / sha
            # written under another name in the same folder, then renamed into place
            temp = path.parent / f".{sha}.{os.getpid()}.tmp"
            assert f"{temp} -> {path}" in renamed, path
        else:
            ((pack, offset, size),) = packed[sha]  # once, though every sample is asked twice
            assert size < LOOSE_MIN, (sha, size)
            with open(run / "artifacts" / pack, "rb") as handle:
                handle.seek(offset)
                data = handle.read(size)
        assert hashlib.sha256(data).hexdigest() == sha
        assert store.get(sha) == data  # assay finds it by its digest, file or pack
        sizes.add(len(data))
    assert min(sizes) < LOOSE_MIN - 1 and LOOSE_MIN - 1 in sizes and LOOSE_MIN in sizes, sizes
    assert set(loose) <= named and set(packed) <= named  # nothing stored that is not named


@pytest.mark.doc(
    "docs/evidence.md",
    "Sealing a run writes two kinds of index, and the manifest lists their digests:",
)
def test_the_sealed_indexes_are_sorted_fixed_records_the_manifest_lists(
    sized_run: tuple[Path, list[str]],
) -> None:
    run, _ = sized_run
    manifest = json.loads((run / "manifest.json").read_bytes())
    packs = [run / "artifacts" / name for name in pack_names(run / "artifacts")]
    assert packs
    for pack in packs:
        index = pack.with_suffix(".idx")
        entries = list(PACK_ENTRY.iter_unpack(index.read_bytes()))
        expected = sorted(
            (bytes.fromhex(sha), offset, len(payload)) for offset, sha, payload in read_pack(pack)
        )
        assert entries == expected
        name = f"artifacts/{index.name}"
        assert manifest["files"][name] == "sha256:" + hashlib.sha256(index.read_bytes()).hexdigest()
    lines = read_evidence(run / "bundles.jsonl").splitlines(keepends=True)
    offsets, at = [], 0
    for line in lines:
        trial = json.loads(line)["trial"]["trial_id"]
        offsets.append((bytes.fromhex(trial.removeprefix("t-")), at))
        at += len(line)
    index = (run / "bundles.idx").read_bytes()
    assert list(BUNDLE_ENTRY.iter_unpack(index)) == sorted(offsets)
    assert manifest["files"]["bundles.idx"] == "sha256:" + hashlib.sha256(index).hexdigest()


STOPPING = """
class Stop(BaseException):
    \"\"\"Stands for a crash: not an error of the target, it stops the run.\"\"\"


def answer(text):
    if text == "stop":
        raise Stop()
    return text
"""


def _repoint(index: Path, victim: str, to: tuple[int, int] | None) -> None:
    """Point *victim*'s entry of a pack index at another payload, or (None) drop it."""
    entries = list(PACK_ENTRY.iter_unpack(index.read_bytes()))
    key = bytes.fromhex(victim)
    changed = [
        entry if entry[0] != key else (key, *to) if to is not None else None for entry in entries
    ]
    index.write_bytes(b"".join(PACK_ENTRY.pack(*e) for e in changed if e is not None))


def _output_of(run: Path, sample: str) -> tuple[str, str]:
    """``(trial id, output digest)`` of the first trial of *sample*."""
    for bundle in read_jsonl(run / "bundles.jsonl"):
        if bundle["trial"]["sample_id"] == sample:
            return bundle["trial"]["trial_id"], bundle["observation"]["output"]
    raise AssertionError(sample)


@pytest.mark.doc(
    "docs/evidence.md",
    "They only make finding one trial's evidence in a big run fast",
    "and `verify` checks the packs and files directly, record by record, and the indexes",
)
def test_an_index_is_never_believed_over_the_bytes(run: Path, tmp_path: Path) -> None:
    """The shipping run: an index entry pointed at another record's payload, or dropped,
    makes ``assay show`` refuse the run instead of showing other bytes; verify names
    only the index's file (the packs it checks directly are whole)."""
    trial, output = _output_of(run, "order-100")
    (pack,) = (run / "artifacts").glob("pack-*.bin")
    index = pack.with_suffix(".idx")
    others = [(o, len(p)) for o, sha, p in read_pack(pack) if sha != output]

    pointed = tmp_path / "pointed"
    shutil.copytree(run, pointed)
    _repoint(pointed / "artifacts" / index.name, output, others[0])
    refused = run_cli("show", pointed, trial)
    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert f"output {output}" in error_line(refused)
    problems = verify_run(pointed).problems
    assert len(problems) == 1 and problems[0].startswith(f"artifacts/{index.name}:"), problems

    dropped = tmp_path / "dropped"
    shutil.copytree(run, dropped)
    _repoint(dropped / "artifacts" / index.name, output, None)
    refused = run_cli("show", dropped, trial)
    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert f"output {output}" in error_line(refused)
    problems = verify_run(dropped).problems
    assert len(problems) == 1 and problems[0].startswith(f"artifacts/{index.name}:"), problems


@pytest.mark.doc("docs/evidence.md", "An unsealed run has no indexes")
def test_an_unsealed_run_has_no_indexes(tmp_path: Path) -> None:
    """Indexes are written when the run is sealed: a run cut off before has none."""
    source = STOPPING
    samples: list[dict[str, Any]] = [
        {"id": "a", "input": "a", "expected": "a"},
        {"id": "b", "input": "stop", "expected": "stop"},
    ]
    spec = unique_callable_spec(tmp_path / "spec", source, samples=samples)
    out = tmp_path / "run"
    with pytest.raises(BaseException) as info:
        run_spec_at(spec, out, max_concurrency=1)
    assert "Stop" in repr(info.value)
    assert list((out / "artifacts").glob("pack-*.bin"))
    assert not list(out.rglob("*.idx"))


@pytest.mark.doc(
    "docs/evidence.md",
    "remembers the digests of the small payloads it met lately, in two generations of 8,192 "
    "(a resume starts with none): a payload met again within 8,192 others is not appended "
    "again, and one met again after 16,384 others is appended again (both records hold the "
    "same bytes, so either answers for the digest);",
)
def test_a_small_payload_is_stored_again_only_after_8192_to_16384_others(tmp_path: Path) -> None:
    root = tmp_path / "artifacts"
    store = ArtifactStore(root)
    first = store.put(b"again", "text/plain")
    store.put(b"again", "text/plain")  # recent: not appended
    for number in range(8_191):
        store.put(b"other %d" % number, "text/plain")
    store.put(b"again", "text/plain")  # 8,191 others since: still remembered
    store.put(b"one more", "text/plain")
    store.put(b"again", "text/plain")  # remembered still: it was met just now
    for number in range(16_384):
        store.put(b"later %d" % number, "text/plain")
    store.put(b"again", "text/plain")  # 16,384 others since: appended again
    store.close()
    records = read_pack(root / "pack-0001.bin")
    copies = [(offset, payload) for offset, sha, payload in records if sha == first.sha256]
    assert [payload for _, payload in copies] == [b"again", b"again"]
    assert len(records) == 2 + 8_191 + 1 + 16_384
    assert ArtifactStore(root, write=False).get(first.sha256) == b"again"


def test_many_artifacts_are_read_at_once_from_every_kind_of_place(tmp_path: Path) -> None:
    # get_many (what report.html's trial details read): the pack still being written
    # (through the entries its writer recorded), a pack with its .idx, a pack without
    # one (an earlier process's, unsealed), loose files; a digest stored nowhere is left out
    from assay.evidence import write_pack_index

    root = tmp_path / "artifacts"
    earlier = ArtifactStore(root)
    old = [earlier.put(b"old %d" % n, "text/plain").sha256 for n in range(3)]
    earlier.close()
    indexed = ArtifactStore(root)
    middle = [indexed.put(b"middle %d" % n, "text/plain").sha256 for n in range(3)]
    indexed.close()
    write_pack_index(root / "pack-0002.bin")
    store = ArtifactStore(root)
    new = [store.put(b"new %d" % n, "text/plain").sha256 for n in range(3)]
    big = store.put(b"b" * LOOSE_MIN, "text/plain").sha256
    absent = hashlib.sha256(b"never stored").hexdigest()
    wanted = [old[1], middle[0], middle[2], new[2], big, absent]
    found = store.get_many(wanted)
    store.put(b"after", "text/plain")  # the writer goes on appending
    store.close()
    assert found == {
        old[1]: b"old 1",
        middle[0]: b"middle 0",
        middle[2]: b"middle 2",
        new[2]: b"new 2",
        big: b"b" * LOOSE_MIN,
    }
    assert [sha for _, sha, _ in read_pack(root / "pack-0003.bin")] == [
        *new,
        hashlib.sha256(b"after").hexdigest(),
    ]
