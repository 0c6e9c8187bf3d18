"""A trial judged by one built-in answer-text scorer (``match``, ``includes``, ``exact``)
takes the judge's short way: the verdict from the answer text, without the rebuilt state.
It must give the records, metrics, task metrics and report rows the general way gives,
and must not be taken for a scorer that is not such (a user's wrapper of one)."""

from __future__ import annotations

import functools
from typing import Any

import anyio
import msgspec

from assay._digest import canonical_json
from assay.model import ContentText, ModelOutput, assistant_message
from assay.pipeline._judge import judge
from assay.pipeline._task_metrics import TaskMetricsBuilder
from assay.report import TrialRows
from assay.score import (
    MetricsBuilder,
    PythonScorer,
    Score,
    accuracy,
    exact,
    from_python_scorer,
    includes,
    match,
    stderr,
)
from assay.score._score import answer_judge
from assay.solver import Target, TaskState

STATE_MEDIA = "application/vnd.assay.state+json"
ANSWERS = ["4", "The answer is 4.", "four", "  4 ", "$1,200.00", "x2", "", "4 apples", "Paris."]
TARGETS: list[Any] = ["4", "1200", ["paris", "4"], "", None, "  ", "Four"]


def _output(completion: str, parts: bool) -> bytes:
    state = TaskState(model="m", sample_id=1, epoch=1, input="q", target=Target("4"))
    message = assistant_message(completion)
    if parts:  # a list of parts: the completion is their text, joined
        message.content = [ContentText(completion), ContentText("tail")]
    state.output = ModelOutput("m", message)
    return canonical_json(state.to_record())


def _trials() -> list[tuple[dict[str, Any], bytes | None]]:
    """Bundles of varied answers and targets, with a few that are not answered in JSON
    (an error, a product failure, a text output) or whose bytes are no state record."""
    trials = []
    for index in range(len(ANSWERS) * len(TARGETS) * 2):
        answer, expected = ANSWERS[index % len(ANSWERS)], TARGETS[index % len(TARGETS)]
        outcome, media = "answered", STATE_MEDIA
        output: bytes | None = _output(answer, parts=index % 11 == 0)
        if index % 13 == 5:
            outcome = "error"
        elif index % 17 == 3:
            outcome, output = "product_failure", None
        elif index % 19 == 7:
            output = msgspec.json.encode({"output": {"message": {"content": answer}}})
        elif index % 23 == 4:
            media, output = "text/plain", answer.encode()
        bundle = {
            "trial": {
                "index": index,
                "trial_id": f"t-{index:024x}",
                "target_id": "target",
                "sample_id": f"s{index}",
                "repetition": 1,
            },
            "observation": {
                "expected": expected,
                "outcome": outcome,
                "media": media,
                "failure": "boom" if outcome != "answered" else None,
            },
            "state": "completed",
            "digest": f"sha256:{index:064x}",
            "usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3, "calls": 1},
        }
        trials.append((bundle, output))
    return trials


def _judged(product: PythonScorer, name: str) -> tuple[list[Any], Any, Any, Any]:
    """Every trial judged by *product*: the records, metrics, task metrics and rows."""
    trials = _trials()
    scorers: dict[str, Any] = {name: from_python_scorer(product)}
    metrics = MetricsBuilder({"target": len(trials)}, [name])
    rows = TrialRows(len(trials))
    tasks = TaskMetricsBuilder(
        1, ["mean"], {name: {"accuracy": accuracy(), "stderr": stderr()}}, len(trials)
    )
    records = []

    async def run() -> None:
        for bundle, output in trials:
            records.extend(await judge(bundle, output, scorers, metrics, rows, tasks, True))

    anyio.run(run)
    ids = [str(bundle["trial"]["sample_id"]) for bundle, _ in trials]
    return records, metrics.build(), tasks.build(ids), (rows.in_plan_order(), rows.usage)


def _general(product: PythonScorer) -> PythonScorer:
    """*product* as a scorer the judge knows nothing of: judged the general way."""

    async def score(state: TaskState, target: Target) -> Score:
        return await product(state, target)

    return score


def test_answer_scorers_judge_as_the_general_way_does() -> None:
    answer_scorers = [match(), match("begin"), match("any", numeric=True), match("exact")]
    for made in [*answer_scorers, includes(), exact()]:
        assert answer_judge(made) is not None
        assert _judged(made, "s") == _judged(_general(made), "s")


def test_the_short_way_is_taken_for_answered_trials_only(monkeypatch: Any) -> None:
    from assay.score import _adapter

    made = match()
    taken: list[bool] = []
    short = _adapter._Adapted.verdict_of_answer

    def counted(self: Any, data: bytes, expected: Any) -> Any:
        verdict = short(self, data, expected)
        taken.append(verdict is not None)
        return verdict

    monkeypatch.setattr(_adapter._Adapted, "verdict_of_answer", counted)
    _judged(made, "s")
    answered = [
        b["observation"]["outcome"] == "answered" and b["observation"]["media"] == STATE_MEDIA
        for b, _ in _trials()
    ]
    assert len(taken) == sum(answered)  # asked only of trials answered in JSON
    assert any(taken) and not all(taken)  # not of bytes that are no state, nor a bad target


def test_a_users_wrapper_of_a_builtin_is_judged_the_general_way() -> None:
    made = match()
    seen: list[str] = []

    @functools.wraps(made)  # copies the function's attributes
    async def wrapper(state: TaskState, target: Target) -> Score:
        seen.append(state.output.completion)
        score = await made(state, target)
        return Score(value="I", answer=score.answer)  # the wrapper fails every answer

    assert answer_judge(wrapper) is None
    records, *_ = _judged(wrapper, "s")
    assert seen and not any(r["status"] == "passed" for r in records)
