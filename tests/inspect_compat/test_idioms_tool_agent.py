"""Held-out Inspect idioms, tools and agents: each test is written as Inspect's
documentation shows it, with ``inspect_ai`` changed to ``assay``; the model is
Inspect's ``mockllm``, scripted with ``ModelOutput.for_tool_call``."""

from __future__ import annotations

from assay import Task, eval
from assay.dataset import Sample
from assay.model import ModelOutput, get_model
from assay.scorer import includes
from assay.solver import generate, use_tools
from assay.tool import ToolError, tool


@tool
def add():
    async def execute(x: int, y: int):
        """
        Add two numbers.

        Args:
            x: First number to add.
            y: Second number to add.

        Returns:
            The sum of the two numbers.
        """
        return x + y

    return execute


def scripted(*outputs: ModelOutput):
    return get_model("mockllm/model", custom_outputs=list(outputs))


def call(tool_name: str, **arguments) -> ModelOutput:
    return ModelOutput.for_tool_call(
        model="mockllm/model", tool_name=tool_name, tool_arguments=arguments
    )


def say(text: str) -> ModelOutput:
    return ModelOutput.from_content(model="mockllm/model", content=text)


def tool_answers(log) -> list[str]:
    return [m.text for m in log.samples[0].messages if m.role == "tool"]


def test_use_tools_then_generate() -> None:
    task = Task(
        dataset=[Sample(input="What is 1 + 1?", target="2")],
        solver=[use_tools(add()), generate()],
        scorer=includes(),
    )
    log = eval(task, model=scripted(call("add", x=1, y=1), say("The answer is 2")))[0]
    assert tool_answers(log) == ["2"]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_use_tools_list_and_tool_choice() -> None:
    from assay.tool import ToolFunction

    task = Task(
        dataset=[Sample(input="What is 1 + 2?", target="3")],
        solver=[use_tools([add()], tool_choice=ToolFunction(name="add")), generate()],
        scorer=includes(),
    )
    log = eval(task, model=scripted(call("add", x=1, y=2), say("3")))[0]
    assert tool_answers(log) == ["3"]


def test_tool_error_goes_back_to_the_model() -> None:
    @tool
    def read_note():
        async def execute(name: str):
            """
            Read a note.

            Args:
                name: The note's name.
            """
            raise ToolError(f"no note called {name}")

        return execute

    task = Task(
        dataset=[Sample(input="Read x", target="sorry")],
        solver=[use_tools(read_note()), generate()],
        scorer=includes(),
    )
    log = eval(task, model=scripted(call("read_note", name="x"), say("sorry")))[0]
    assert log.status == "success"
    assert "no note called x" in tool_answers(log)[0]


def test_tool_with_a_default_argument() -> None:
    @tool
    def greet():
        async def execute(name: str, greeting: str = "Hello"):
            """
            Greet someone.

            Args:
                name: Who to greet.
                greeting: The greeting word.
            """
            return f"{greeting}, {name}!"

        return execute

    task = Task(
        dataset=[Sample(input="Greet Bo", target="Bo")],
        solver=[use_tools(greet()), generate()],
        scorer=includes(),
    )
    log = eval(task, model=scripted(call("greet", name="Bo"), say("done Bo")))[0]
    assert tool_answers(log) == ["Hello, Bo!"]


def test_tool_decorator_with_name() -> None:
    @tool(name="plus")
    def adder():
        async def execute(a: int, b: int):
            """
            Add.

            Args:
                a: one
                b: two
            """
            return a + b

        return execute

    task = Task(
        dataset=[Sample(input="?", target="5")],
        solver=[use_tools(adder()), generate()],
        scorer=includes(),
    )
    log = eval(task, model=scripted(call("plus", a=2, b=3), say("5")))[0]
    assert tool_answers(log) == ["5"]


def test_tool_with_renames_a_tool() -> None:
    from assay.tool import tool_with

    task = Task(
        dataset=[Sample(input="?", target="7")],
        solver=[
            use_tools(tool_with(add(), name="sum_two", description="Sum two numbers.")),
            generate(),
        ],
        scorer=includes(),
    )
    log = eval(task, model=scripted(call("sum_two", x=3, y=4), say("7")))[0]
    assert tool_answers(log) == ["7"]


def test_tool_def_from_a_function() -> None:
    from assay.tool import ToolDef

    async def multiply(x: int, y: int) -> int:
        """
        Multiply two numbers.

        Args:
            x: First number.
            y: Second number.
        """
        return x * y

    multiply_tool = ToolDef(multiply, name="multiply").as_tool()
    task = Task(
        dataset=[Sample(input="?", target="12")],
        solver=[use_tools(multiply_tool), generate()],
        scorer=includes(),
    )
    log = eval(task, model=scripted(call("multiply", x=3, y=4), say("12")))[0]
    assert tool_answers(log) == ["12"]


def test_think_tool() -> None:
    from assay.tool import think

    task = Task(
        dataset=[Sample(input="?", target="ok")],
        solver=[use_tools(think()), generate()],
        scorer=includes(),
    )
    log = eval(task, model=scripted(call("think", thought="hmm"), say("ok")))[0]
    assert log.status == "success"


def test_bash_and_python_in_a_local_sandbox() -> None:
    from assay.tool import bash, python

    task = Task(
        dataset=[Sample(input="?", target="hi")],
        solver=[use_tools([bash(timeout=30), python(timeout=30)]), generate()],
        scorer=includes(),
        sandbox="local",
    )
    log = eval(
        task,
        model=scripted(call("bash", cmd="echo hi"), call("python", code="print(6*7)"), say("hi")),
    )[0]
    assert [a.strip() for a in tool_answers(log)] == ["hi", "42"]


def test_react_agent_submits() -> None:
    from assay.agent import react

    task = Task(
        dataset=[Sample(input="What is 1+1?", target="2")],
        solver=react(prompt="Use the add tool.", tools=[add()]),
        scorer=includes(),
    )
    log = eval(task, model=scripted(call("add", x=1, y=1), call("submit", answer="2")))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_react_with_attempts_and_submit() -> None:
    from assay.agent import AgentAttempts, AgentSubmit, react

    agent = react(
        tools=[add()],
        attempts=AgentAttempts(attempts=2, incorrect_message="Try again."),
        submit=AgentSubmit(name="answer", description="Submit your final answer."),
    )
    task = Task(dataset=[Sample(input="1+1?", target="2")], solver=agent, scorer=includes())
    log = eval(task, model=scripted(call("answer", answer="3"), call("answer", answer="2")))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_handoff_to_a_sub_agent() -> None:
    from assay.agent import handoff, react

    adder = react(name="adder", description="Adds numbers.", tools=[add()])
    supervisor = react(prompt="Delegate arithmetic.", tools=[handoff(adder)])
    task = Task(dataset=[Sample(input="1+1?", target="2")], solver=supervisor, scorer=includes())
    outputs = [
        call("transfer_to_adder"),
        call("add", x=1, y=1),
        call("submit", answer="2"),
        call("submit", answer="2"),
    ]
    log = eval(task, model=scripted(*outputs))[0]
    assert log.status == "success"


def test_basic_agent() -> None:
    from assay.solver import basic_agent, system_message

    task = Task(
        dataset=[Sample(input="1+1?", target="2")],
        solver=basic_agent(init=system_message("Solve it."), tools=[add()], max_attempts=1),
        scorer=includes(),
    )
    log = eval(task, model=scripted(call("add", x=1, y=1), call("submit", answer="2")))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_custom_agent_with_agent_state() -> None:
    from assay.agent import Agent, AgentState, agent
    from assay.model import get_model as model_of

    @agent
    def echo_agent() -> Agent:
        async def execute(state: AgentState) -> AgentState:
            state.output = await model_of().generate(state.messages)
            state.messages.append(state.output.message)
            return state

        return execute

    task = Task(
        dataset=[Sample(input="Say hi", target="hi")], solver=echo_agent(), scorer=includes()
    )
    log = eval(task, model=scripted(say("hi")))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_as_solver() -> None:
    from assay.agent import as_solver, react

    task = Task(
        dataset=[Sample(input="1+1?", target="2")],
        solver=as_solver(react(tools=[add()])),
        scorer=includes(),
    )
    log = eval(task, model=scripted(call("submit", answer="2")))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_tool_returning_a_list_of_content() -> None:
    from assay.model import ContentText

    @tool
    def facts():
        async def execute(topic: str):
            """
            Facts about a topic.

            Args:
                topic: The topic.
            """
            return [ContentText(text=f"{topic} is big"), ContentText(text=f"{topic} is old")]

        return execute

    task = Task(
        dataset=[Sample(input="?", target="ok")],
        solver=[use_tools(facts()), generate()],
        scorer=includes(),
    )
    log = eval(task, model=scripted(call("facts", topic="Rome"), say("ok")))[0]
    assert "Rome is big" in tool_answers(log)[0]
