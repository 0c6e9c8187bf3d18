"""verify's fast paths find exactly what the slow ones they stand for find.

The event pass reads a usual batch or ``match`` line in one decode and packs the
artifacts model calls name (and the score lines ``match`` lines bind) a block at a
time; the bundle pass packs bundles' artifacts a few hundred at a time; a lookup of
digests asked in the order held is one comparison. Each falls back to the path it
replaces on anything unusual, so each is compared here with that path on the lines
that make it fall back: the findings, and every byte of the event pass's answer.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from assay.evidence import _verify_checker, _verify_events, _verify_refs
from assay.evidence._verify_checker import BundleRefs
from assay.evidence._verify_refs import DigestSet, RefBuilder, packed_digests, raw

SHA = "ab" * 32


def _edit(run: Path, kind: bytes, nth: int, change: Any) -> None:
    """Apply *change* to the *nth* line of ``events.jsonl`` whose type is *kind*."""
    path = run / "events.jsonl"
    lines = path.read_bytes().split(b"\n")
    found = [i for i, line in enumerate(lines) if b'"type":"%s"' % kind in line]
    lines[found[nth]] = change(lines[found[nth]])
    path.write_bytes(b"\n".join(lines))


def _tampered(run: Path) -> None:
    """Lines the one-decode path cannot read, or reads and finds wrong."""
    _edit(run, b"events", 0, lambda line: line[:-1] + b',"type":"events"}')  # a second type
    _edit(run, b"events", 1, lambda line: re.sub(rb'"trial":"[^"]+"', b'"trial":null', line))
    _edit(run, b"events", 2, lambda line: line.replace(b'"events":[', b'"eventz":[', 1))
    _edit(run, b"events", 3, lambda line: line.replace(b'{"n":2,', b'{"n":3,', 1))
    for nth in (0, 3):  # a model's call: the artifacts it names are referenced
        _edit(run, b"events", nth, _a_model_call)
    _edit(run, b"events", 3, lambda line: re.sub(rb'"output":"[0-9a-f]{64}"', b'"output":7', line))
    _edit(run, b"events", 4, lambda line: line.replace(b'"parent":1,', b'"parent":9,', 1))
    _edit(run, b"events", 4, lambda line: line.replace(b'"parent":null', b'"parent":1', 1))
    _edit(run, b"events", 5, lambda line: line + b"\n" + line)  # a trial's events again
    _edit(run, b"match", 0, lambda line: re.sub(rb'"trial":"[^"]+"', b'"trial":null', line))
    _edit(run, b"match", 1, lambda line: re.sub(rb'"record":"(.)', rb'"record":"Z', line))
    _edit(run, b"match", 2, lambda line: re.sub(rb'"record":"([0-9a-f]+)"', b'"record":7', line))


def _a_model_call(line: bytes) -> bytes:
    """The batch *line* with its first ``sampling`` event made a model's call."""
    return re.sub(rb'("type":"sampling","at":[0-9.]+,"data":\{)', rb'\1"model":"m",', line, count=1)


def _one_decode_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every line read as an ``_EventHead`` (the path before the one-decode read)."""

    def refuse(line: bytes) -> Any:
        raise msgspec.DecodeError("read the slow way")

    monkeypatch.setattr(_verify_events, "decode_line", refuse)


@pytest.mark.parametrize("tamper", [False, True])
def test_event_pass_answers_the_same_with_and_without_the_one_decode_read(
    run: Path, monkeypatch: pytest.MonkeyPatch, tamper: bool
) -> None:
    if tamper:
        _tampered(run)
    fast = msgspec.msgpack.encode(_verify_events.scan_events(str(run)))
    _one_decode_off(monkeypatch)
    slow = msgspec.msgpack.encode(_verify_events.scan_events(str(run)))
    assert fast == slow


def test_a_match_whose_data_is_not_an_object_ends_the_pass_the_same_way(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _edit(run, b"match", 3, lambda line: re.sub(rb'"data":\{.*\}\}$', b'"data":[1]}', line))
    fast = _verify_events.scan_events(str(run))
    assert not fast.readable
    _one_decode_off(monkeypatch)
    assert msgspec.msgpack.encode(fast) == msgspec.msgpack.encode(
        _verify_events.scan_events(str(run))
    )


def _one_at_a_time(entries: list[tuple[int, str, Any]]) -> _verify_refs.RefList:
    refs = RefBuilder()
    for entry in entries:
        refs._one(*entry)
    return _verify_refs.RefList(
        refs.lines.tobytes(), bytes(refs.fields), bytes(refs.shas), list(refs.names), refs.odd
    )


def test_references_packed_a_block_at_a_time_are_those_packed_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_verify_refs, "_SETTLE", 5)  # many blocks, some with odd entries
    entries: list[tuple[int, str, Any]] = [(i, "prompt", f"{i:064x}") for i in range(12)]
    entries[7] = (7, "output", SHA.upper())  # upper case: kept as read
    entries[9] = (9, "output", SHA[:-2])  # short
    entries += [(20, "output", 5), (21, "output", None), (22, "prompt", f"{SHA[:-1]} ")]
    entries += [(30 + i, f"files/{i}", SHA) for i in range(300)]  # names past 256
    refs = RefBuilder()
    for number, _, sha in entries[:4]:
        refs.add_call(number, sha, sha)
    for entry in entries[4:]:
        refs.add(*entry)
    pairs = [(n, f, s) for n, _, s in entries[:4] for f in ("prompt", "output")]
    assert refs.done() == _one_at_a_time(pairs + entries[4:])


def test_bundle_artifacts_packed_together_are_those_packed_one_bundle_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_verify_checker, "_SETTLE", 3)
    maps: list[dict[str, Any]] = [{"output": f"{i:064x}", "sample": SHA} for i in range(10)]
    maps[4] = {}
    maps[6] = {"output": SHA.upper()}
    maps[8] = {"output": 12, "sample": SHA}
    maps.append({"a": SHA[:63] + "g"})
    together, alone = BundleRefs(), BundleRefs()
    for number, refs in enumerate(maps):
        together.add(number, f"t-{number}", refs)
        alone._one(number, f"t-{number}", refs)
    together.done()
    for field in ("shas", "kinds", "names", "odd"):
        assert getattr(together, field) == getattr(alone, field), field


def test_bundle_artifacts_that_are_not_a_map_fail_as_they_are_read() -> None:
    refs = BundleRefs()
    refs.add(1, "t-1", {"output": SHA})
    with pytest.raises(AttributeError):
        refs.add(2, "t-2", [SHA])  # type: ignore[arg-type]
    assert bytes(refs.shas) == bytes.fromhex(SHA)  # the bundle before it was packed first


def test_packed_digests_leave_out_what_raw_does_not_pack() -> None:
    shas: list[Any] = [SHA, SHA.upper(), None, "12", f"{1:064x}", 3, SHA + "0"]
    assert packed_digests(shas) == b"".join(d for d in map(raw, shas) if d is not None)
    assert packed_digests([SHA, f"{1:064x}"]) == bytes.fromhex(SHA) + (1).to_bytes(32, "big")
    assert packed_digests([]) == b""


def test_digests_asked_in_the_order_held_are_all_found_and_others_are_not() -> None:
    known = [hashlib.sha256(b"%d" % i).digest() for i in range(5000)]
    held = DigestSet.of(b"".join(known))
    assert held.missing(b"".join(known)) == []
    changed = [*known[:4000], b"\x01" * 32, *known[4001:]]
    assert held.missing(b"".join(changed)) == [4000]
    assert held.missing(b"".join(reversed(known))) == []
    assert held.missing(b"".join(known[:-1])) == []


def _line_of(run: Path, kind: bytes, nth: int) -> int:
    lines = (run / "events.jsonl").read_bytes().split(b"\n")
    return [i for i, line in enumerate(lines, 1) if b'"type":"%s"' % kind in line][nth]


def test_a_trial_whose_events_start_again_is_named_out_of_order(run: Path) -> None:
    number = _line_of(run, b"events", 2) + 1
    _edit(run, b"events", 2, lambda line: line + b"\n" + line)
    found = _verify_events.scan_events(str(run)).findings
    assert (f"events.jsonl:{number}", "verify.event_order") in [f[:2] for f in found]


def test_a_model_call_in_a_batch_names_its_prompt_then_its_output(run: Path) -> None:
    number = _line_of(run, b"events", 1)
    _edit(run, b"events", 1, _a_model_call)
    line = (run / "events.jsonl").read_bytes().split(b"\n")[number - 1]
    prompt = re.search(rb'"prompt":"([0-9a-f]{64})"', line)
    output = re.search(rb'"output":"([0-9a-f]{64})"', line)
    assert prompt and output
    named = list(_verify_refs.entries(_verify_events.scan_events(str(run)).refs))
    assert named == [
        (number, "prompt", bytes.fromhex(prompt[1].decode())),
        (number, "output", bytes.fromhex(output[1].decode())),
    ]


def test_what_matches_bound_before_an_unreadable_line_is_kept(run: Path) -> None:
    _edit(run, b"match", 3, lambda line: re.sub(rb'"data":\{.*\}\}$', b'"data":[1]}', line))
    scan = _verify_events.scan_events(str(run))
    assert not scan.readable
    assert len(scan.score_hashes) == 32 * 3  # the three matches before it


@pytest.mark.parametrize(
    "shas",
    [[SHA.upper()], [SHA[:-2]], [7], [SHA[:-1] + " "], [SHA[:-1] + "é"], [SHA, SHA + "ab"]],
)
def test_digests_packed_at_once_are_only_what_raw_packs(shas: list[Any]) -> None:
    assert _verify_refs._packed_all([SHA, *shas, SHA]) is None
    assert _verify_checker._packed([SHA, *shas]) is None
    assert _verify_refs._packed_all([SHA, f"{1:064x}"]) == bytes.fromhex(SHA + f"{1:064x}")
