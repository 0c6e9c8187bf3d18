"""What a finished run writes beside its evidence so it can be read fast and checked
whole: the bundle and pack indexes, and the whole-file digests the manifest lists."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from assay._digest import file_sha256, sha256_hex
from assay.evidence import (
    ARTIFACTS,
    BUNDLE_INDEX,
    BUNDLES,
    PLAN,
    SCORES,
    pack_names,
    write_bundle_index,
)
from assay.evidence._buckets import Buckets
from assay.evidence._index import pack_index_hashed


def write_indexes(
    path: Path,
    known: Mapping[str, Iterable[bytes] | Buckets] | None = None,
    bundles: tuple[int, Buckets] | None = None,
) -> dict[str, str]:
    """Write the bundle and pack indexes of a sealed run; their names, for the manifest,
    with their SHA-256 (hex), hashed as they were written (not read back: ~21 MB at
    100,000 trials). *known*: the index entries of packs this process wrote (the others
    are scanned); *bundles*: those of the bundle lines it wrote, and where they start."""
    names = {BUNDLE_INDEX: write_bundle_index(path / BUNDLES, path / BUNDLE_INDEX, bundles)}
    for pack in pack_names(path / ARTIFACTS):
        entries = (known or {}).get(pack)
        index, digest = pack_index_hashed(path / ARTIFACTS / pack, entries)
        names[f"{ARTIFACTS}/{index.name}"] = digest
    return names


def sealed_digests(
    path: Path,
    rendered: dict[str, bytes],
    indexes: Mapping[str, str],
    digest: Callable[[str], str] | None = None,
) -> dict[str, str]:
    """The manifest's ``files``: the record files, the reports (*rendered*, hashed as
    written) and the *indexes* (name: hex SHA-256, ``write_indexes``), each as
    ``sha256:<hex>``. *digest*: a record file's hex SHA-256 by name (the run's writer
    hashed most of them while it compacted them)."""
    # Hashed in chunks: bundles.jsonl is ~100 MB at 100,000 trials.
    record = digest or (lambda name: file_sha256(path / name))
    files = {name: "sha256:" + record(name) for name in (PLAN, BUNDLES, SCORES)}
    files.update({name: "sha256:" + sha256_hex(data) for name, data in rendered.items()})
    files.update({name: "sha256:" + hexdigest for name, hexdigest in indexes.items()})
    return files
