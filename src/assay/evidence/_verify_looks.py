"""``verify`` for a sequential gate: every look and the stop must follow from the scores.

A sequential run's looks are on a fixed schedule (see ``assay.gate._sequential``), so the
plan, the bundles' states and the scores determine every look it could have made, the
first that decided every check, and so the trials it was entitled to leave unrun. Each
recorded ``look`` must equal the look recomputed at its prefix; the set of looks must be
the schedule up to the stop; a ``stopped`` event must sit at the look that decided; and a
complete run may lack bundles only for the trials its ``not_run`` event counts. Each
line of ``regates.jsonl`` (a look made later by ``assay gate`` or ``assay score``) must
chain to the one before (the first to the events head) and repeat the run's last look.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from assay._digest import loads, sha256_hex
from assay.evidence._layout import BUNDLES, EVENTS, PLAN, REGATES, SCORES
from assay.evidence._verify_checker import Checker

if TYPE_CHECKING:
    from assay.evidence._verify_events import EventScan
    from assay.spec import EvalSpec


class _PlanTrial(msgspec.Struct):
    index: int
    trial_id: str
    target_id: str


class _TrialId(msgspec.Struct):
    trial_id: str


class _BundleState(msgspec.Struct):
    trial: _TrialId
    state: str


class _ScoreStatus(msgspec.Struct):
    trial_id: str
    scorer_id: str
    status: str


def _finished(check: Checker) -> list[tuple[int, str, str, dict[str, str]]]:
    """(plan index, target, state, statuses by scorer) of every trial with a bundle."""
    planned: dict[str, tuple[int, str]] = {}
    for _, line in check.lines(PLAN):
        trial = msgspec.json.decode(line, type=_PlanTrial)
        planned[trial.trial_id] = (trial.index, trial.target_id)
    states: dict[str, str] = {}
    for _, line in check.lines(BUNDLES):
        bundle = msgspec.json.decode(line, type=_BundleState)
        states[bundle.trial.trial_id] = bundle.state
    statuses: dict[str, dict[str, str]] = {}
    for _, line in check.lines(SCORES):
        score = msgspec.json.decode(line, type=_ScoreStatus)
        statuses.setdefault(score.trial_id, {})[score.scorer_id] = score.status
    return [
        (*planned[tid], state, statuses.get(tid, {}))
        for tid, state in states.items()
        if tid in planned
    ]


def check_looks(check: Checker, spec: EvalSpec, manifest: dict[str, Any], scan: EventScan) -> None:
    """Recompute the looks from the scores and compare them with the recorded events."""
    from assay.gate._sequential import STOPPED, look_event, replay_looks

    scorers = [s.id for s in spec.scorers]
    monitor = replay_looks(spec, scorers, _finished(check))
    expected = {look.samples: look_event(look) for look in monitor.looks}
    stop_at = monitor.looks[-1].samples if monitor.stopped else None
    seen: set[int] = set()
    stops: list[int] = []
    unrun: int | None = None

    def wrong(line: int, kind: str, reason: str) -> None:
        check.problem(f"{EVENTS}:{line}", "verify.sequential", kind=kind, reason=reason)

    for line, kind, data in scan.sequential:
        samples = data.get("samples") if isinstance(data, dict) else None
        if kind == "look":
            if not isinstance(samples, int) or expected.get(samples) != data:
                wrong(line, kind, f"no such look at {samples} sample(s)")
            if isinstance(samples, int):
                seen.add(samples)
        elif kind == "stopped":
            stops.append(line)
            if samples != stop_at or data.get("reason") != STOPPED:
                wrong(line, kind, "no look decided every check there")
        elif kind == "not_run":
            unrun = data.get("trials") if isinstance(data, dict) else None
            if stop_at is None or data.get("reason") != STOPPED:
                wrong(line, kind, "the run did not stop")
    if manifest.get("status") != "complete":
        return
    last = look_event(monitor.looks[-1]) if monitor.looks else None
    _check_regates(check, manifest, last)
    if seen != set(expected):
        check.problem(EVENTS, "verify.sequential", kind="look", reason="looks missing")
    if stop_at is not None and not stops:
        check.problem(EVENTS, "verify.sequential", kind="stopped", reason="the stop is missing")
    bundles, planned = check.result.bundles, len(check.plan)
    allowed = planned - bundles if stop_at is not None and unrun == planned - bundles else 0
    if bundles + allowed != planned:
        check.problem(BUNDLES, "verify.bundle_count", found=bundles, planned=planned)


def _check_regates(check: Checker, manifest: dict[str, Any], last: Any) -> None:
    """The looks re-gating recorded: a chain from the events head, each the last look."""
    if not (check.path / REGATES).is_file():
        return
    previous = manifest.get("events_head")
    for number, line in check.lines(REGATES):
        record = loads(line)
        if not isinstance(record, dict) or record.get("prev") != previous:
            check.problem(f"{REGATES}:{number}", "verify.chain", previous=number - 1)
        elif record.get("look") != last:
            reason = "not the run's last look"
            check.problem(f"{REGATES}:{number}", "verify.sequential", kind="look", reason=reason)
        previous = sha256_hex(line)
