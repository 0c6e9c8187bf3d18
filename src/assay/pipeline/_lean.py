"""The trial path of a run that uses none of the per-trial options, decided once a run.

``_Run._trial`` serves every run: re-queued trials (``retry_on_error``), sandboxes,
hooks, a sequential gate, a resumed run's unfinished trials. A run with none of them
(most runs; the trivial task of issue 19) takes ``lean_runner``'s closure instead: the
same calls in the same order, so the same evidence, without the checks for what the run
does not use, with the run's parts looked up once, not once a trial, and straight off
the plan (no ``WorkQueue`` in between: nothing is ever re-queued nor stopped). A run
scored by one built-in answer scorer (``match``...) judges a trial its answer settles
without the scoring phase's scopes (``answer_judging``'s judge records no event and
calls no model); any other trial is judged in them, as ``_Run._trial`` does.
``tests/pipeline/test_lean.py`` pins its evidence to the general path's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from assay.evidence import TrialRecorder
from assay.evidence._bundle import seal_spliceable
from assay.evidence._recorder import CURRENT, SCORING
from assay.model import epoch_scope
from assay.pipeline._bundle_of import bundle_of
from assay.pipeline._judge import answer_judging
from assay.pipeline._judge import judge as full_judge
from assay.plan import Trial
from assay.run import run_trial

if TYPE_CHECKING:
    from assay.pipeline._run import _Run

Judge = Callable[..., Awaitable[list[dict[str, Any]]]]


def lean_fits(run: _Run) -> bool:
    """Whether *run* needs none of what only ``_Run._trial`` does for a trial."""
    return not (
        run.sandboxes.needed
        or run.hooks is not None
        or run.monitor is not None
        or run.point is not None  # a resumed run may hold unfinished trials
        or run.errors.retry_on_error
    )


def lean_runner(run: _Run, judge: Judge) -> Callable[[Trial], Awaitable[None]]:
    """What the executor calls per trial of a run that ``lean_fits``: ``_Run._trial``'s
    steps for a planned trial, with *judge* (``_run.judge``) and the run's parts bound."""
    from assay.pipeline._run import record_score, record_scores

    writer = run.writer
    log, store, write_bundle = writer.log, writer.store, writer.write_bundle
    sample_at, hidden = run.dataset.sample, run.spec.hidden_fields
    targets, retry, rng = run.targets, run.spec.retry, run.rng
    scorers, metrics, rows, task_metrics, raw = (
        run.scorers,
        run.metrics,
        run.rows,
        run.task_metrics,
        run.raw,
    )
    after_trial = run.after_trial
    # one built-in answer scorer: a trial its answer settles needs no scoring phase
    # (it records nothing, calls no model); ``judge`` is the real one (a bench patch
    # may give another)
    quick = answer_judging(scorers, metrics, rows, task_metrics) if judge is full_judge else None
    each = judge if quick is None else partial(full_judge, short=False)  # when it did not

    async def scored(
        trial: Trial, bundle: dict[str, Any], output: bytes | None, recorder: TrialRecorder
    ) -> list[dict[str, Any]]:
        """The judging of a trial in the scoring phase: events under its root, its model
        calls the scorer's, its epoch current."""
        judging = each(bundle, output, scorers, metrics, rows, task_metrics, raw)
        outer, recorder.parent = recorder.parent, recorder.root  # scoring_phase(),
        scoring = SCORING.set(recorder)  # inlined
        try:
            with epoch_scope(trial.repetition):
                return await judging
        finally:
            SCORING.reset(scoring)
            recorder.parent = outer

    async def lean(trial: Trial) -> None:
        recorder = TrialRecorder(log, store, trial.trial_id)
        sample = sample_at(trial.sample_index)
        record = sample.to_record(hidden)
        bound = CURRENT.set(recorder)  # recorder.bound(), for the trial and its judging
        try:
            result = await run_trial(
                trial, sample, record, targets[trial.target_id], recorder, retry, rng
            )
            bundle = bundle_of(result, recorder, record["expected"])
            if len(result.attempts) > 1:
                run.retries += len(result.attempts) - 1
            line, digest = seal_spliceable(bundle)  # bundle_of's keys
            write_bundle(line)
            outcome = result.outcome
            output, answer = (None, None) if outcome is None else (outcome.output, outcome.answer)
            score = None if quick is None else quick(bundle, output, answer)
            if score is None:
                records = await scored(trial, bundle, output, recorder)
        finally:
            CURRENT.reset(bound)
        if run.ahead is not None and rows.kept_last:  # the report lists it
            run.ahead.offer(line)
        if score is None:
            record_scores(writer, recorder, digest, records)
        else:  # its one score line, without record_scores' list
            record_score(writer, recorder, digest, score)
        after_trial(outcome)

    return lean
