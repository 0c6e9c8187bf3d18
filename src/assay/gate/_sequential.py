"""The sequential gate: look after every batch of samples, stop once every check is decided.

A fixed-n gate may be looked at once. Looking after each batch and stopping at the first
confident answer would inflate its error (issue 13: 10 looks, 8.8% false pass against
2.2%), so each look uses an *anytime-valid* confidence sequence instead: a sequence of
intervals that covers the true pass rate at every look at once with probability 1 − α.

For a candidate rate p, the beta-binomial mixture martingale over t samples whose
per-sample pass fractions sum to S is

    M_t(p) = B(a + S, b + t − S) / B(a, b) / (p^S (1 − p)^(t − S)).

Under p it is a nonnegative supermartingale (a per-sample fraction in [0, 1] is a mean of
Bernoulli trials, and the likelihood ratio is convex in it), so by Ville's inequality it
ever reaches 1/δ with probability at most δ. The confidence sequence is
{p : M_t(p) < 2m/α}: m is the number of gated checks (Bonferroni over them) and the 2
keeps each side's error at α/2, as the fixed-n gate's interval does. A check is
``passed`` when the minimum lies below the sequence (M_t(minimum) ≥ 2m/α with the observed
rate above it), ``failed`` when above, ``undecided`` otherwise. Everything is pure Python
(``math.lgamma``): a small run must not import scipy.

Looks are on a fixed schedule, at every ``every`` samples of the plan's completed prefix
(and at the whole plan), so the looks a run makes are a function of its scores alone:
``verify`` and ``assay gate`` recompute them (``replay_looks``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal

import msgspec

from assay.gate._decide import GateDecision, GateStatus, TargetDecision, _evidence_problems
from assay.score import Metrics
from assay.spec import EvalSpec, GatePolicy

PRIOR_WEIGHT = 10.0
"""The mixture's Beta(a, b) prior is centred on the check's minimum with a + b = 10 (each
at least 0.5): it spends its mass near the rates a check must tell apart, which stops a
clearly good or bad target sooner than a flat prior (see docs/statistics.md)."""

STOPPED = "stopped: decided"
"""The reason a trial the sequential gate did not need is ``not_run``."""

_ROUND = 6  # digits kept of a look's bounds (low rounded down, high up: never narrower)
_STEPS = 60  # bisection steps: 2^-60 of the unit interval

Decision = Literal["passed", "failed", "undecided"]


Prior = tuple[float, float]


def prior_for(minimum: float) -> Prior:
    """The Beta(a, b) prior of a check against *minimum* (see ``PRIOR_WEIGHT``)."""
    return max(0.5, PRIOR_WEIGHT * minimum), max(0.5, PRIOR_WEIGHT * (1.0 - minimum))


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def log_mixture(passed: float, samples: int, rate: float, prior: Prior) -> float:
    """log M_t(rate): evidence against *rate* after *samples* samples passing *passed*."""
    a, b = prior
    failed = samples - passed
    log_ratio = _log_beta(a + passed, b + failed) - _log_beta(a, b)
    return log_ratio - _log_likelihood(passed, failed, rate)


def _log_likelihood(passed: float, failed: float, rate: float) -> float:
    """log(rate^passed (1 − rate)^failed), with 0·log 0 = 0 and log 0 = −inf."""
    total = 0.0
    for count, chance in ((passed, rate), (failed, 1.0 - rate)):
        if count > 0:
            total += count * math.log(chance) if chance > 0 else -math.inf
    return total


def threshold(alpha: float, checks: int) -> float:
    """log(2m/α): the level M_t must reach to exclude a rate, for *checks* checks."""
    return math.log(2 * max(1, checks) / alpha)


def confidence_sequence(
    passed: float, samples: int, level: float, prior: Prior
) -> tuple[float, float]:
    """The sequence's interval after *samples* samples: the rates M_t stays below *level*
    at (an interval around the observed rate, where M_t ≤ 1)."""
    if samples == 0:
        return 0.0, 1.0
    centre = passed / samples
    ends = []
    for end in (0.0, 1.0):
        if log_mixture(passed, samples, end, prior) < level:
            ends.append(end)
        else:
            ends.append(_edge(passed, samples, level, prior, end, centre))
    return ends[0], ends[1]


def _edge(
    passed: float, samples: int, level: float, prior: Prior, outside: float, inside: float
) -> float:
    """Bisect between a rate the sequence excludes and one it holds; return the held end."""
    for _ in range(_STEPS):
        middle = (outside + inside) / 2
        if log_mixture(passed, samples, middle, prior) >= level:
            outside = middle
        else:
            inside = middle
    return inside


def decide_check(passed: float, samples: int, minimum: float, level: float) -> Decision:
    """``passed`` when the sequence lies above *minimum*, ``failed`` below, else undecided."""
    prior = prior_for(minimum)
    if samples == 0 or log_mixture(passed, samples, minimum, prior) < level:
        return "undecided"
    return "passed" if passed / samples > minimum else "failed"


class Check(msgspec.Struct, frozen=True):
    """One gated check at one look: a target's pass rate on one scorer against its minimum.

    ``passed`` counts passing trials in the prefix, ``trials`` all of them; with r
    repetitions the sum of per-sample pass fractions is ``passed / r``. ``problems``
    counts blocked, invalid, unscorable or errored trials: a check with any stays undecided.
    """

    target: str
    scorer: str
    minimum: float
    passed: int
    trials: int
    low: float
    high: float
    decision: Decision
    problems: int = 0


class Look(msgspec.Struct, frozen=True):
    """One look: the prefix of the plan it saw (in samples) and each check's state."""

    samples: int
    planned_samples: int
    checks: list[Check]
    decided: bool


class SequentialPlan:
    """What every look needs to know of the spec: the checks, the schedule, the level."""

    def __init__(self, spec: EvalSpec, scorer_ids: list[str]) -> None:
        policy = spec.gate
        stopping = policy.stopping
        assert stopping is not None, "only a sequential spec has looks"
        gated = [policy.scorer] if policy.scorer else scorer_ids
        self.targets = [t.id for t in spec.targets]
        self.checks = [
            (target, scorer, minimum)
            for target in self.targets
            if (minimum := policy.minimum_for(target)) is not None
            for scorer in gated
        ]
        self.scorers = gated
        self.every = stopping.every
        self.repetitions = spec.repetitions
        self.samples = spec.dataset.samples
        self.level = threshold(1.0 - policy.confidence_level, len(self.checks))

    def due(self, samples: int) -> bool:
        """Whether a look is scheduled once *samples* samples of the plan are complete."""
        return samples > 0 and (samples % self.every == 0 or samples == self.samples)

    def look(
        self, samples: int, sums: dict[tuple[str, str], int], problems: dict[str, int]
    ) -> Look:
        """The look at *samples* complete samples, with the prefix's pass counts."""
        checks = []
        for target, scorer, minimum in self.checks:
            passed = sums.get((target, scorer), 0)
            fraction = passed / self.repetitions
            low, high = confidence_sequence(fraction, samples, self.level, prior_for(minimum))
            decision = decide_check(fraction, samples, minimum, self.level)
            bad = problems.get(target, 0)
            checks.append(
                Check(
                    target,
                    scorer,
                    minimum,
                    passed,
                    samples * self.repetitions,
                    math.floor(low * 10**_ROUND) / 10**_ROUND,
                    math.ceil(high * 10**_ROUND) / 10**_ROUND,
                    "undecided" if bad else decision,
                    bad,
                )
            )
        decided = bool(checks) and all(c.decision != "undecided" for c in checks)
        return Look(samples, self.samples, checks, decided)


class Monitor:
    """Follows the plan's completed prefix as trials finish (in any order) and makes the
    scheduled looks; ``stopped`` once a look decides every check."""

    def __init__(self, plan: SequentialPlan) -> None:
        self.plan = plan
        per_sample = len(plan.targets) * plan.repetitions
        self.per_sample = per_sample
        self.left = [per_sample] * plan.samples  # unfinished trials per plan position
        self.passes: dict[int, dict[tuple[str, str], int]] = {}
        self.bad: dict[int, dict[str, int]] = {}
        self.front = 0  # samples complete at the front of the plan
        self.sums: dict[tuple[str, str], int] = {}
        self.problems: dict[str, int] = {}
        self.looks: list[Look] = []
        self.stopped = False

    def add(self, index: int, target: str, state: str, statuses: dict[str, str]) -> list[Look]:
        """Count the finished trial at plan *index*; the looks this completes (in order)."""
        position = index // self.per_sample
        passes = self.passes.setdefault(position, {})
        for scorer in self.plan.scorers:
            if statuses.get(scorer) == "passed":
                passes[(target, scorer)] = passes.get((target, scorer), 0) + 1
        scored_badly = any(statuses.get(s) in ("error", "unscorable") for s in self.plan.scorers)
        if state in ("blocked", "invalid") or scored_badly:
            bad = self.bad.setdefault(position, {})
            bad[target] = bad.get(target, 0) + 1
        self.left[position] -= 1
        return self._advance()

    def _advance(self) -> list[Look]:
        made = []
        while not self.stopped and self.front < self.plan.samples and not self.left[self.front]:
            for key, count in self.passes.pop(self.front, {}).items():
                self.sums[key] = self.sums.get(key, 0) + count
            for target, count in self.bad.pop(self.front, {}).items():
                self.problems[target] = self.problems.get(target, 0) + count
            self.front += 1
            if self.plan.due(self.front):
                look = self.plan.look(self.front, self.sums, self.problems)
                self.looks.append(look)
                made.append(look)
                self.stopped = look.decided and self.front < self.plan.samples
        return made


def replay_looks(
    spec: EvalSpec, scorer_ids: list[str], trials: Iterable[tuple[int, str, str, dict[str, str]]]
) -> Monitor:
    """The looks a run's scores imply: *trials* are (plan index, target, state, statuses
    by scorer) of every finished trial, in any order."""
    monitor = Monitor(SequentialPlan(spec, scorer_ids))
    for index, target, state, statuses in sorted(trials):
        monitor.add(index, target, state, statuses)
    return monitor


def look_event(look: Look) -> dict[str, Any]:
    """The data of a ``look`` event."""
    return msgspec.to_builtins(look)  # type: ignore[no-any-return]


def sequential_gate(
    policy: GatePolicy, fixed: GateDecision, metrics: Metrics, monitor: Monitor
) -> GateDecision:
    """The verdict of a sequential run: each target's checks as its last look left them.

    *fixed* is what ``decide`` said over the planned trials; its numbers are kept. Trials
    the stop left unrun are ``not_run`` (stopped: decided) and do not make a target
    inconclusive; any other evidence problem still does.
    """
    last = monitor.looks[-1] if monitor.looks else None
    targets = [_target(policy, d, metrics, last, monitor.stopped) for d in fixed.targets]
    statuses = {d.status for d in targets if d.gated}
    status: GateStatus = next((s for s in ("inconclusive", "failed") if s in statuses), "passed")
    reasons = [f"{d.target_id}: {r}" for d in targets if d.gated for r in d.reasons]
    return GateDecision(status, targets, reasons, fixed.baseline)


def _target(
    policy: GatePolicy,
    fixed: TargetDecision,
    metrics: Metrics,
    last: Look | None,
    stopped: bool,
) -> TargetDecision:
    checks = [c for c in (last.checks if last else []) if c.target == fixed.target_id]
    if not fixed.gated or not checks:
        return fixed
    scorers = [c.scorer for c in checks]
    problems = _evidence_problems(metrics, fixed.target_id, scorers)
    unrun = metrics.counts(fixed.target_id).states.get("not_run", 0)
    if stopped:  # the trials the stop left unrun: not run, so unscored too
        skipped = {f"{unrun} trial(s) not run", *(f"{s}: {unrun} unscored" for s in scorers)}
        problems = [p for p in problems if p not in skipped]
    numbers = {scorer: dict(values) for scorer, values in fixed.numbers.items()}
    for check in checks:
        numbers.setdefault(check.scorer, {}).update(
            cs_low=check.low,
            cs_high=check.high,
            looks_samples=last.samples if last else 0,
            looks_passed=check.passed,
            looks_trials=check.trials,
        )
    if problems:
        return msgspec.structs.replace(
            fixed, status="inconclusive", reasons=problems, numbers=numbers
        )
    outcomes = [_outcome(c, last) for c in checks]
    if stopped and unrun:
        outcomes.append(("passed", f"{unrun} trial(s) not run ({STOPPED})"))
    found = {s for s, _ in outcomes}
    status: GateStatus = next(s for s in ("inconclusive", "failed", "passed") if s in found)
    return msgspec.structs.replace(
        fixed, status=status, reasons=[r for _, r in outcomes], numbers=numbers
    )


def _outcome(check: Check, look: Look | None) -> tuple[GateStatus, str]:
    samples = look.samples if look else 0
    head = (
        f"{check.scorer}: {check.passed}/{check.trials} passed over the first {samples} "
        f"sample(s), confidence sequence [{check.low:.4g}, {check.high:.4g}]"
    )
    if check.decision == "passed":
        return "passed", f"{head}: lower bound meets the minimum {check.minimum:g}"
    if check.decision == "failed":
        return "failed", f"{head}: upper bound is below the minimum {check.minimum:g}"
    return "inconclusive", f"{head} contains the minimum {check.minimum:g}: too uncertain"
