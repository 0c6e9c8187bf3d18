"""Token usage through a real run: every model call's ``sampling`` event carries the
mock's usage (whitespace-separated words in, words out), and the state artifact's output
carries the usage of the call that produced it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from assay import Sample, Task, TaskState, eval, get_model, includes
from assay.evidence import verify_run
from assay.model import user_message
from assay.solver import Generate
from tests.helpers import artifact_bytes, events_of, read_jsonl, state_of


async def two_turns(state: TaskState, generate: Generate) -> TaskState:
    state = await generate(state)
    state.messages.append(user_message("say it again please"))
    return await generate(state)


def run_two_turns(tmp_path: Path) -> Path:
    task = Task(
        dataset=[Sample(input="one two three", target="four", id="s0")],
        solver=two_turns,
        scorer=includes(),
        name="usage",
    )
    (result,) = eval(
        task, model="mock/x", model_args={"outputs": lambda m: "four five"}, log_dir=tmp_path
    )
    assert result.status == "success", result.error
    assert result.path is not None and verify_run(result.path).ok
    return result.path


def model_calls(run: Path) -> list[dict[str, Any]]:
    """The ``sampling`` events of model calls (those naming a model)."""
    return [e["data"] for e in events_of(run, "sampling") if "model" in e["data"]]


def test_every_model_call_records_its_token_usage(tmp_path: Path) -> None:
    run = run_two_turns(tmp_path)
    calls = model_calls(run)
    assert [c["model"] for c in calls] == ["mock/x", "mock/x"]
    # call 1: "one two three" (3 words) -> "four five" (2)
    # call 2: 3 + 2 + "say it again please" (4) = 9 words -> 2
    assert [c["usage"] for c in calls] == [
        {"input_tokens": 3, "output_tokens": 2},
        {"input_tokens": 9, "output_tokens": 2},
    ]
    # the call's recorded output artifact holds the same usage
    output = json.loads(artifact_bytes(run, calls[1]["output"]))
    assert output["usage"] == calls[1]["usage"]


def test_the_state_artifacts_output_has_the_usage_of_its_call(tmp_path: Path) -> None:
    run = run_two_turns(tmp_path)
    (bundle,) = read_jsonl(run / "bundles.jsonl")
    state = state_of(run, bundle)
    assert state["output"]["usage"] == {"input_tokens": 9, "output_tokens": 2}
    assert state["output"]["model"] == "mock/x"


def test_sampling_events_are_parented_to_their_attempt(tmp_path: Path) -> None:
    run = run_two_turns(tmp_path)
    attempts = {(e["trial"], e["n"]) for e in events_of(run, "attempt_started")}
    sampling = [e for e in events_of(run, "sampling") if "model" in e["data"]]
    assert sampling and all((e["trial"], e["parent"]) in attempts for e in sampling)


async def _ask(model_name: str, prompt: str, **model_args: Any) -> Any:
    return await get_model(model_name, **model_args).generate(prompt)


def test_the_mock_counts_words_and_answers_its_default_or_its_function() -> None:
    default = anyio.run(_ask, "mock/d", "a b c d")
    assert default.completion == "Default output from the mock model"
    assert (default.usage.input_tokens, default.usage.output_tokens) == (4, 6)
    assert default.usage.total_tokens == 10

    echoed = anyio.run(lambda: _ask("mock/e", "x y", outputs=lambda m: m[-1].content.upper()))
    assert echoed.completion == "X Y"
    assert (echoed.usage.input_tokens, echoed.usage.output_tokens) == (2, 2)

    turns = anyio.run(lambda: _ask("mock/q", "hi", outputs=["first", "second"]))
    assert turns.completion == "first"


def test_the_mock_needs_nothing_but_its_name_and_is_deterministic(tmp_path: Path) -> None:
    def plain() -> Task:  # no solver given: generate()
        return Task(dataset=[Sample(input="q", target="Default", id="s")], name="plain")

    first = eval(plain(), model="mock/x", log_dir=tmp_path / "a")[0]
    second = eval(plain(), model="mock/x", log_dir=tmp_path / "b")[0]
    assert first.path is not None and second.path is not None
    a = state_of(first.path, read_jsonl(first.path / "bundles.jsonl")[0])
    b = state_of(second.path, read_jsonl(second.path / "bundles.jsonl")[0])
    assert a == b
    assert a["output"]["message"]["content"] == "Default output from the mock model"
