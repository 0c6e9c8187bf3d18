"""Python tasks solved by agents, run by the agent tests through ``eval`` or the CLI (as a
file, so ``assay score`` can rebuild them from the run directory).

The model is the mock provider, scripted by the sample's input: a JSON object mapping
an agent's role to its turns. The role is ``main`` unless the conversation's system
prompt says ``ROLE:<name>`` (a sub-agent's instructions do). Each turn is either text
(a plain answer, no tool call) or a list of ``[tool, arguments]`` calls; the k-th
answer of a conversation is its k-th turn. Once a script runs out the model says
``script over`` (without calling a tool).
"""

from __future__ import annotations

import json
from typing import Any

from assay import (
    Sample,
    Score,
    Target,
    Task,
    TaskState,
    ToolError,
    accuracy,
    exact,
    scorer,
    task,
    tool,
)
from assay.agent import AgentAttempts, AgentPrompt, as_tool, basic_agent, handoff, react
from assay.model import (
    ChatMessage,
    GenerateConfig,
    MockAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from tests.scripted_tools import calls_turn, recording_add

CALLS: list[tuple[str, Any]] = []
"""Every tool run, in order (re-scoring must run none)."""
SEEN: list[list[dict[str, Any]]] = []
"""The conversation of each model call, as the model was shown it."""

NOTES = {
    "alpha": "17",
    "beta": "25",
    "evil": "\x1b[2J\x1b[31mred\u202egnp.exe" + "x" * 5000,  # clears the screen, if shown raw
}


add = recording_add(CALLS)


@tool
async def lookup(key: str) -> str:
    """Look a key up in the notes.

    Args:
        key: the note's name.
    """
    CALLS.append(("lookup", key))
    if key not in NOTES:
        raise ToolError(f"no note named {key!r}")
    return NOTES[key]


def scripted(messages: list[ChatMessage]) -> ModelOutput:
    """The scripted model (see the module docstring)."""
    import msgspec

    SEEN.append(msgspec.to_builtins(messages))
    system = "\n".join(m.content for m in messages if m.role == "system")
    role = system.split("ROLE:", 1)[1].split()[0] if "ROLE:" in system else "main"
    prompt = next(m.content for m in messages if m.role == "user")
    turns = json.loads(prompt).get(role, [])
    turn = sum(1 for m in messages if m.role == "assistant")
    if turn >= len(turns):
        return ModelOutput.from_content("mock/agent", "script over")
    step = turns[turn]
    if isinstance(step, str):
        return ModelOutput.from_content("mock/agent", step)
    words = sum(len(m.content.split()) for m in messages)  # counted as the mock counts text
    usage = ModelUsage(words, 5 * len(step))
    return calls_turn("mock/agent", step, f"{role}_{turn}", usage)


@modelapi("agentscript")
def agentscript_provider(name: str, config: GenerateConfig, **args: Any) -> MockAPI:
    return MockAPI(name, config, outputs=scripted)


def sample(sample_id: str, target: str, **roles: list[Any]) -> Sample:
    return Sample(input=json.dumps(roles), target=target, id=sample_id)


def submit(answer: str) -> list[Any]:
    return ["submit", {"answer": answer}]


RESEARCH = [
    [["lookup", {"key": "alpha"}]],
    [["lookup", {"key": "beta"}]],
    [submit("alpha is 17, beta is 25")],
]
"""The researcher sub-agent's turns."""

SAMPLES = {
    "submit": sample(
        "submit",
        "5",
        main=[[["add", {"x": 2, "y": 3}]], [submit("5")], [["add", {"x": 9, "y": 9}]]],
    ),
    "wrong_then_right": sample(
        "wrong_then_right",
        "42",
        main=[[submit("41")], [["add", {"x": 40, "y": 2}]], [submit("42")]],
    ),
    "right_first": sample("right_first", "7", main=[[submit("7")], [submit("8")]]),
    "always_wrong": sample("always_wrong", "1", main=[[submit("2")], [submit("3")], [submit("4")]]),
    "talks_first": sample(
        "talks_first",
        "25",
        main=["I will look it up.", [["lookup", {"key": "beta"}]], [submit("25")]],
    ),
    "tool_error": sample(
        "tool_error",
        "17",
        main=[[["lookup", {"key": "gamma"}]], [["lookup", {"key": "alpha"}]], [submit("17")]],
    ),
    "submit_and_add": sample(
        "submit_and_add", "5", main=[[submit("5"), ["add", {"x": 1, "y": 1}]], [submit("6")]]
    ),
    "two_submits": sample("two_submits", "17", main=[[submit("17"), ["submit", {"answer": 5}]]]),
    "bad_submit": sample(
        "bad_submit",
        "17",
        main=[[["submit", {}]], [["submit", {"answer": 17}]], [submit("17")]],
    ),
    "forever": sample("forever", "0", main=[[["add", {"x": i, "y": 1}]] for i in range(50)]),
    "handoff": sample(
        "handoff",
        "42",
        main=[
            [["transfer_to_researcher", {}]],
            [["add", {"x": 17, "y": 25}]],
            [submit("42")],
        ],
        researcher=RESEARCH,
    ),
    "as_tool": sample(  # the agent called as a tool is scripted by its input
        "as_tool",
        "42",
        main=[
            [["researcher", {"input": json.dumps({"researcher": RESEARCH})}]],
            [["add", {"x": 17, "y": 25}]],
            [submit("42")],
        ],
    ),
    "hostile": sample(
        "hostile",
        "ok",
        main=["\x1b]0;pwned\x07thinking", [["lookup", {"key": "evil"}]], [submit("\u202eok")]],
    ),
    "handoff_forever": sample(
        "handoff_forever",
        "0",
        main=[[["transfer_to_researcher", {}]]],
        researcher=[[["lookup", {"key": "alpha"}]] for _ in range(50)],
    ),
}


def _on_continue(kind: str) -> Any:
    if kind == "text":
        return "Keep going, and submit when you are done."
    if kind == "stop":
        return lambda state: False
    if kind == "true":
        return lambda state: True
    if kind == "callable_text":

        async def nudge(state: Any) -> str:
            return f"Nudge {len(state.messages)}"

        return nudge
    return None


def _incorrect(kind: str) -> Any:
    if kind == "callable":
        return lambda state, scores: f"No: {scores[0].value!r} for that one."
    return "Wrong answer, try again."


@scorer(metrics=[accuracy()])
def meddling() -> Any:
    """exact(), after trying to change the state it was given (the agent must not see it)."""

    async def score(state: TaskState, target: Target) -> Score:
        value = 1.0 if state.output.completion == target.text else 0.0
        state.messages.append(ChatMessage("user", "MEDDLED"))
        state.store["meddled"] = True
        state.output.message.content = "MEDDLED"
        state.messages[1].content = "MEDDLED"
        return Score(value=value)

    return score


@task
def agent_task(
    only: str = "submit",
    agent: str = "react",
    attempts: int = 1,
    incorrect: str = "text",
    on_continue: str = "default",
    message_limit: int | None = None,
    agent_message_limit: int | None = None,
    agent_token_limit: int | None = None,
    with_scorer: bool = True,
    meddle: bool = False,
    with_submit: bool = True,
    no_prompt: bool = False,
) -> Task:
    tools = [add, lookup]
    if agent == "basic":
        solver: Any = basic_agent(
            tools=tools,
            max_attempts=attempts,
            message_limit=agent_message_limit,
            incorrect_message=_incorrect(incorrect),
        )
    else:
        researcher = react(
            name="researcher",
            description="Finds values in the notes.",
            prompt="ROLE:researcher Find what was asked for in the notes.",
            tools=[lookup],
        )
        if only.startswith("handoff"):
            tools = [add, handoff(researcher)]
        elif only == "as_tool":
            tools = [add, as_tool(researcher)]
        prompt = AgentPrompt(instructions="Solve the task.")
        if no_prompt:
            prompt = AgentPrompt(instructions=None, assistant_prompt=None, submit_prompt=None)
        solver = react(
            prompt=prompt,
            tools=tools,
            attempts=AgentAttempts(attempts, _incorrect(incorrect)),
            submit=with_submit,
            on_continue=_on_continue(on_continue),
            message_limit=agent_message_limit,
            token_limit=agent_token_limit,
        )
    return Task(
        dataset=[SAMPLES[name] for name in only.split(",")],
        solver=solver,
        scorer=(meddling() if meddle else exact()) if with_scorer else None,
        model="agentscript/v1",
        message_limit=message_limit,
        fail_on_error=False,
    )
