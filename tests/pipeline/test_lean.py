"""The lean trial path (``assay.pipeline._lean``) writes what the general one does.

A run that uses none of the per-trial options takes the lean path; the same spec run
through ``_Run._trial`` (the lean path turned off) must leave the same evidence: the
same events (numbers, parents, types, data), artifacts, bundles and scores, timestamps
and the hashes that cover them aside. Each run checks which path it took, so a change
that quietly stops taking the lean path fails here too.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import assay.pipeline._run as run_module
from assay.evidence import verify_run
from assay.evidence._pack_format import MAGIC
from assay.pipeline._lean import lean_fits
from tests.helpers import (
    FAST_RETRY,
    log_events,
    read_jsonl,
    run_spec_at,
    unique_callable_spec,
)
from tests.pipeline.test_evidence_invariants import MIXED  # every kind of trial

KINDS = ["ok", "flaky", "wrong", "crash", "down", "ok2"]
TIMED = {"at", "prev", "seq", "digest", "bundle", "record", "bundle_digest", "events"}
"""Keys whose values follow the clock: timestamps, and hashes of lines that hold them."""


def _untimed(value: Any, timed: frozenset[str] | set[str] = TIMED) -> Any:
    if isinstance(value, dict):
        return {k: _untimed(v, timed) for k, v in value.items() if k not in timed}
    if isinstance(value, list):
        return [_untimed(v, timed) for v in value]
    return value


def _evidence(run: Path) -> dict[str, Any]:
    """What a run wrote, less what follows the clock, in an order the clock cannot move."""
    events = [
        (e["trial"], e["n"], e["parent"], e["type"], json.dumps(_untimed(e["data"])))
        for e in log_events(run)
        if e["trial"] is not None
    ]

    def lines(name: str) -> list[str]:
        return sorted(json.dumps(_untimed(r), sort_keys=True) for r in read_jsonl(run / name))

    packs = sorted((run / "artifacts").glob("pack-*.bin"))
    return {
        "events": sorted(events),
        "bundles": lines("bundles.jsonl"),
        "scores": lines("scores.jsonl"),
        "plan": (run / "plan.jsonl").read_bytes(),
        "artifacts": sorted(b"".join(p.read_bytes() for p in packs).split(MAGIC)),  # records
    }


def _run(tmp_path: Path, name: str, *, lean: bool, monkeypatch: pytest.MonkeyPatch) -> Path:
    taken: list[str] = []
    fits = lean_fits

    def spy(run: Any) -> bool:
        taken.append("lean" if fits(run) and lean else "general")
        return taken[-1] == "lean"

    monkeypatch.setattr(run_module, "lean_fits", spy)
    samples = [{"id": kind, "input": kind, "expected": kind} for kind in KINDS]
    scorers = [{"id": "exact", "type": "exact"}, {"id": "has", "type": "includes"}]
    spec = unique_callable_spec(
        tmp_path / f"spec-{name}", MIXED, samples=samples, retry=FAST_RETRY, scorers=scorers
    )
    out = tmp_path / name
    run_spec_at(spec, out, max_concurrency=3)
    assert taken == ["lean" if lean else "general"]
    return out


def test_the_lean_path_leaves_the_evidence_of_the_general_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lean = _run(tmp_path, "lean", lean=True, monkeypatch=monkeypatch)
    general = _run(tmp_path, "general", lean=False, monkeypatch=monkeypatch)
    assert verify_run(lean).ok and verify_run(general).ok
    ours, theirs = _evidence(lean), _evidence(general)
    assert {kind for *_, kind, _ in ours["events"]} >= {"extra", "error", "match", "sampling"}
    for part in ours:
        assert ours[part] == theirs[part], part


PER_TRIAL = {
    "sandboxes": {"sandboxes": SimpleNamespace(needed=True)},
    "hooks": {"hooks": object()},
    "sequential gate": {"monitor": object()},
    "resumed": {"point": object()},
    "retry_on_error": {"errors": SimpleNamespace(retry_on_error=1)},
}


@pytest.mark.parametrize("option", list(PER_TRIAL))
def test_a_run_using_a_per_trial_option_takes_the_general_path(option: str) -> None:
    plain: dict[str, Any] = {
        "sandboxes": SimpleNamespace(needed=False),
        "hooks": None,
        "monitor": None,
        "point": None,
        "errors": SimpleNamespace(retry_on_error=0),
    }
    assert lean_fits(SimpleNamespace(**plain))  # type: ignore[arg-type]
    assert not lean_fits(SimpleNamespace(**{**plain, **PER_TRIAL[option]}))  # type: ignore[arg-type]
