"""``model_graded_qa`` and ``model_graded_fact``: a grader model judges the answer.

For open-ended answers no string rule is fair, so another model reads the question,
the answer and the criterion (the target) and replies with a grade: ``C`` correct,
``P`` partial (only offered with ``partial_credit``) or ``I`` incorrect. The grader's
reply is the score's explanation, and its call is recorded in the trial's evidence
like any other model call. Templates and instructions follow Inspect AI's.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from assay._registry import recorded_when_given
from assay.model import Model, get_model
from assay.model._registry import active_model, bound_role
from assay.score._metric import accuracy
from assay.score._score import INCORRECT, PythonScorer, Score, scorer
from assay.score._stats import stderr
from assay.solver import Target, TaskState

QA_TEMPLATE = """You are assessing a submitted answer on a given task based on a criterion. \
Here is the data:

[BEGIN DATA]
***
[Task]: {question}
***
[Submission]: {answer}
***
[Criterion]: {criterion}
***
[END DATA]

Does the submission meet the criterion?

{instructions}"""

FACT_TEMPLATE = """You are comparing a submitted answer to an expert answer on a given \
question. Here is the data:

[BEGIN DATA]
************
[Question]: {question}
************
[Expert]: {criterion}
************
[Submission]: {answer}
************
[END DATA]

Compare the factual content of the submitted answer with the expert answer. Ignore any \
differences in style, grammar, or punctuation.

Does the submission contain the content in the expert answer?

{instructions}"""

# Lenient about case and spacing ("grade : c"); the last grade in the reply wins, as
# the instructions ask the grader to end with it after its reasoning.
GRADE_PATTERN = r"(?i)GRADE\s*:\s*([CPI])"


def grading_instructions(partial_credit: bool) -> str:
    """The default instructions: reason step by step, then end with ``GRADE: X``."""
    grades = "CPI" if partial_credit else "CI"
    partial = '"P" for partially correct answers, ' if partial_credit else ""
    return (
        f"After assessing the submitted answer, reply with 'GRADE: $LETTER' (without "
        f"quotes) where LETTER is one of {grades}. Please choose ONE option for the "
        f'grade: either "C" for correct answers, {partial}or "I" for incorrect answers.\n\n'
        "For example, after reviewing a correct answer you might write 'GRADE: C' or "
        "after reviewing an incorrect answer you might write 'GRADE: I'.\n\n"
        "First, write out in a step by step manner your reasoning about the criterion "
        "to be sure that your conclusion is correct. Avoid simply stating the correct "
        "answers at the outset. Then, end with your answer formatted as 'GRADE: $LETTER' "
        f"(without quotes) where LETTER is one of {grades}."
    )


@scorer(metrics=[accuracy(), stderr()])
@recorded_when_given("include_history")
def model_graded_qa(
    template: str | None = None,
    instructions: str | None = None,
    grade_pattern: str = GRADE_PATTERN,
    partial_credit: bool = False,
    model: str | Model | None = None,
    model_role: str | None = "grader",
    include_history: bool | Callable[[TaskState], str] = False,
) -> PythonScorer:
    """A grader model decides whether the answer meets the criterion (the target).

    *template* may use ``{question}``, ``{answer}``, ``{criterion}``,
    ``{instructions}`` and any key of the sample's metadata. *model* is the grader;
    without it, the model bound to *model_role* (``Task(model_roles={"grader": ...})``
    or ``--model-role grader=...``), else the model that answered grades itself (cheap,
    but biased: prefer a stronger grader). A reply without a grade scores ``I``, with
    the reply as the explanation, so a broken grader shows up as wrong answers you can
    read; so does a ``P`` when *partial_credit* is off (the grader was not offered it).
    With *include_history* the question is the whole conversation up to the answer
    (``True``) or what the function makes of the state.
    """
    scorer = _graded(
        template or QA_TEMPLATE, instructions, grade_pattern, partial_credit, model, model_role
    )
    scorer.include_history = include_history
    return scorer


@scorer(metrics=[accuracy(), stderr()])
@recorded_when_given("include_history")
def model_graded_fact(
    template: str | None = None,
    instructions: str | None = None,
    grade_pattern: str = GRADE_PATTERN,
    partial_credit: bool = False,
    model: str | Model | None = None,
    model_role: str | None = "grader",
    include_history: bool | Callable[[TaskState], str] = False,
) -> PythonScorer:
    """A grader model checks that the answer contains the facts of the expert answer.

    Like ``model_graded_qa`` but the target is an expert answer to compare facts with,
    not a criterion, so style and wording differences do not count against it.
    """
    scorer = _graded(
        template or FACT_TEMPLATE, instructions, grade_pattern, partial_credit, model, model_role
    )
    scorer.include_history = include_history
    return scorer


def _graded(
    template: str,
    instructions: str | None,
    grade_pattern: str,
    partial_credit: bool,
    model: str | Model | None,
    model_role: str | None = "grader",
) -> _GradedScorer:
    compiled = re.compile(grade_pattern)
    if compiled.groups < 1:
        raise ValueError(f"grade_pattern {grade_pattern!r} needs a group capturing the grade")
    told = instructions if instructions is not None else grading_instructions(partial_credit)
    return _GradedScorer(template, told, compiled, partial_credit, model, model_role)


class _GradedScorer:
    """The scorer ``model_graded_*`` return: asks the grader, reads its grade.

    ``aclose`` (called by the run when it ends) closes its graders' connections, or
    stops a local model's server: those it built by name, and a ``Model`` passed in, as
    the run closes the model under test. Connections belong to the event loop that
    opened them, which ``assay.eval`` ends when it returns, so only the run can close
    them; a closed grader reconnects if it is asked again.
    """

    def __init__(
        self,
        template: str,
        instructions: str,
        compiled: re.Pattern[str],
        partial_credit: bool,
        model: str | Model | None,
        model_role: str | None = "grader",
    ) -> None:
        self.template = template
        self.instructions = instructions
        self.compiled = compiled
        self.partial_credit = partial_credit
        self.model = model
        self.model_role = model_role
        self.graders: dict[str, Model] = {}  # one Model per name: its connection gate shared
        self.include_history: bool | Callable[[TaskState], str] = False

    def grader(self, state: TaskState) -> Model:
        """The grader of *state*: the one given, else the role's (the run owns it), else
        the answering model itself while its run is on, else one built by name, once."""
        if isinstance(self.model, Model):
            return self.model
        if self.model is None:
            bound = bound_role(self.model_role) if self.model_role is not None else None
            active = active_model()
            if bound is None and active is not None and active.name == state.model:
                bound = active
            if bound is not None:
                return bound
        name = self.model or state.model
        if name not in self.graders:
            self.graders[name] = get_model(name)
        return self.graders[name]

    def question(self, state: TaskState) -> str:
        """What the grader is shown as the question: the input, or with
        ``include_history`` the conversation before the answer being graded."""
        if callable(self.include_history):
            return self.include_history(state)
        return conversation_before_answer(state) if self.include_history else state.input_text

    async def __call__(self, state: TaskState, target: Target) -> Score:
        answer = state.output.completion
        fields = {
            **state.metadata,
            "question": self.question(state),
            "answer": answer,
            "criterion": target.text,
            "instructions": self.instructions,
        }
        try:
            prompt = self.template.format_map(fields)
        except (KeyError, IndexError) as exc:
            raise ValueError(
                f"the grading template uses {exc}, which is neither a template field "
                "(question, answer, criterion, instructions) nor a metadata key"
            ) from None
        reply = (await self.grader(state).generate(prompt)).completion
        grades = self.compiled.findall(reply)
        if not grades:
            return Score(value=INCORRECT, answer=answer, explanation=f"no grade found: {reply}")
        grade = (grades[-1] if isinstance(grades[-1], str) else grades[-1][0]).upper()
        return Score(value=grade, answer=answer, explanation=reply)

    async def aclose(self) -> None:
        """Close every grader this scorer used (each reconnects if asked again)."""
        given = [self.model] if isinstance(self.model, Model) else []
        for grader in [*given, *self.graders.values()]:
            await grader.aclose()


def conversation_before_answer(state: TaskState) -> str:
    """The conversation as text, without system messages and from the last assistant
    message on (the answer, which the template shows on its own): the first message as
    it is, then ``User: ...``, ``Assistant: ...`` (with its tool calls) and
    ``Tool: ...`` turns."""
    shown = [m for m in state.messages if m.role != "system"]
    answers = [i for i, m in enumerate(shown) if m.role == "assistant"]
    if answers:
        shown = shown[: answers[-1]]
    lines = [shown[0].text] if shown else []
    for message in shown[1:]:
        text = message.text
        if message.role == "assistant" and message.tool_calls:
            calls = ", ".join(f"{c.function}({c.arguments})" for c in message.tool_calls)
            text = f"{text}\n[calls {calls}]" if text else f"[calls {calls}]"
        lines.append(f"{message.role.capitalize()}: {text}")
    return "\n\n".join(lines)
