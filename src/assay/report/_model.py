"""The report object: one value from which report.json, report.md and report.html are made.

Building the three formats from one object means they cannot disagree. The JSON form is
the machine contract, documented in ``docs/report.md``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from assay.compare import PairedComparison
from assay.evidence import Usage
from assay.gate import GateDecision
from assay.report._usage_sums import UsageSums
from assay.score import Metrics

REPORT_SCHEMA = "assay.report/1"
MAX_TRIAL_ROWS = 1000


class TrialRow(msgspec.Struct, frozen=True):
    """One trial as a reviewer sees it: where it sits, how it ended, what each scorer said."""

    index: int
    trial_id: str
    target_id: str
    sample_id: str
    repetition: int
    state: str
    scores: dict[str, str]
    reasons: dict[str, str]
    bundle_digest: str
    usage: Usage | None = None
    grading_usage: dict[str, Usage] | None = None


class Report(msgspec.Struct, frozen=True):
    """Everything a report shows.

    ``comparisons`` holds the paired comparisons of a multi-target run (see
    ``assay.compare.compare_targets``): pass rates by McNemar and, for continuous scores
    or repetitions, mean scores per sample; it is empty for a single target.

    ``usage`` is what the targets' own model calls cost (the model under test);
    ``grading_usage`` what the scorers' calls cost (graders), by target and scorer.
    """

    evaluation: str
    description: str
    spec_digest: str
    run_status: str
    planned: int
    targets: list[str]
    scorers: list[str]
    metrics: Metrics
    gate: GateDecision
    trials: list[TrialRow]
    trials_omitted: int = 0
    assay_version: str = ""
    task_metrics: dict[str, Any] = {}
    comparisons: list[PairedComparison] = []
    usage: dict[str, Usage] = {}
    usage_total: Usage = msgspec.field(default_factory=Usage)
    grading_usage: dict[str, dict[str, Usage]] = {}
    grading_usage_total: Usage = msgspec.field(default_factory=Usage)
    schema: str = REPORT_SCHEMA


class TrialRows:
    """Collects the rows a report lists: every trial of a run of up to MAX_TRIAL_ROWS;
    past that, the non-passing trials first, then passing ones while room is left (a
    passing row gives its place to a non-passing one that comes later).

    Every row's usage is summed per target, and its grading usage per target and
    scorer, listed or not.
    """

    def __init__(self, planned: int) -> None:
        self.list_all = planned <= MAX_TRIAL_ROWS
        self.failing: list[TrialRow] = []
        self.passing: list[TrialRow] = []
        self.omitted = 0
        self.kept_last = False  # whether the last row added is listed (``DetailsAhead``)
        self.changes = 0  # rows kept so far: the list is as it was while this is (_ahead)
        self._usage = UsageSums()
        self.grading: dict[str, dict[str, Usage]] = {}

    @property
    def usage(self) -> dict[str, Usage]:
        """Every target's usage so far, from its first row on."""
        return self._usage.by_target()

    @property
    def rows(self) -> list[TrialRow]:
        """The rows kept so far (in no particular order)."""
        return self.failing + self.passing

    def add(self, row: TrialRow) -> None:
        """Keep *row* if the report lists it; count it as omitted otherwise."""
        self._count(row.target_id, row.usage, row.grading_usage)
        kept = self._place(all(status == "passed" for status in row.scores.values()))
        if kept is not None:
            kept.append(row)

    def add_judged(
        self,
        bundle: dict[str, Any],
        scores: dict[str, str],
        reasons: dict[str, str],
        grading: dict[str, Usage] | None,
    ) -> None:
        """``add`` of the row of a judged *bundle*, the row made only if the report lists
        it: past MAX_TRIAL_ROWS most trials are counted and dropped, and their usage is
        summed from the bundle's record without a ``Usage`` made for it."""
        target_id = bundle["trial"]["target_id"]
        if grading is not None:
            self._count(target_id, None, grading)
        self._usage.record(target_id, bundle.get("usage"))  # summed a batch at a time
        kept = self._place(all(map("passed".__eq__, scores.values())))  # no genexpr frame
        self.kept_last = kept is not None
        if kept is not None:
            kept.append(self._row(bundle, scores, reasons, grading))

    def add_scored(self, bundle: dict[str, Any], scorer_id: str, status: str, reason: str) -> None:
        """``add_judged`` of a bundle judged by one scorer, without grading: its scores
        and reasons made only if the report lists it."""
        self._usage.record(bundle["trial"]["target_id"], bundle.get("usage"))
        if self.omitted and status == "passed":  # _place's answer once the list is full
            self.omitted += 1  # (it stays full): a big run's common case, with no call
            self.kept_last = False
            return
        kept = self._place(status == "passed")
        self.kept_last = kept is not None
        if kept is not None:
            reasons = {scorer_id: reason} if reason else {}
            kept.append(self._row(bundle, {scorer_id: status}, reasons, None))

    @staticmethod
    def _row(
        bundle: dict[str, Any],
        scores: dict[str, str],
        reasons: dict[str, str],
        grading: dict[str, Usage] | None,
    ) -> TrialRow:
        trial = bundle["trial"]
        return TrialRow(
            trial["index"],
            trial["trial_id"],
            trial["target_id"],
            trial["sample_id"],
            trial["repetition"],
            bundle["state"],
            scores,
            reasons,
            bundle["digest"],
            Usage.of(bundle["usage"]) if "usage" in bundle else None,
            grading,
        )

    def _count(self, target_id: str, usage: Usage | None, grading: dict[str, Usage] | None) -> None:
        """Add a row's usage to its target's totals (made at its first row) and its
        grading usage to its target's and scorer's."""
        self._usage.add(target_id, usage)
        if grading is not None:
            graded = self.grading.setdefault(target_id, {})
            for scorer_id, used in grading.items():
                graded.setdefault(scorer_id, Usage()).add(used)

    def _place(self, passing: bool) -> list[TrialRow] | None:
        """The list a row goes in, or ``None`` when it is omitted (a passing row past
        the cap; or a non-passing one with no passing row left to give way)."""
        if self.list_all or len(self.failing) + len(self.passing) < MAX_TRIAL_ROWS:
            self.changes += 1
            return self.passing if passing else self.failing
        self.omitted += 1
        if not passing and self.passing:
            self.passing.pop()  # a passing row makes room for a non-passing one
            self.changes += 1
            return self.failing
        return None

    def kept(self) -> int:
        """How many rows are kept (the trials a report lists)."""
        return len(self.failing) + len(self.passing)

    def in_plan_order(self) -> list[TrialRow]:
        """The kept rows sorted by plan position."""
        return sorted(self.rows, key=lambda row: row.index)

    def usage_total(self) -> Usage:
        """The usage of every trial added, over all targets."""
        total = Usage()
        for usage in self.usage.values():
            total.add(usage)
        return total

    def grading_total(self) -> Usage:
        """The grading usage of every trial added, over all targets and scorers."""
        total = Usage()
        for by_scorer in self.grading.values():
            for usage in by_scorer.values():
                total.add(usage)
        return total
