"""Inspect idioms written as an Inspect user writes them, run through ``assay.eval`` on the
mock provider: prompt templates quoting braces, TaskState setters, ``store_as`` /
``metadata_as``, ``Score.as_*``, ``Task(version=, tags=)``, and the ``assay.scorer`` /
``assay.util`` module names (see docs/inspect.md)."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

import assay.sandbox
import assay.score
from assay import Sample, Task, eval, task
from assay.model import ChatMessage, get_model
from assay.scorer import CORRECT, PARTIAL, Score, Target, accuracy, exact, scorer
from assay.solver import (
    Generate,
    TaskState,
    generate,
    prompt_template,
    solver,
    system_message,
    user_message,
)
from assay.solver import Target as Target_of_solvers
from assay.task import task_with
from assay.util import StoreModel, sandbox, store, store_as
from tests.helpers import bundles_by_sample, run_cli, state_of


def recording_model(answer: str = "ok") -> tuple[object, list[list[ChatMessage]]]:
    """A mock model answering *answer*, and every conversation it was sent."""
    seen: list[list[ChatMessage]] = []

    def reply(messages: list[ChatMessage]) -> str:
        seen.append(list(messages))
        return answer

    return get_model("mock/recorder", outputs=reply), seen


SYSTEM = 'Flags look like picoCTF{s0me_th1ng}. Reply as JSON: {"flag": "..."}.'
TEMPLATE = 'Topic {topic}. {prompt}\nExample: {"answer": {"value": 1}} or {} or {unknown}'
USER = "Keep {{doubled}} braces, a lone } and { as written; the topic is {topic!r}."


def test_templates_fill_only_known_names_and_leave_every_other_brace(tmp_path: Path) -> None:
    model, seen = recording_model()
    sample = Sample(input="Find the flag.", target="ok", metadata={"topic": "crypto"})
    steps = [system_message(SYSTEM), prompt_template(TEMPLATE), user_message(USER), generate()]
    task = Task(dataset=[sample], solver=steps, scorer=exact())
    (result,) = eval(task, model=model, log_dir=tmp_path)
    assert result.status == "success", result.error
    (messages,) = seen
    assert [(m.role, m.content) for m in messages] == [
        ("system", SYSTEM),
        (
            "user",
            'Topic crypto. Find the flag.\nExample: {"answer": {"value": 1}} or {} or {unknown}',
        ),
        ("user", "Keep {doubled} braces, a lone } and { as written; the topic is 'crypto'."),
    ]


@pytest.mark.parametrize(
    ("template", "sent"),
    [
        ("{{prompt}} is {prompt}", "{prompt} is Find it."),  # as str.format: {{ and }} escape
        ('Answer as {{"flag": "{topic}"}}', 'Answer as {"flag": "crypto"}'),
        ('{{"a": {{"b": 1}}}}', '{"a": {"b": 1}}'),
        ('{"a": {"b": 1}}', '{"a": {"b": 1}}'),  # no {{: a nested JSON example stays whole
        ("set() is {} and }} alone", "set() is {} and }} alone"),
    ],
)
def test_doubled_braces_are_single_as_str_format_makes_them(
    tmp_path: Path, template: str, sent: str
) -> None:
    model, seen = recording_model()
    sample = Sample(input="Find it.", target="ok", metadata={"topic": "crypto"})
    task = Task(dataset=[sample], solver=[system_message(template), generate()], scorer=exact())
    (result,) = eval(task, model=model, log_dir=tmp_path)
    assert result.status == "success", result.error
    assert seen[0][0].content == sent


class Attempts(StoreModel):
    count: int = 0
    notes: list[str] = Field(default_factory=list)


class Topic(BaseModel):
    topic: str
    level: int


@solver
def tidy() -> object:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata_as(Topic)
        state.user_prompt.text = f"[{meta.topic}/{meta.level}] {state.user_prompt.text}"
        state = await generate(state)
        state.output.completion = state.output.completion.strip().upper()
        attempts = state.store_as(Attempts)
        attempts.count += 1
        store_as(Attempts).notes.append(meta.topic)  # the running trial's, found implicitly
        store().set("answered", True)
        return state

    return solve


@scorer(metrics=[accuracy()])
def counted_once() -> object:
    async def score(state: TaskState, target: Target) -> Score:
        attempts = store_as(Attempts)
        assert store().get("answered") is True and store().has("Attempts:count")
        right = attempts.count == 1 and state.output.completion == target.text
        return Score(value=CORRECT if right else "I", answer=state.output.completion)

    return score


def test_state_setters_store_as_and_metadata_as_reach_the_scorer(tmp_path: Path) -> None:
    model, seen = recording_model("  paris ")
    sample = Sample(input="Capital?", target="PARIS", metadata={"topic": "geo", "level": 2})
    task = Task(dataset=[sample], solver=tidy(), scorer=counted_once())
    (result,) = eval(task, model=model, log_dir=tmp_path)
    assert result.status == "success", result.error
    assert seen[0][-1].content == "[geo/2] Capital?"
    assert result.task_metrics[result.model]["counted_once"]["accuracy"] == 1.0
    (bundle,) = bundles_by_sample(result.path).values()
    final = state_of(result.path, bundle)
    assert final["output"]["message"]["content"] == "PARIS"
    assert final["store"] == {
        "Attempts:count": 1,
        "Attempts:notes": ["geo"],
        "answered": True,
    }


def test_store_models_share_the_store_and_instances_keep_apart() -> None:
    store: dict[str, object] = {"Attempts:count": 4}
    first = store_as(Attempts, store=store)
    assert first.count == 4  # what is in the store wins over the default
    first.notes.append("a")
    again = store_as(Attempts, store=store)
    assert again.notes == ["a"]
    other = store_as(Attempts, "b", store=store)
    other.count = 9
    assert store == {
        "Attempts:count": 4,
        "Attempts:notes": ["a"],
        "Attempts:b:count": 9,
        "Attempts:b:notes": [],
    }


def test_metadata_as_validates_like_pydantic() -> None:
    state = TaskState(
        model="m", sample_id=1, epoch=1, input="x", target=Target("y"), metadata={"topic": 3}
    )
    with pytest.raises(ValueError, match="level"):
        state.metadata_as(Topic)


def test_score_as_methods_read_the_value_as_inspect_does() -> None:
    assert Score(value=CORRECT).as_float() == 1.0
    assert Score(value=PARTIAL).as_float() == 0.5
    assert Score(value=0.25).as_float() == 0.25
    assert Score(value=True).as_bool() is True
    assert Score(value=3).as_int() == 3
    assert Score(value="C").as_str() == "C"
    assert Score(value=7).text == "7"
    with pytest.raises(ValueError, match="not a bool"):
        Score(value=1).as_bool()
    with pytest.raises(ValueError, match="not an int"):
        Score(value=True).as_int()
    with pytest.raises(ValueError, match="not a str"):
        Score(value=1.0).as_str()


@task
def versioned() -> Task:
    return Task(
        dataset=[Sample(input="hi", target="ok")],
        scorer=exact(),
        version=2,
        tags=["smoke", "inspect"],
        metadata={"source": "ported"},
        display_name="Versioned task",
    )


def test_task_version_tags_and_metadata_are_recorded_in_the_spec(tmp_path: Path) -> None:
    model, _ = recording_model()
    (result,) = eval(versioned(), model=model, log_dir=tmp_path)
    assert result.status == "success", result.error
    spec = json.loads((result.path / "spec.json").read_text())
    assert spec["task_info"] == {
        "version": 2,
        "tags": ["smoke", "inspect"],
        "display_name": "Versioned task",
        "metadata": {"source": "ported"},
    }
    (bumped,) = eval(task_with(versioned(), version=3), model=model, log_dir=tmp_path)
    bumped_spec = json.loads((bumped.path / "spec.json").read_text())
    assert bumped_spec["task_info"]["version"] == 3
    assert bumped_spec["evaluation"] == spec["evaluation"] == "versioned"


def test_assay_scorer_is_assay_score_under_inspect_s_name() -> None:
    scorer_module = importlib.import_module("assay.scorer")  # assay.scorer: the decorator
    assert set(scorer_module.__all__) == {*assay.score.__all__, "Target"}
    for name in assay.score.__all__:
        assert getattr(scorer_module, name) is getattr(assay.score, name), name
    assert scorer_module.Target is Target_of_solvers


def test_assay_util_has_the_sandbox_of_the_sample() -> None:
    assert sandbox is assay.sandbox.sandbox


def test_importing_assay_scorer_keeps_the_scorer_decorator_on_assay() -> None:
    """``assay.scorer`` is both Inspect's module name and assay's decorator: importing
    the module must not replace ``from assay import scorer`` (the decorator)."""
    code = (
        "import assay.scorer; from assay import scorer; import assay; "
        "print(scorer.__module__, assay.scorer.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["assay.score._score", "assay.score._score"]


INSPECT_DOC = Path(__file__).resolve().parents[2] / "docs" / "inspect.md"


def test_the_ported_task_in_docs_inspect_md_runs(tmp_path: Path) -> None:
    code = re.search(r"```python\n(.*?)```", INSPECT_DOC.read_text(), re.S)
    assert code is not None
    (tmp_path / "ported.py").write_text(code.group(1))
    proc = run_cli(
        "run", "ported.py@capitals", "-m", "mock/x", "-M", "default_output=Paris", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "answer_quality: correct/mean 1.0000, correct/stderr 0.0000, concise/mean 1.0000" in (
        proc.stdout
    )


def test_the_counts_under_the_inspect_table_are_the_table_s() -> None:
    text = INSPECT_DOC.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ")][1:]  # no header
    kinds = Counter(re.split(r"\s*\|\s*", row)[3] for row in rows)
    expected = (
        f"Counts: {kinds['same']} same, {kinds['different']} different, "
        f"{kinds['not supported']} not supported ({len(rows)} idioms)."
    )
    assert expected in text
    assert set(kinds) == {"same", "different", "not supported"}


def test_store_outside_a_trial_says_where_it_works() -> None:
    with pytest.raises(RuntimeError, match="call them from a solver or scorer"):
        store()
    with pytest.raises(RuntimeError, match=re.escape("pass store=state.store")):
        store_as(Attempts)
    kept = store_as(Attempts, store={})  # with a store given, it works anywhere
    assert kept.count == 0


def test_without_pydantic_assay_util_says_which_extra_to_install() -> None:
    code = (
        "import sys; sys.modules['pydantic'] = None\n"
        "from assay.errors import ConfigError\n"
        "try:\n"
        "    import assay.util\n"
        "except ConfigError as exc:\n"
        "    print(exc.one_line())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == (
        "assay.util's StoreModel needs the pydantic package, which is not installed "
        "— install it with: pip install 'assay[inspect]'"
    )
