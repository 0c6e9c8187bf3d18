"""What an agent is configured with: its prompt, its submit tool, its attempts.

Each is a small value object with a stable ``repr`` (no memory address), because a
solver's arguments are written into the run's spec and a spec must come out the same
for the same task (``assay resume`` refuses a run whose spec changed). A callable
argument is shown by its module and qualified name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from assay.errors import ConfigError

DEFAULT_ASSISTANT_PROMPT = (
    "You are a capable assistant working towards the best answer you can submit. "
    "Tools are available to you, and each tool's result comes back to you right after "
    "your message. Take as many steps as you need, calling more tools in later messages. "
    "Before acting, reason briefly about which tools you will use and why."
)
DEFAULT_SUBMIT_PROMPT = (
    "Once you have finished the task and have your answer, call the {submit}() tool with it."
)
DEFAULT_CONTINUE_MESSAGE = (
    "Please carry on with the next step as you judge best. If you have finished the "
    "task, call the {submit}() tool with your final answer."
)
DEFAULT_INCORRECT_MESSAGE = (
    "Your answer was judged incorrect. Please keep working and try to find the correct answer."
)
DEFAULT_SUBMIT_DESCRIPTION = "Submit an answer for evaluation."

IncorrectMessage = str | Callable[[Any, list[Any]], str | Awaitable[str]]
"""Told to the model after a wrong answer: text, or ``(state, scores) -> text``."""


def callable_label(value: Any) -> str:
    """A callable as ``module.qualname`` (stable across processes), anything else as repr."""
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{getattr(value, '__module__', '?')}.{value.__qualname__}"
    return repr(value)


class AgentPrompt:
    """The agent's system prompt, in parts: the task's ``instructions`` (first), the
    general ``assistant_prompt`` and the ``submit_prompt`` (which may name the submit
    tool as ``{submit}``). A part set to ``None`` is left out."""

    def __init__(
        self,
        instructions: str | None = None,
        assistant_prompt: str | None = DEFAULT_ASSISTANT_PROMPT,
        submit_prompt: str | None = DEFAULT_SUBMIT_PROMPT,
    ) -> None:
        self.instructions = instructions
        self.assistant_prompt = assistant_prompt
        self.submit_prompt = submit_prompt

    def render(self, submit_name: str | None) -> str:
        """The system message's text (without the submit part when there is no submit)."""
        parts = [self.instructions, self.assistant_prompt]
        if submit_name is not None and self.submit_prompt:
            parts.append(self.submit_prompt.replace("{submit}", submit_name))
        return "\n\n".join(p for p in parts if p)

    def __repr__(self) -> str:
        return (
            f"AgentPrompt(instructions={self.instructions!r}, "
            f"assistant_prompt={self.assistant_prompt!r}, submit_prompt={self.submit_prompt!r})"
        )


class AgentSubmit:
    """The tool the model ends its work with: its ``name`` and ``description``."""

    def __init__(self, name: str = "submit", description: str = DEFAULT_SUBMIT_DESCRIPTION) -> None:
        self.name = name
        self.description = description

    def __repr__(self) -> str:
        return f"AgentSubmit(name={self.name!r}, description={self.description!r})"


class AgentAttempts:
    """How many answers the model may submit, and what it is told after a wrong one.

    Every answer but the last is judged by the task's first scorer (a value of 1.0 is
    correct, as in the pipeline); the last is left to the pipeline's own scoring.
    ``incorrect_message`` is text or ``(state, scores) -> text`` (sync or async).
    """

    def __init__(
        self, attempts: int = 1, incorrect_message: IncorrectMessage = DEFAULT_INCORRECT_MESSAGE
    ) -> None:
        check_count("AgentAttempts", "attempts", attempts)
        self.attempts = attempts
        self.incorrect_message = incorrect_message

    def __repr__(self) -> str:
        message = self.incorrect_message
        shown = message if isinstance(message, str) else callable_label(message)
        return f"AgentAttempts(attempts={self.attempts}, incorrect_message={shown!r})"


def check_count(agent: str, name: str, value: Any) -> None:
    """A ConfigError unless *value* is a whole number of at least 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        key = "agent.bad_attempts" if name == "attempts" else "agent.bad_limit"
        raise ConfigError(key, agent=agent, name=name, value=repr(value))


def as_attempts(value: int | AgentAttempts) -> AgentAttempts:
    """*value* as AgentAttempts (a number is that many attempts with the default message)."""
    return value if isinstance(value, AgentAttempts) else AgentAttempts(value)
