"""Python scorers: ``async (state, target) -> Score``, registered with ``@scorer``.

A Python scorer reads a TaskState rebuilt from the trial's evidence (never the live
state) and the sample's Target. Its ``Score.value`` is a letter (``C`` correct, ``I``
incorrect, ``P`` partial, ``N`` no answer), a bool or a number, or a dict or list of
those (metrics are then computed key by key; the score passes when every value is 1.0);
``value_to_float`` maps a scalar onto [0, 1] for metrics, and a value of 1.0 counts as
``passed`` for the gate. Any other value (``None``, a word, NaN, a nested dict) is
refused with ``InvalidScoreValue``, so the trial's score is an ``error`` naming it,
never a silent 0 or a pass.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, overload
from weakref import WeakKeyDictionary

import msgspec

from assay._registry import registered
from assay.score._text import target_values
from assay.solver import Target, TaskState

CORRECT = "C"
INCORRECT = "I"
PARTIAL = "P"
NOANSWER = "N"

ScalarValue = str | int | float | bool
"""A scalar score value."""

ScoreValue = ScalarValue | list[ScalarValue] | dict[str, ScalarValue]

Value = ScoreValue
"""Inspect's name for what a ``Score`` holds: a letter, number or bool, or a list or
dict of them."""

ValueToFloat = Callable[[ScoreValue], float]
"""Inspect's name for what ``value_to_float()`` returns."""
"""What ``Score.value`` may hold: a scalar, or (as in Inspect) a list or dict of them,
whose metrics are computed key by key."""


class Score(msgspec.Struct, omit_defaults=True):
    """A scorer's verdict on one trial."""

    value: ScoreValue
    answer: str | None = None
    explanation: str | None = None
    metadata: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        """The value as text (Inspect's ``Score.text``)."""
        return str(self.value)

    def as_str(self) -> str:
        """The value, which must be a string (a letter such as ``C``)."""
        if not isinstance(self.value, str):
            raise ValueError(f"Score value {self.value!r} is not a str")
        return self.value

    def as_int(self) -> int:
        """The value, which must be an int (not a bool)."""
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            raise ValueError(f"Score value {self.value!r} is not an int")
        return self.value

    def as_float(self) -> float:
        """The value as a float on the metrics' scale: letters (``C`` 1, ``P`` 0.5),
        bools and numbers, as ``value_to_float`` reads them."""
        return value_to_float(self.value)  # a dict or list is refused (InvalidScoreValue)

    def as_dict(self) -> dict[str, ScalarValue]:
        """The value, which must be a dict."""
        if not isinstance(self.value, dict):
            raise ValueError(f"Score value {self.value!r} is not a dict")
        return self.value

    def as_list(self) -> list[ScalarValue]:
        """The value, which must be a list."""
        if not isinstance(self.value, list):
            raise ValueError(f"Score value {self.value!r} is not a list")
        return self.value

    def as_bool(self) -> bool:
        """The value, which must be a bool."""
        if not isinstance(self.value, bool):
            raise ValueError(f"Score value {self.value!r} is not a bool")
        return self.value


class PythonScorer(Protocol):
    """The scorer protocol: judge the final state against the target."""

    async def __call__(self, state: TaskState, target: Target) -> Score:
        """Return the score of *state*."""
        ...


_LETTERS = {CORRECT: 1.0, INCORRECT: 0.0, PARTIAL: 0.5, NOANSWER: 0.0}


class InvalidScoreValue(ValueError):
    """A ``Score.value`` that is not a letter, a bool or a finite number."""

    def __init__(self, value: object) -> None:
        super().__init__(
            f"invalid Score value {value!r} ({type(value).__name__}): use C, I, P or N, "
            "a bool, or a finite number"
        )


_NO_VALUE: Any = object()


@overload
def value_to_float() -> Callable[[ScoreValue], float]: ...
@overload
def value_to_float(value: ScoreValue) -> float: ...
def value_to_float(value: ScoreValue = _NO_VALUE) -> float | Callable[[ScoreValue], float]:
    """Map a score value onto [0, 1]: letters, bools, numbers and numeric strings.

    Raises ``InvalidScoreValue`` for anything else: a value no metric can read must be
    an error, not a 0 that reads as a failed answer. Called with no value it returns
    itself, so a metric written for Inspect (``to_float = value_to_float()``, then
    ``to_float(item.score.value)``) runs unchanged.
    """
    if value is _NO_VALUE:
        return _to_float
    return _to_float(value)


def _to_float(value: ScoreValue) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, str) and value in _LETTERS:
        return _LETTERS[value]
    if isinstance(value, int | float | str):
        try:
            number = float(value)
        except ValueError:
            raise InvalidScoreValue(value) from None
        if math.isfinite(number):
            return number
    raise InvalidScoreValue(value)


Answered = tuple[bool, str | None, str | None]
"""A built-in scorer's judgement of the answer text: correct or not, the answer it read
and an explanation (``C`` or ``I``, as a ``Score``)."""

AnswerJudge = Callable[[str, list[str]], Answered]
"""How a built-in scorer judges the answer text alone (``match``, ``includes``...),
against the target's non-empty values (``target_values``: a sample with none is a
scorer error, never judged)."""

_answer_judges: WeakKeyDictionary[Callable[..., Any], AnswerJudge] = WeakKeyDictionary()


def answer_scorer(judge_answer: AnswerJudge, name: str) -> PythonScorer:
    """The Python scorer *name* of a built-in reading nothing but
    ``state.output.completion``, judged by *judge_answer* against the target's values;
    marked so the pipeline may judge it from the answer text without rebuilding the
    whole state (``answer_judge``). The mark is kept beside the function, not on it: a
    user's wrapper made with ``functools.wraps`` copies attributes, and must not be
    skipped."""

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion  # read first, as ever: the same error
        correct, answer, explanation = judge_answer(completion, target_values(target, name))
        value = CORRECT if correct else INCORRECT
        return Score(value=value, answer=answer, explanation=explanation)

    _answer_judges[score] = judge_answer
    return score


def answer_judge(scorer: object) -> AnswerJudge | None:
    """What judges *scorer* from the answer text alone, if it is so marked (``None``
    for any other scorer: it gets the whole rebuilt state)."""
    try:
        judge: AnswerJudge | None = _answer_judges.get(scorer)  # type: ignore[call-overload]
    except TypeError:  # not weakly referable or not hashable: never marked
        return None
    return judge


F = TypeVar("F", bound=Callable[..., Any])
METRICS_ATTR = "__assay_metrics__"


def scorer(
    metrics: list[Any] | dict[str, list[Any]] | None = None, name: str | None = None
) -> Callable[[F], F]:
    """Register a scorer factory; *metrics* are computed over its scores by default: a
    list, or (for dict-valued scores, as Inspect) a dict from score key (``"*"``: every
    other key) to the metrics of that key."""

    def decorate(factory: F) -> F:
        @functools.wraps(factory)
        def with_metrics(*args: Any, **kwargs: Any) -> Any:
            product = factory(*args, **kwargs)
            declared = dict(metrics) if isinstance(metrics, dict) else list(metrics or [])
            setattr(product, METRICS_ATTR, declared)
            return product

        # Registered after wrapping, so a scorer rebuilt by name keeps its metrics.
        made: F = registered("scorer", name or factory.__name__)(with_metrics)  # type: ignore[assignment]
        return made

    return decorate


def scorer_metrics(product: object) -> list[Any] | dict[str, list[Any]]:
    """The metrics a scorer was declared with (``[]`` if none; a dict by score key)."""
    declared = getattr(product, METRICS_ATTR, [])
    return dict(declared) if isinstance(declared, dict) else list(declared)
