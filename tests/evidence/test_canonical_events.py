"""A bundle's event list must be its canonical JSON, byte for byte.

verify compares a bundle's list of ``[n, "event hash"]`` pairs with the log by hashing the
list as written against the same list built from the log. A list spelled otherwise
(white space, ``1.0`` for ``1``) decodes to equal values, so only that byte comparison
can catch it; to show that it does, the tests below re-seal the whole run around the
edit (bundle digest, score lines, ``match`` events, the chain, the file digests in
``run_finished`` and the manifest), so that every other check passes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.evidence import verify_run, write_bundle_index
from tests.evidence.test_tamper import assert_refused, run_cli_parallel

GENESIS = "0" * 64
EVENT_LIST = re.compile(rb'"events":(\[\[.*?\]\])')


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical(pairs: list[list[object]]) -> bytes:
    return json.dumps(pairs, separators=(",", ":")).encode()


def spaced(pairs: list[list[object]]) -> bytes:
    return json.dumps(pairs).encode()  # ", " between items: equal JSON, other bytes


def floats(pairs: list[list[object]]) -> bytes:
    first = b"[[%d," % pairs[0][0]  # the first line listed (a batch: its last event's n)
    return canonical(pairs).replace(first, first[:-1] + b".0,", 1)  # e.g. 6.0 for 6


Spelling = Callable[[list[list[object]]], bytes]


class Resealer:
    """Rewrites a run's records after an edit so that every digest agrees again."""

    def __init__(self, run: Path, victim: str, spelling: Spelling) -> None:
        self.run, self.victim, self.spelling = run, victim, spelling
        self.bundles = {
            json.loads(line)["trial"]["trial_id"]: line
            for line in (run / "bundles.jsonl").read_bytes().splitlines()
        }
        self.scores = (run / "scores.jsonl").read_bytes().splitlines()
        self.events: dict[str, str] = {}  # old event hash -> new
        self.digests: dict[str, str] = {}  # old bundle digest -> new
        self.records: dict[str, str] = {}  # old score line hash -> new
        self.done: set[str] = set()

    def bundle(self, trial: str) -> None:
        """Re-seal one bundle over the new hashes of its events (all logged already)."""
        if trial in self.done:
            return
        self.done.add(trial)
        line = self.bundles[trial]
        record = json.loads(line)
        pairs = [[n, self.events.get(h, h)] for n, h in record["events"]]
        spelled = self.spelling(pairs) if trial == self.victim else canonical(pairs)
        line = EVENT_LIST.sub(lambda _: b'"events":' + spelled, line, count=1)
        old = record["digest"]
        member = b'"digest":"%s",' % old.encode()
        new = "sha256:" + sha(line.replace(member, b"", 1))
        self.bundles[trial] = line.replace(old.encode(), new.encode(), 1)
        self.digests[old] = new
        for number, score in enumerate(self.scores):
            if old.encode() in score:
                changed = score.replace(old.encode(), new.encode())
                self.records[sha(score)] = sha(changed)
                self.scores[number] = changed

    def swap(self, data: bytes, *maps: dict[str, str]) -> bytes:
        for mapping in maps:
            for old, new in mapping.items():
                data = data.replace(old.encode(), new.encode())
        return data

    def files(self) -> dict[str, str]:
        """Write the record files and reports; the old and new whole-file digests."""
        for trial in self.bundles:
            self.bundle(trial)
        changed: dict[str, str] = {}
        contents = {
            "bundles.jsonl": b"".join(line + b"\n" for line in self.bundles.values()),
            "scores.jsonl": b"".join(line + b"\n" for line in self.scores),
        }
        for name in ("report.json", "report.md", "report.html"):
            contents[name] = self.swap((self.run / name).read_bytes(), self.digests, self.records)
        for name, data in contents.items():
            changed["sha256:" + sha((self.run / name).read_bytes())] = "sha256:" + sha(data)
            (self.run / name).write_bytes(data)
        index = self.run / "bundles.idx"
        before = "sha256:" + sha(index.read_bytes())
        write_bundle_index(self.run / "bundles.jsonl", index)
        changed[before] = "sha256:" + sha(index.read_bytes())
        return changed

    def reseal(self) -> None:
        path = self.run / "events.jsonl"
        lines, prev, file_digests = [], GENESIS, {}
        for line in path.read_bytes().splitlines():
            event = json.loads(line)
            new = line.replace(
                b'"prev":"%s"' % event["prev"].encode(), b'"prev":"%s"' % prev.encode()
            )
            if event["type"] == "match":
                self.bundle(event["trial"])
                new = self.swap(new, self.digests, self.records)
            if event["type"] == "run_finished":
                file_digests = self.files()
                new = self.swap(new, file_digests)
            self.events[sha(line)] = sha(new)
            prev = sha(new)
            lines.append(new)
        path.write_bytes(b"".join(line + b"\n" for line in lines))
        manifest = self.run / "manifest.json"
        data = self.swap(manifest.read_bytes(), file_digests, self.events)
        manifest.write_bytes(data)


def reseal(run: Path, spelling: Spelling) -> tuple[int, str]:
    """Spell the first bundle's event list with *spelling* and re-seal the run around it;
    the bundle's line number and trial id."""
    first = json.loads((run / "bundles.jsonl").read_bytes().splitlines()[0])
    trial = first["trial"]["trial_id"]
    Resealer(run, trial, spelling).reseal()
    return 1, trial


def test_a_resealed_run_with_canonical_lists_verifies(run: Path) -> None:
    """The control: re-sealing with the canonical spelling changes no byte, so the
    re-sealing itself leaves nothing for verify to find."""
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    reseal(run, canonical)
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before
    assert verify_run(run).ok


@pytest.mark.doc(
    "docs/evidence.md",
    "A bundle's event list must be its canonical JSON, byte for byte:",
)
@pytest.mark.parametrize("spelling", [spaced, floats], ids=["white-space", "1.0-for-1"])
def test_a_differently_spelled_event_list_is_reported_and_refused(
    run: Path, spelling: Spelling
) -> None:
    line, trial = reseal(run, spelling)
    listed = (run / "bundles.jsonl").read_bytes().splitlines()[0]
    assert EVENT_LIST.search(listed).group(1) == spelling(  # type: ignore[union-attr]
        json.loads(listed)["events"]
    )
    problems = verify_run(run).problems
    assert problems == [
        f"bundles.jsonl:{line} (trial {trial}): its events differ from those in events.jsonl"
    ]
    verify, score, gate = run_cli_parallel(
        ("verify", str(run)), ("score", str(run)), ("gate", str(run))
    )
    assert verify.returncode == 4, verify.stdout + verify.stderr
    assert f"bundles.jsonl:{line} (trial {trial})" in verify.stdout, verify.stdout
    assert_refused(score)
    assert_refused(gate)
