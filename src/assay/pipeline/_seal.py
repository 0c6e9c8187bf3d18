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
    write_pack_index,
)
from assay.evidence._buckets import Buckets


def write_indexes(
    path: Path,
    known: Mapping[str, Iterable[bytes] | Buckets] | None = None,
    bundles: tuple[int, Buckets] | None = None,
) -> list[str]:
    """Write the bundle and pack indexes of a sealed run; their names, for the manifest.
    *known*: the index entries of packs this process wrote (the others are scanned);
    *bundles*: those of the bundle lines it wrote, and where they start."""
    names = []
    for pack in pack_names(path / ARTIFACTS):
        entries = (known or {}).get(pack)
        index = write_pack_index(path / ARTIFACTS / pack, entries)
        names.append(f"{ARTIFACTS}/{index.name}")
    write_bundle_index(path / BUNDLES, path / BUNDLE_INDEX, bundles)
    return [BUNDLE_INDEX, *names]


def sealed_digests(
    path: Path,
    rendered: dict[str, bytes],
    indexes: list[str],
    digest: Callable[[str], str] | None = None,
) -> dict[str, str]:
    """The manifest's ``files``: the record files, the reports (*rendered*, hashed as
    written) and the indexes, each as ``sha256:<hex>``. *digest*: a record file's hex
    SHA-256 by name (the run's writer hashed most of them while it compacted them)."""
    # Hashed in chunks: bundles.jsonl is ~100 MB at 100,000 trials.
    record = digest or (lambda name: file_sha256(path / name))
    files = {name: "sha256:" + record(name) for name in (PLAN, BUNDLES, SCORES)}
    files.update({name: "sha256:" + sha256_hex(data) for name, data in rendered.items()})
    files.update({name: "sha256:" + file_sha256(path / name) for name in indexes})
    return files
