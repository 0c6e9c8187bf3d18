"""The findings of ``verify`` and the state its checks share, in one place.

Checks run in whatever order keeps both cores busy; ``Checker`` keeps each finding with
its file (section) and line, so ``listed`` gives them in file order whatever order they
were found in.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import Any

import msgspec

from assay._messages import say
from assay.evidence._framed import evidence_exists
from assay.evidence._layout import ARTIFACTS, BUNDLES, EVENTS, MANIFEST, PLAN, SCORES, SPEC
from assay.evidence._verify_events import line_chunks
from assay.evidence._verify_pack import Finding
from assay.evidence._verify_refs import DigestSet
from assay.plan import Shard

MAX_LISTED = 200


class VerifyResult(msgspec.Struct):
    """What verification found: problems (empty when the run verifies), counts, and notes
    about how it was checked that are not problems (the event pass redone in-process)."""

    problems: list[str]
    notes: list[str] = []
    trials: int = 0
    events: int = 0
    artifacts: int = 0
    bundles: int = 0
    scores: int = 0
    status: str = "complete"
    planned: int = 0

    @property
    def ok(self) -> bool:
        """True when nothing changed."""
        return not self.problems

    @property
    def unfinished(self) -> bool:
        """True for a run that was never sealed complete (killed, or interrupted): what it
        holds may verify, but it is not the whole run, and CI must be able to tell."""
        return self.status != "complete"


class Folds:
    """Each bundle's line number, trial id and the key of its folded event list (as
    ``fold_key`` makes it: what ``EventScan.folds`` holds for the trial's events), kept
    compact (a 100k run has 100,000: a tuple and a bytes object each would be 17 MB)."""

    def __init__(self) -> None:
        self.lines = array("q")
        self.trials: list[str] = []  # the same strings as the keys of ``Checker.bundles``
        self.folds = bytearray()  # 32 bytes each
        self.unkeyed: list[int] = []  # indexes of trial ids that are not strings (no key)

    def add(self, line: int, trial: str, fold: bytes) -> None:
        self.lines.append(line)
        self.trials.append(trial)
        self.folds += fold

    def __len__(self) -> int:
        return len(self.trials)

    def __iter__(self) -> Iterator[tuple[int, str, bytes]]:
        folds = bytes(self.folds)
        for i, trial in enumerate(self.trials):
            yield self.lines[i], trial, folds[32 * i : 32 * i + 32]


class BundleRefs:
    """The artifacts each bundle names, kept packed until the pack pass has answered
    (raw sha256s end to end, and per bundle an index into the distinct name lists:
    a 100k run's bundles name 200,000 artifacts under a handful of names).

    Bundles' artifact maps are taken as they come and packed a few thousand at a time
    (``done`` packs the last): when all of them name 64 lower-case hex digits, by one
    ``fromhex`` and one comparison in C; else bundle by bundle, as ``_packed`` says."""

    def __init__(self) -> None:
        self.shas = bytearray()
        self.kinds = array("I")  # per bundle (in ``Folds`` order): index into ``names``
        self.names: list[tuple[str, ...]] = []
        self._known: dict[tuple[str, ...], int] = {}
        self.odd: list[tuple[int, str, dict[str, Any]]] = []  # naming a non-sha256: kept whole
        self._pending: list[tuple[int, str, dict[str, Any]]] = []  # not packed yet

    def add(self, number: int, trial: str, refs: dict[str, Any]) -> None:
        if type(refs) is not dict:  # not a map (its failure is raised here, as read)
            self.done()
            self._one(number, trial, refs)
            return
        pending = self._pending
        pending.append((number, trial, refs))
        if len(pending) >= _SETTLE:
            self.done()

    def done(self) -> None:
        """Pack the bundles taken but not packed yet (all of them, at the end)."""
        pending, self._pending = self._pending, []
        maps = [refs for _, _, refs in pending]
        packed = _packed(list(chain.from_iterable(map(dict.values, maps))))
        if packed is None:  # something odd somewhere: bundle by bundle
            for entry in pending:
                self._one(*entry)
            return
        known, named = self._known, list(map(tuple, maps))
        for names in dict.fromkeys(named):  # name lists first seen here, in bundle order
            if names not in known:
                known[names] = len(self.names)
                self.names.append(names)
        self.kinds.extend(map(known.__getitem__, named))
        self.shas += packed

    def _one(self, number: int, trial: str, refs: dict[str, Any]) -> None:
        names = tuple(refs)
        shas = _packed(list(refs.values()))
        if shas is None:  # cannot be in the store: kept as read, for the message
            self.odd.append((number, trial, refs))
            names, shas = (), b""
        kind = self._known.get(names)
        if kind is None:
            kind = self._known[names] = len(self.names)
            self.names.append(names)
        self.kinds.append(kind)
        self.shas += shas


_SETTLE = 256  # bundles whose artifacts ``BundleRefs`` packs at once


def _packed(shas: list[Any]) -> bytes | None:
    """The 32 raw bytes of each sha256 of *shas*, end to end, as ``raw`` gives them one
    at a time (one ``fromhex`` for many); None if any is not such a digest."""
    try:
        joined = "".join(shas)  # a TypeError for anything but strings
        data = bytes.fromhex(joined)
    except (TypeError, ValueError):
        return None
    if len(set(map(len, shas))) > 1 or len(joined) != 64 * len(shas):
        return None  # lengths other than 64 (63 and 65 would join to 128)
    return data if data.hex() == joined else None


_ORDER = (SPEC, MANIFEST, PLAN, EVENTS, ARTIFACTS, BUNDLES, SCORES)  # how findings list


class Checker:
    """What a verify pass has found so far, and what later checks need of earlier ones."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.result = VerifyResult(problems=[])
        self.plan: set[str] = set()  # the planned trial ids
        self.trial_events = DigestSet()  # sha256 of trial id + fold (``EventScan``)
        self.artifacts = DigestSet()  # raw sha256 of each artifact that matches it
        self.bundles: dict[str, Any] = {}  # trial id → its digest (as read, if it matched)
        self.pending_folds = Folds()  # each bundle's line, trial and fold key
        self.bundle_refs = BundleRefs()  # each bundle's artifacts, checked after the packs
        self.score_hashes = DigestSet()  # sha256 of each score line a match binds
        self.score_lines = array("q")  # line number of each score line read
        self.score_digests = bytearray()  # and its raw sha256, 32 bytes each
        self.run_tail: tuple[str, Any] = ("", {})
        self.found: dict[str, list[tuple[int, int, int, str]]] = {}
        self.section, self.line = SPEC, 0
        self.manifest_files: set[str] = set()  # files whose whole digests the manifest lists
        self.file_digests: dict[str, str] = {}  # of those, the ones hashed here
        self.sequential = False  # a sequential gate may stop before the plan's end
        self.shard: Shard | None = None  # a shard run holds bundles of its part only
        self.part: set[str] = set()  # a shard's planned trial ids (all: ``plan``)

    def start(self, section: str) -> None:
        """Findings from now on are about *section* (they list in file order at the end,
        whatever order the sections were checked in)."""
        self.section, self.line = section, 0

    def problem(self, where: str, key: str, rank: int = 0, **params: object) -> None:
        """Note a finding about *where* (a file, maybe with a line), in the current language."""
        listed = self.found.setdefault(self.section, [])
        if len(listed) < MAX_LISTED:
            text = f"{where}: {say(key, **params)}"
            listed.append((self.line, rank, len(listed), text))

    def listed(self) -> list[str]:
        """Every finding: sections in file order, each by line (and by check within one)."""
        ordered = [text for name in _ORDER for *_, text in sorted(self.found.get(name, []))]
        return ordered[:MAX_LISTED]

    def lines(self, name: str) -> Iterator[tuple[int, bytes]]:
        """(line number, line) of the file *name*; a file the manifest lists is hashed
        whole on the way (kept only if read to its end)."""
        findings: list[Finding] = []
        whole = hashlib.sha256() if name in self.manifest_files else None
        number, unread = 0, False
        for chunk in line_chunks(self.path / name, name, findings, whole):
            if findings:  # a torn last line: named as the chunk holding it starts
                self.line = number + 1
                for where, key, params in findings:
                    self.problem(where, key, **params)
                findings.clear()
            for at, line in enumerate(chunk, number + 1):
                self.line = at
                yield at, line
            number += len(chunk)
        for where, key, params in findings:  # a missing file, or frames that do not read
            self.problem(where, key, **params)
            unread = unread or key == "verify.unreadable"
        if whole is not None and not unread and evidence_exists(self.path / name):
            self.file_digests[name] = "sha256:" + whole.hexdigest()
