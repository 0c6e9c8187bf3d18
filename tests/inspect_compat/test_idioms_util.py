"""Held-out Inspect idioms, ``util``: store, typed store, subtasks, spans, limits and
the sandbox, each written as Inspect's documentation shows it with ``inspect_ai``
changed to ``assay``."""

from __future__ import annotations

from assay import Task, eval
from assay.dataset import Sample
from assay.model import ModelOutput, get_model
from assay.scorer import CORRECT, INCORRECT, Score, Target, accuracy, includes, scorer
from assay.solver import Generate, TaskState, generate, solver
from assay.util import StoreModel, sandbox, span, store, store_as, subtask


def say(*texts: str):
    outputs = [ModelOutput.from_content(model="mockllm/model", content=t) for t in texts]
    return get_model("mockllm/model", custom_outputs=outputs)


def run(solvers, scorer=None, sandbox_name: str | None = None, model=None, **task_options):
    task = Task(
        dataset=[Sample(input="Q", target="A")],
        solver=solvers,
        scorer=scorer or includes(),
        sandbox=sandbox_name,
        **task_options,
    )
    log = eval(task, model=model or say("A", "A", "A"))[0]
    assert log.status == "success", log.samples[0].error if log.samples else log
    return log


def test_store_get_set_in_solver_and_scorer() -> None:
    @solver
    def count():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            store().set("count", store().get("count", 0) + 1)
            return await generate(state)

        return solve

    @scorer(metrics=[accuracy()])
    def counted():
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=CORRECT if store().get("count") == 1 else INCORRECT)

        return score

    log = run(count(), counted())
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_store_has_delete_keys() -> None:
    seen = {}

    @solver
    def use():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            s = store()
            s.set("a", 1)
            s.set("b", 2)
            s.delete("a")
            seen.update(has_a=s.has("a"), keys=list(s.keys()))
            return state

        return solve

    run(use())
    assert seen == {"has_a": False, "keys": ["b"]}


def test_store_model_with_store_as() -> None:
    class Activity(StoreModel):
        active: bool = False
        tries: int = 0
        names: list[str] = []  # noqa: RUF012 (pydantic copies a field default)

    @solver
    def act():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            activity = store_as(Activity)
            activity.active = True
            activity.tries += 1
            activity.names.append("x")
            return await generate(state)

        return solve

    @scorer(metrics=[accuracy()])
    def check():
        async def score(state: TaskState, target: Target) -> Score:
            activity = store_as(Activity)
            return Score(value=CORRECT if activity.active and activity.tries == 1 else INCORRECT)

        return score

    log = run(act(), check())
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_store_model_instance() -> None:
    class Notes(StoreModel):
        text: str = ""

    @solver
    def two():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            store_as(Notes, instance="a").text = "first"
            store_as(Notes, instance="b").text = "second"
            state.metadata["notes"] = [store_as(Notes, instance=i).text for i in ("a", "b")]
            return state

        return solve

    run(two())


def test_state_store_as() -> None:
    class Progress(StoreModel):
        step: int = 0

    @solver
    def step():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.store_as(Progress).step = 3
            return state

        return solve

    log = run(step())
    assert 3 in log.samples[0].store.values()


def test_subtask() -> None:
    @subtask
    async def lookup(word: str) -> str:
        return word.upper()

    @solver
    def use_lookup():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.metadata["word"] = await lookup("hi")
            return await generate(state)

        return solve

    run(use_lookup())


def test_span() -> None:
    @solver
    def spanned():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            async with span("planning"):
                state = await generate(state)
            return state

        return solve

    run(spanned())


def test_sandbox_exec() -> None:
    @solver
    def run_code():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            result = await sandbox().exec(["python3", "-c", "print(40 + 2)"])
            state.metadata["stdout"] = result.stdout
            state.output.completion = result.stdout.strip() if result.success else "error"
            return state

        return solve

    log = run([generate(), run_code()], scorer=includes(), sandbox_name="local")
    assert log.samples[0].output.completion == "42"


def test_sandbox_write_and_read_file() -> None:
    @solver
    def files():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            await sandbox().write_file("notes.txt", "hello")
            state.output.completion = await sandbox().read_file("notes.txt")
            return state

        return solve

    log = run([generate(), files()], sandbox_name="local")
    assert log.samples[0].output.completion == "hello"


def test_sandbox_exec_with_input_and_timeout() -> None:
    @solver
    def piped():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            result = await sandbox().exec(["cat"], input="piped text", timeout=30)
            state.output.completion = result.stdout
            return state

        return solve

    log = run([generate(), piped()], sandbox_name="local")
    assert log.samples[0].output.completion == "piped text"


def test_token_limit_context_manager() -> None:
    from assay.util import LimitExceededError, token_limit

    caught = {}

    @solver
    def limited():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            try:
                with token_limit(1):
                    state = await generate(state)
            except LimitExceededError as ex:
                caught["type"] = ex.type
            return state

        return solve

    run(limited(), model="mockllm/model")  # it counts a text answer's words as tokens
    assert caught == {"type": "token"}


def test_message_limit_context_manager() -> None:
    from assay.util import LimitExceededError, message_limit

    caught = {}

    @solver
    def limited():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            try:
                with message_limit(1):
                    state = await generate(state)
            except LimitExceededError as ex:
                caught["type"] = ex.type
            return state

        return solve

    run(limited())
    assert caught == {"type": "message"}


def test_sample_limits_on_task() -> None:
    log = run(generate(), message_limit=10, token_limit=10_000, time_limit=60, working_limit=60)
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_json_schema_of_a_model() -> None:
    from pydantic import BaseModel

    from assay.util import json_schema

    class Answer(BaseModel):
        value: int

    schema = json_schema(Answer)
    properties = schema["properties"] if isinstance(schema, dict) else schema.properties
    assert "value" in properties


def test_concurrency() -> None:
    from assay.util import concurrency

    @solver
    def guarded():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            async with concurrency("api", 2):
                return await generate(state)

        return solve

    run(guarded())


def test_time_limit_context_manager() -> None:
    import anyio

    from assay.util import LimitExceededError, time_limit

    caught = {}

    @solver
    def slow():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            try:
                with time_limit(0.05):
                    await anyio.Event().wait()  # never set: only the limit ends it
            except LimitExceededError as ex:
                caught["type"] = ex.type
            return await generate(state)

        return solve

    run(slow())
    assert caught == {"type": "time"}


def test_an_uncaught_limit_ends_the_sample_which_is_still_scored() -> None:
    from assay.util import token_limit

    @solver
    def limited():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            with token_limit(1):
                return await generate(state)

        return solve

    log = run(limited(), model="mockllm/model")
    assert log.samples[0].scores["includes"] is not None
