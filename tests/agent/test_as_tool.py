"""``as_tool(agent)``, written as Inspect's documentation shows it: an agent another
agent (or ``generate()``) calls as a tool with an ``input``, answered by the agent's
answer. The model is ``mockllm``, scripted; one script serves the caller and the
agent, in the order they ask."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Task, eval
from assay.agent import Agent, AgentState, agent, as_tool, react
from assay.dataset import Sample
from assay.errors import ConfigError
from assay.model import ModelOutput, get_model
from assay.scorer import includes
from assay.solver import generate, use_tools
from assay.tool import tool


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@tool
def add():
    async def execute(x: int, y: int):
        """
        Add two numbers.

        Args:
            x: First number to add.
            y: Second number to add.
        """
        return x + y

    return execute


def call(tool_name: str, **arguments) -> ModelOutput:
    return ModelOutput.for_tool_call(
        model="mockllm/model", tool_name=tool_name, tool_arguments=arguments
    )


def scripted(*outputs: ModelOutput):
    return get_model("mockllm/model", custom_outputs=list(outputs))


def test_a_react_agent_as_a_tool_of_another() -> None:
    adder = react(name="adder", description="Adds numbers.", tools=[add()])
    supervisor = react(prompt="Use the adder for arithmetic.", tools=[as_tool(adder)])
    task = Task(dataset=[Sample(input="1+1?", target="2")], solver=supervisor, scorer=includes())
    outputs = [
        call("adder", input="What is 1 + 1?"),  # the supervisor asks the adder
        call("add", x=1, y=1),  # the adder works on that question alone
        call("submit", answer="two, that is 2"),  # the adder's answer: the tool's result
        call("submit", answer="2"),  # the supervisor's
    ]
    log = eval(task, model=scripted(*outputs))[0]
    assert log.status == "success"
    assert log.results.scores[0].metrics["accuracy"].value == 1.0
    sample = log.samples[0]
    tool_results = [m.text for m in sample.messages if m.role == "tool"]
    assert tool_results == ["two, that is 2", "2"]  # the adder's answer, then the submit's
    (kept,) = sample.store["handoffs"]
    assert (kept["agent"], kept["tool"], kept["answer"]) == ("adder", "adder", "two, that is 2")
    said = [m["content"] for m in kept["messages"] if m["role"] == "user"]
    assert said == ["What is 1 + 1?"]  # its input only: not the supervisor's conversation


def test_the_tool_tells_the_model_its_input() -> None:
    adder = react(name="adder", description="Adds numbers.", tools=[add()])
    info = as_tool(adder, description="Ask the adder.").definition
    assert (info.name, info.description) == ("adder", "Ask the adder.")
    assert list(info.parameters["properties"]) == ["input"]
    assert info.parameters["required"] == ["input"]
    assert info.parameters["properties"]["input"]["description"] == "Input message."


def test_an_agent_function_as_a_tool_of_generate_with_fixed_arguments() -> None:
    @agent(description="Shouts the input.")
    def shouter() -> Agent:
        async def execute(state: AgentState, suffix: str = "") -> AgentState:
            state.output = ModelOutput.from_content("shouter", state.messages[-1].text.upper())
            state.output.completion += suffix
            return state

        return execute

    task = Task(
        dataset=[Sample(input="Shout hi", target="HI!")],
        solver=[use_tools(as_tool(shouter(), suffix="!")), generate()],
        scorer=includes(),
    )
    outputs = [call("shouter", input="hi"), ModelOutput.from_content("mockllm/model", "HI!")]
    log = eval(task, model=scripted(*outputs))[0]
    assert [m.text for m in log.samples[0].messages if m.role == "tool"] == ["HI!"]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_an_agents_other_parameters_are_the_models_to_give() -> None:
    @agent
    def greeter() -> Agent:
        async def execute(state: AgentState, greeting: str, times: int = 1) -> AgentState:
            """Greet.

            Args:
                state: The conversation.
                greeting: The word to greet with.
                times: How many times.
            """
            said = " ".join([greeting] * times) + " " + state.messages[-1].text
            state.output = ModelOutput.from_content("greeter", said)
            return state

        return execute

    shown = as_tool(greeter()).definition.parameters
    assert list(shown["properties"]) == ["input", "greeting", "times"]
    assert shown["required"] == ["input", "greeting"]
    assert shown["properties"]["greeting"]["description"] == "The word to greet with."
    fixed = as_tool(greeter(), times=2).definition.parameters
    assert list(fixed["properties"]) == ["input", "greeting"]  # fixed: not the model's

    task = Task(
        dataset=[Sample(input="Greet Ann", target="hello hello Ann")],
        solver=[use_tools(as_tool(greeter(), times=2)), generate()],
        scorer=includes(),
    )
    outputs = [
        call("greeter", input="Ann", greeting="hello"),
        ModelOutput.from_content("mockllm/model", "hello hello Ann"),
    ]
    log = eval(task, model=scripted(*outputs))[0]
    assert [m.text for m in log.samples[0].messages if m.role == "tool"] == ["hello hello Ann"]


@pytest.mark.parametrize(
    ("made", "given"), [(lambda: react(name="adder"), "suffix"), (None, "nothing")]
)
def test_an_argument_the_agent_does_not_take_is_refused(made, given: str) -> None:
    @agent
    def plain() -> Agent:
        async def execute(state: AgentState) -> AgentState:
            return state

        return execute

    sub = made() if made is not None else plain()
    with pytest.raises(ConfigError, match=f"was given {given}, which the agent does not take"):
        as_tool(sub, **{given: "!"})


def test_a_function_is_not_an_agent() -> None:
    with pytest.raises(ConfigError, match=r"as_tool\(\) needs an agent"):
        as_tool(add())
