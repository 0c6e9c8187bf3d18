"""Held-out Inspect idioms, solvers: each test is written as Inspect's documentation
shows it, with ``inspect_ai`` changed to ``assay``; the model is Inspect's ``mockllm``."""

from __future__ import annotations

from assay import Task, eval, task
from assay.dataset import Sample
from assay.model import ChatMessageUser, get_model
from assay.scorer import includes, match
from assay.solver import (
    Generate,
    TaskState,
    chain,
    chain_of_thought,
    generate,
    multiple_choice,
    prompt_template,
    self_critique,
    solver,
    system_message,
    user_message,
)
from tests.inspect_compat._mock import mockllm


def messages_seen(log) -> list:
    return log.samples[0].messages


def test_generate_and_match() -> None:
    task = Task(dataset=[Sample(input="1+1?", target="2")], solver=[generate()], scorer=match())
    log = eval(task, model=mockllm("2"))[0]
    assert log.status == "success"
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_task_decorator_with_parameter() -> None:
    @task
    def arithmetic(answer: str = "4"):
        return Task(
            dataset=[Sample(input="2+2?", target=answer)], solver=generate(), scorer=match()
        )

    log = eval(arithmetic(answer="4"), model=mockllm("4"))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_system_message_then_generate() -> None:
    task = Task(
        dataset=[Sample(input="Hi", target="hello")],
        solver=[system_message("You are a helpful assistant."), generate()],
        scorer=includes(),
    )
    log = eval(task, model=mockllm("hello there"))[0]
    assert messages_seen(log)[0].role == "system"
    assert messages_seen(log)[0].content == "You are a helpful assistant."


def test_prompt_template_fills_prompt() -> None:
    task = Task(
        dataset=[Sample(input="What is 2+2?", target="4")],
        solver=[
            prompt_template("Answer the question: {prompt}\nGive only the number."),
            generate(),
        ],
        scorer=match(),
    )
    log = eval(task, model=mockllm("4"))[0]
    assert "Answer the question: What is 2+2?" in messages_seen(log)[0].text


def test_prompt_template_with_params() -> None:
    template = "{prompt}\nAnswer in {language}."
    task = Task(
        dataset=[Sample(input="Name a color.", target="rouge")],
        solver=[prompt_template(template, language="French"), generate()],
        scorer=includes(),
    )
    log = eval(task, model=mockllm("rouge"))[0]
    assert "Answer in French." in messages_seen(log)[0].text


def test_prompt_template_reads_sample_metadata() -> None:
    task = Task(
        dataset=[Sample(input="Q", target="A", metadata={"topic": "math"})],
        solver=[prompt_template("Topic: {topic}\n{prompt}"), generate()],
        scorer=includes(),
    )
    log = eval(task, model=mockllm("A"))[0]
    assert messages_seen(log)[0].text.startswith("Topic: math")


def test_user_message() -> None:
    task = Task(
        dataset=[Sample(input="First", target="ok")],
        solver=[user_message("Please be concise."), generate()],
        scorer=includes(),
    )
    log = eval(task, model=mockllm("ok"))[0]
    assert [m.role for m in messages_seen(log)][:2] == ["user", "user"]


def test_chain_of_thought() -> None:
    task = Task(
        dataset=[Sample(input="What is 3*3?", target="9")],
        solver=[chain_of_thought(), generate()],
        scorer=match(),
    )
    log = eval(task, model=mockllm("Step by step... ANSWER: 9"))[0]
    assert "step by step" in messages_seen(log)[0].text.lower()


def test_self_critique() -> None:
    task = Task(
        dataset=[Sample(input="Capital of France?", target="Paris")],
        solver=[generate(), self_critique()],
        scorer=includes(),
    )
    log = eval(task, model=get_model("mockllm/model"))[0]
    assert log.status == "success"


def test_multiple_choice() -> None:
    task = Task(
        dataset=[
            Sample(input="Which is a fruit?", choices=["carrot", "apple", "potato"], target="B")
        ],
        solver=multiple_choice(),
        scorer=__import__("assay.scorer", fromlist=["choice"]).choice(),
    )
    log = eval(task, model=mockllm("ANSWER: B"))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_multiple_choice_cot() -> None:
    from assay.scorer import choice

    task = Task(
        dataset=[Sample(input="Which is a fruit?", choices=["carrot", "apple"], target="B")],
        solver=multiple_choice(cot=True),
        scorer=choice(),
    )
    log = eval(task, model=mockllm("Apples are fruit.\n\nANSWER: B"))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_custom_solver_edits_messages() -> None:
    @solver
    def add_hint(hint: str = "Think carefully."):
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.messages.append(ChatMessageUser(content=hint))
            return await generate(state)

        return solve

    task = Task(dataset=[Sample(input="Q", target="A")], solver=add_hint(), scorer=includes())
    log = eval(task, model=mockllm("A"))[0]
    assert messages_seen(log)[1].text == "Think carefully."


def test_solver_sets_user_prompt_text() -> None:
    @solver
    def shout():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.user_prompt.text = state.user_prompt.text.upper()
            return state

        return solve

    task = Task(
        dataset=[Sample(input="hello", target="A")], solver=[shout(), generate()], scorer=includes()
    )
    log = eval(task, model=mockllm("A"))[0]
    assert messages_seen(log)[0].text == "HELLO"


def test_solver_sets_output_completion() -> None:
    @solver
    def strip_answer():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state = await generate(state)
            state.output.completion = state.output.completion.replace("ANSWER: ", "")
            return state

        return solve

    task = Task(
        dataset=[Sample(input="Q", target="42")],
        solver=strip_answer(),
        scorer=match(location="exact"),
    )
    log = eval(task, model=mockllm("ANSWER: 42"))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_state_completed_ends_early() -> None:
    @solver
    def stop_now():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.completed = True
            return state

        return solve

    task = Task(
        dataset=[Sample(input="Q", target="A")], solver=[stop_now(), generate()], scorer=includes()
    )
    log = eval(task, model=mockllm("A"))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 0.0


def test_state_fields_read_in_a_solver() -> None:
    seen = {}

    @solver
    def look():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            seen.update(
                input=state.input_text,
                sample_id=state.sample_id,
                epoch=state.epoch,
                metadata=state.metadata,
                target=state.target.text,
                model=str(state.model),
            )
            return await generate(state)

        return solve

    task = Task(
        dataset=[Sample(input="Q", target="A", id="s1", metadata={"k": 1})],
        solver=look(),
        scorer=includes(),
    )
    eval(task, model=mockllm("A"))
    assert seen["input"] == "Q" and seen["sample_id"] == "s1" and seen["epoch"] == 1
    assert seen["metadata"] == {"k": 1} and seen["target"] == "A"
    assert "mockllm/model" in seen["model"]


def test_chain_of_solvers() -> None:
    task = Task(
        dataset=[Sample(input="Q", target="A")],
        solver=chain(system_message("Be brief."), generate()),
        scorer=includes(),
    )
    log = eval(task, model=mockllm("A"))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_fork() -> None:
    from assay.solver import fork

    results = {}

    @solver
    def best_of_two():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            states = await fork(state, [system_message("one"), system_message("two")])
            results["systems"] = [s.messages[0].text for s in states]
            results["unchanged"] = len(state.messages)
            return await generate(state)

        return solve

    task = Task(dataset=[Sample(input="Q", target="B")], solver=best_of_two(), scorer=includes())
    log = eval(task, model=mockllm("A", "B"))[0]
    assert results == {"systems": ["one", "two"], "unchanged": 1}
    assert log.status == "success"


def test_solver_uses_store() -> None:
    @solver
    def remember():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.store.set("attempts", state.store.get("attempts", 0) + 1)
            return await generate(state)

        return solve

    task = Task(dataset=[Sample(input="Q", target="A")], solver=remember(), scorer=includes())
    log = eval(task, model=mockllm("A"))[0]
    assert log.samples[0].store["attempts"] == 1


def test_message_limit_on_state() -> None:
    @solver
    def loop():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            while not state.completed:
                state.messages.append(ChatMessageUser(content="again"))
                state = await generate(state)
            return state

        return solve

    task = Task(
        dataset=[Sample(input="Q", target="A")], solver=loop(), scorer=includes(), message_limit=6
    )
    log = eval(task, model=get_model("mockllm/model"))[0]
    assert len(log.samples[0].messages) <= 6
