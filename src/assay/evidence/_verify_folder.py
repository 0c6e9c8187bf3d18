"""What ``verify`` checks of the run folder itself: the manifest's exact bytes, and that
nothing is in the folder that assay does not write.

The manifest is written as canonical JSON (sorted keys, compact, UTF-8, no newline), so
its bytes are a function of its fields: a copy re-indented or with a space added is
caught although every field still matches. A file assay does not write (a stray report,
a note, a file dropped in ``artifacts/``) is no evidence, is checked by nothing, and a
reader of the folder could take it for part of the run: it is a problem too.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from assay._digest import canonical_json, loads
from assay.evidence._framed import SUFFIX
from assay.evidence._index import BUNDLE_INDEX
from assay.evidence._layout import (
    ARTIFACTS,
    ATTESTATION,
    BUNDLES,
    EVENTS,
    LEFTOVER,
    LOCK,
    MANIFEST,
    PLAN,
    REGATES,
    REPORTS,
    SCORES,
    SINK_FALLBACK,
    SPEC,
)
from assay.evidence._verify_checker import Checker

KNOWN_FILES = frozenset(
    {MANIFEST, SPEC, PLAN, EVENTS, BUNDLES, BUNDLE_INDEX, SCORES, *REPORTS}
    | {REGATES, SINK_FALLBACK, LOCK, ATTESTATION}
    | {name + SUFFIX for name in (PLAN, EVENTS, BUNDLES, SCORES)}
)
"""Every file assay writes at the top of a run folder (some only for some runs)."""

_PACK_FILE = re.compile(r"pack-[0-9]{4,}\.(bin|idx|bin\.zst)")
_HEX2 = re.compile(r"[0-9a-f]{2}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


def check_manifest_bytes(check: Checker) -> None:
    """The manifest's bytes must be the canonical encoding of what they decode to."""
    data = (check.path / MANIFEST).read_bytes()
    if canonical_json(loads(data)) != data:
        check.problem(MANIFEST, "verify.not_canonical")


def check_folder(check: Checker, *, sealed: bool) -> None:
    """Name every file in the run folder that assay does not write. Leftovers of an
    interrupted write (``.NAME.tmp``) are expected in an unfinished run only."""
    for name in sorted(_unknown(check.path, sealed=sealed)):
        check.problem(name, "verify.unknown_file")


def unsafe_entries(root: Path, *, sealed: bool) -> list[str]:
    """The entries assay does not write that are no regular file or folder (a link, a
    pipe, a device). Reading one might never end (a link to ``/dev/zero``) or wait
    forever (a pipe), so when there is any, verify names the folder's strays and reads
    nothing else."""
    return [name for name in _unknown(root, sealed=sealed) if not _plain(root / name)]


def _plain(path: Path) -> bool:
    mode = os.lstat(path).st_mode
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


def _unknown(root: Path, *, sealed: bool) -> list[str]:
    found = []
    for entry in os.scandir(root):
        if entry.name == ARTIFACTS and entry.is_dir(follow_symlinks=False):
            found += [
                f"{ARTIFACTS}/{name}" for name in _unknown_artifacts(root / ARTIFACTS, sealed)
            ]
        elif not (
            entry.is_file(follow_symlinks=False) and _known(entry.name, KNOWN_FILES, sealed)
        ) or (sealed and _twice(root, entry.name)):
            found.append(entry.name)
    return found


def _twice(root: Path, name: str) -> bool:
    """A ``.zst`` beside its plain file: a sealed run has one or the other (a kill
    while compacting leaves both in an unsealed run, which resume settles)."""
    return name.endswith(SUFFIX) and (root / name.removesuffix(SUFFIX)).exists()


def _unknown_artifacts(root: Path, sealed: bool) -> list[str]:
    found = []
    for entry in os.scandir(root):
        name = entry.name
        if _HEX2.fullmatch(name) and entry.is_dir(follow_symlinks=False):
            for inner in os.scandir(entry.path):
                loose = _HEX64.fullmatch(inner.name) and inner.name.startswith(name)
                leftover = not sealed and LEFTOVER.fullmatch(inner.name)
                if not (inner.is_file(follow_symlinks=False) and (loose or leftover)):
                    found.append(f"{name}/{inner.name}")
        elif not (
            entry.is_file(follow_symlinks=False)
            and (_PACK_FILE.fullmatch(name) or (not sealed and LEFTOVER.fullmatch(name)))
        ) or (sealed and _twice(root, name)):
            found.append(name)
    return found


def _known(name: str, known: frozenset[str], sealed: bool) -> bool:
    return name in known or (not sealed and LEFTOVER.fullmatch(name) is not None)
