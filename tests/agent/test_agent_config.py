"""An agent configured wrongly fails where it is made, with one line naming the fix; and
what it records of itself in a spec carries no memory address (a spec must come out
the same for the same task, or ``resume`` refuses the run)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from assay import tool
from assay._registry import json_safe
from assay.agent import AgentAttempts, AgentSubmit, basic_agent, react
from assay.errors import ConfigError


@tool
def echo(text: str) -> str:
    """Say it back."""
    return text


@tool(name="submit")
def my_submit(answer: str) -> str:
    """A tool that takes the submit tool's name."""
    return answer


@pytest.mark.parametrize(
    ("make", "key", "said"),
    [
        (lambda: react(attempts=0), "agent.bad_attempts", "react: attempts must be"),
        (lambda: react(attempts="2"), "agent.bad_attempts", "not '2'"),
        (lambda: AgentAttempts(True), "agent.bad_attempts", "not True"),
        (lambda: basic_agent(max_attempts=0), "agent.bad_attempts", "basic_agent: attempts"),
        (lambda: react(message_limit=0), "agent.bad_limit", "message_limit must be"),
        (lambda: basic_agent(token_limit=-5), "agent.bad_limit", "token_limit must be"),
        (lambda: react(tools=[print]), "agent.not_a_tool", "react was given <built-in"),
        (lambda: react(tools=[echo, echo]), "agent.duplicate_tool", "named 'echo'"),
        (lambda: react(tools=[my_submit]), "agent.duplicate_tool", "named 'submit'"),
        (lambda: basic_agent(tools=[echo], submit_name="echo"), "agent.duplicate_tool", "'echo'"),
    ],
)
def test_a_bad_configuration_is_one_line_where_the_agent_is_made(
    make: Any, key: str, said: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        make()
    assert raised.value.key == key
    assert said in raised.value.message
    assert "\n" not in raised.value.message and raised.value.hint


def test_the_submit_tool_may_be_renamed_or_left_out() -> None:
    assert react(tools=[my_submit], submit=AgentSubmit(name="final")).settings.submit_name == (
        "final"
    )
    assert react(tools=[my_submit], submit=False).settings.submit_name is None


def test_what_an_agent_records_in_a_spec_has_no_memory_address() -> None:
    def judge(state: Any, scores: Any) -> str:
        return "no"

    agent = react(
        name="a",
        tools=[echo],
        attempts=AgentAttempts(2, incorrect_message=judge),
        on_continue=lambda state: True,
        submit=AgentSubmit("done", "Finish."),
    )
    recorded = str(json_safe(agent))
    assert not re.search(r"0x[0-9a-f]{6,}", recorded), recorded
    assert "judge" in recorded and "done" in recorded and "Finish." in recorded
    assert str(json_safe(basic_agent(tools=[echo], incorrect_message=judge))).count("0x") == 0
