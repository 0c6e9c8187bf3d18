"""The agent loop react() and basic_agent() share: ask, run tools, until an answer is in.

One turn: the model is asked (through the ``generate`` the solver was handed, so the
task's limits, cache and evidence apply as for any solver), then the tools it calls are
run, each recorded as ``tool_call``/``tool_result`` events like any tool call. The turn
that calls the submit tool hands in an answer: it becomes ``state.output.completion``.
While attempts remain, the task's first scorer judges that answer (on a detached copy
of the state, so the scorer cannot change the conversation); a wrong one earns the
incorrect-answer message and another turn. An answer without a tool call is met by the
continue message (or ends the loop, as ``on_continue`` decides).

Every submission is an ``agent_submission`` event (agent, attempt, the submit call's
id, and the verdict when it was judged): ``assay show`` prints them in the transcript.
A limit (messages, tokens, time) raises out of the loop like any other solver's: the
trial keeps the state it reached and is scored on it.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import msgspec

from assay._digest import canonical_json, loads
from assay.agent._settings import AgentAttempts
from assay.errors import ConfigError
from assay.evidence._recorder import record_own_event
from assay.model import (
    LimitExceeded,
    ModelOutput,
    ToolCall,
    assistant_message,
    current_budget,
)
from assay.model import user_message as user_msg
from assay.score._score import Score, value_to_float
from assay.solver import (
    Generate,
    TaskState,
    Tool,
    ToolDef,
    ToolError,
    call_tools,
    task_scorers,
)
from assay.solver._tool_calls import check_message_limit
from assay.solver._tools import define_tool

ContinueDecision = bool | str
OnContinue = Callable[[TaskState], ContinueDecision | Awaitable[ContinueDecision]]
"""``(state) -> True`` (go on with the default message), a message, or ``False`` (stop)."""

SUBMISSION_EVENT = "agent_submission"


@dataclass(frozen=True)
class LoopSettings:
    """One agent's loop, as react() or basic_agent() configured it."""

    agent: str  # how events and errors name the agent
    tools: tuple[Any, ...]
    submit_name: str | None  # None: no submit tool; the loop ends on a plain answer
    submit_description: str
    attempts: AgentAttempts
    continue_message: str
    on_continue: Any = None  # OnContinue | str | None
    message_limit: int | None = None
    token_limit: int | None = None


@dataclass(frozen=True)
class AgentRun:
    """The agent working in this context: what a handoff() hands over from."""

    state: TaskState
    generate: Generate


_running: ContextVar[AgentRun | None] = ContextVar("assay_agent_run", default=None)


def current_run() -> AgentRun | None:
    """The innermost agent running in this context, if any."""
    return _running.get()


@contextmanager
def _run_scope(run: AgentRun) -> Iterator[None]:
    token = _running.set(run)
    try:
        yield
    finally:
        _running.reset(token)


async def run_loop(state: TaskState, generate: Generate, settings: LoopSettings) -> TaskState:
    """Work on *state* until an answer is submitted and accepted, attempts run out, the
    model stops (``on_continue`` says so) or a limit is reached (raised)."""
    answers: list[str] = []
    tools = list(settings.tools)
    if settings.submit_name is not None:
        tools.append(_submit_tool(settings, answers))
    state.tools, state.tool_choice = tools, "auto"
    if settings.attempts.attempts > 1:
        _judges(settings)  # no judge: say so before the model is asked anything
    tokens_before = _tokens_used()
    submitted = 0
    with _run_scope(AgentRun(state, generate)):
        while True:
            check_message_limit(state, settings.message_limit)
            state = await generate(state, tool_calls="none")
            _check_token_limit(settings, tokens_before)
            calls = state.output.message.tool_calls
            if not calls:
                message = await _continue_message(state, settings)
                if message is None:
                    return state
                state.messages.append(user_msg(message))
                continue
            submit_id = await _run_calls(state, calls, answers, settings.message_limit)
            if state.completed:  # an approver ended the sample (assay.approval)
                return state
            if submit_id is None:
                continue
            submitted += 1
            if not await _another_attempt(state, settings, answers[-1], submitted, submit_id):
                return state


async def _run_calls(
    state: TaskState, calls: list[ToolCall], answers: list[str], message_limit: int | None
) -> str | None:
    """Run the turn's calls in order; the id of the last one that submitted an answer
    (a submit call whose arguments did not fit submitted nothing)."""
    submit_id = None
    for call in calls:
        before = len(answers)
        await call_tools(state, [call], message_limit)
        if len(answers) > before:
            submit_id = call.id
        if state.completed:
            break
    return submit_id


def _submit_tool(settings: LoopSettings, answers: list[str]) -> Tool:
    """The submit tool of one run: each call adds its answer to *answers*."""

    async def submit(answer: str) -> str:
        """Submit an answer.

        Args:
            answer: the answer to submit.
        """
        answers.append(answer)
        return answer

    assert settings.submit_name is not None
    return define_tool(submit, settings.submit_name, settings.submit_description)


async def _another_attempt(
    state: TaskState, settings: LoopSettings, answer: str, submitted: int, call_id: str
) -> bool:
    """Make *answer* the state's output; judge it while attempts remain. True when the
    model is to try again (it was told why)."""
    state.output = _answer_output(state.output, answer)
    event: dict[str, Any] = {"agent": settings.agent, "attempt": submitted, "call": call_id}
    if submitted >= settings.attempts.attempts:
        record_own_event(SUBMISSION_EVENT, {**event, "judged": False})
        return False
    scores = await _judge(state, settings)
    value = value_to_float(scores[0].value)
    correct = value >= 1.0
    record_own_event(
        SUBMISSION_EVENT, {**event, "judged": True, "value": value, "correct": correct}
    )
    if correct:
        return False
    state.messages.append(user_msg(await _incorrect_message(state, settings, scores)))
    return True


def _answer_output(output: ModelOutput, answer: str) -> ModelOutput:
    """The output whose completion is *answer* (usage and model kept; the message is new,
    so the conversation's own assistant message is left as the model wrote it)."""
    return msgspec.structs.replace(output, message=assistant_message(answer), stop_reason="stop")


async def _judge(state: TaskState, settings: LoopSettings) -> list[Score]:
    """The task's first scorer on a detached copy of *state*, as the pipeline scores."""
    scorers = _judges(settings)
    copy = TaskState.from_record(loads(canonical_json(state.to_record())), state.target.raw)
    score = await scorers[0](copy, copy.target)
    if not isinstance(score, Score):
        raise TypeError(f"the scorer returned {type(score).__name__}, not a Score")
    return [score]


def _judges(settings: LoopSettings) -> tuple[Any, ...]:
    """The task's scorers; a ConfigError when there are none to judge an answer."""
    scorers = task_scorers()
    if not scorers:
        raise ConfigError(
            "agent.no_judge", agent=settings.agent, attempts=settings.attempts.attempts
        )
    return scorers


async def _incorrect_message(state: TaskState, settings: LoopSettings, scores: list[Score]) -> str:
    message = settings.attempts.incorrect_message
    if isinstance(message, str):
        return message
    said = message(state, scores)
    if inspect.isawaitable(said):
        said = await said
    return str(said)


async def _continue_message(state: TaskState, settings: LoopSettings) -> str | None:
    """What the model is told after an answer with no tool call; None ends the loop."""
    decide = settings.on_continue
    if decide is None:
        return settings.continue_message if settings.submit_name is not None else None
    if isinstance(decide, str):
        return decide
    decision = decide(state)
    if inspect.isawaitable(decision):
        decision = await decision
    if decision is True:
        return settings.continue_message
    if decision is False:
        return None
    if isinstance(decision, str):
        return decision
    raise TypeError(f"on_continue returned {type(decision).__name__}: give True, False or text")


def _tokens_used() -> int:
    budget = current_budget()
    return 0 if budget is None else budget.usage.total_tokens


def _check_token_limit(settings: LoopSettings, tokens_before: int) -> None:
    """The agent's own token limit, over the model calls since it started (the task's
    limits are kept by ``generate`` itself)."""
    if settings.token_limit is not None:
        used = _tokens_used() - tokens_before
        if used > settings.token_limit:
            raise LimitExceeded("token", used, settings.token_limit)


def check_tools(agent: str, tools: Any, submit_name: str | None) -> tuple[Tool, ...]:
    """The tools as a tuple: each a Tool, no two of one name (the submit tool included)."""
    given = [t.as_tool() if isinstance(t, ToolDef) else t for t in tools or []]
    for item in given:
        if not isinstance(item, Tool):
            raise ConfigError("agent.not_a_tool", agent=agent, value=repr(item))
    names = [t.name for t in given] + ([submit_name] if submit_name is not None else [])
    for name in names:
        if names.count(name) > 1:
            raise ConfigError("agent.duplicate_tool", agent=agent, name=name)
    return tuple(given)


def handoff_unavailable(tool_name: str) -> ToolError:
    """What a model is told when it calls a handoff outside a running agent."""
    return ToolError(f"{tool_name} can only be used by an agent (react or basic_agent)")
