"""Model roles, as in Inspect: ``Task(model_roles=)``, ``--model-role``, ``get_model(role=)``
and the grader role of ``model_graded_*``, against the OpenAI-compatible server on
127.0.0.1 (each request names its model, so the server shows who was asked what)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import assay
from assay import Sample, Task, generate
from assay.errors import ConfigError
from assay.model import get_model
from assay.scorer import model_graded_qa
from assay.solver import Generate, TaskState, solver
from tests.helpers import error_line, run_cli, run_dirs, simple_spec, write_module
from tests.servers.openai_compat import OpenAICompatServer


def answer_or_grade(payload: dict[str, Any]) -> str:
    """The judge grades C; any other model answers Paris."""
    return "GRADE: C" if payload["model"] == "judge" else "Paris"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAICompatServer(reply=answer_or_grade) as running:
        yield running


def asked(server: OpenAICompatServer) -> list[str]:
    return [seen.body["model"] for seen in server.requests]


def capital(**task: Any) -> Task:
    return Task(
        dataset=[Sample(input="Capital of France?", target="Paris")],
        solver=generate(),
        scorer=model_graded_qa(),
        **task,
    )


def test_the_task_s_grader_role_grades(server: OpenAICompatServer, tmp_path: Path) -> None:
    task = capital(model_roles={"grader": "openai/judge"})
    (result,) = assay.eval(
        task, model="openai/answerer", model_base_url=server.url, log_dir=tmp_path
    )
    assert result.status == "success", result.error
    assert asked(server) == ["answerer", "judge"]
    assert result.metrics is not None
    assert result.path is not None
    spec = json.loads((result.path / "spec.json").read_text())
    assert spec["targets"][0]["model_roles"] == {"grader": "openai/judge"}


def test_without_a_grader_role_the_answering_model_grades(
    server: OpenAICompatServer, tmp_path: Path
) -> None:
    (result,) = assay.eval(
        capital(), model="openai/answerer", model_base_url=server.url, log_dir=tmp_path
    )
    assert result.status == "success", result.error
    assert asked(server) == ["answerer", "answerer"]
    # the eval's own roles bind the grader as the task's would
    (bound,) = assay.eval(
        capital(),
        model="openai/answerer",
        model_roles={"grader": "openai/judge"},
        model_base_url=server.url,
        log_dir=tmp_path,
    )
    assert bound.status == "success", bound.error
    assert asked(server)[2:] == ["answerer", "judge"]


TASK = """
from assay import Sample, Task, generate, task
from assay.scorer import model_graded_qa


@task
def capital() -> Task:
    return Task(dataset=[Sample(input="Capital of France?", target="Paris")],
                solver=generate(), scorer=model_graded_qa(),
                model_roles={"grader": "openai/answerer"})
"""


@pytest.mark.doc(
    "docs/cli.md",
    "`--model-role ROLE=provider/name` (repeatable) binds a model to a role, for "
    "`get_model(role=...)` and the grader of `model_graded_qa`/`model_graded_fact`; it wins "
    "over the task's own `Task(model_roles=...)` and is recorded in the run's spec.",
)
def test_model_role_on_the_command_line_wins_over_the_task_s(
    server: OpenAICompatServer, tmp_path: Path
) -> None:
    write_module(tmp_path, "capital", TASK)
    proc = run_cli(
        "run",
        tmp_path / "capital.py",
        "--model",
        "openai/answerer",
        "--model-role",
        "grader=openai/judge",
        "--model-base-url",
        server.url,
        "--log-dir",
        tmp_path / "logs",
    )
    assert proc.returncode == 0, proc.stderr
    assert asked(server) == ["answerer", "judge"]
    (run,) = run_dirs(tmp_path / "logs")
    scores = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    assert [s["value"] for s in scores] == [1.0]  # C: correct
    spec = json.loads((run / "spec.json").read_text())
    assert spec["targets"][0]["model_roles"] == {"grader": "openai/judge"}
    # re-scoring replays the judge's logged calls: no server, no key, the same scores
    scored = run_cli("score", run, env={"OPENAI_API_KEY": ""})
    assert scored.returncode == 0, scored.stdout + scored.stderr
    assert "all equal the recorded ones" in scored.stdout, scored.stdout


@pytest.mark.doc(
    "docs/cli.md",
    "A `--model-role` value that is not `role=provider/name` is exit 2, and so is "
    "`--model-role` with a YAML spec.",
)
def test_a_malformed_model_role_is_one_line_and_exit_2(tmp_path: Path) -> None:
    write_module(tmp_path, "capital", TASK)
    proc = run_cli("run", tmp_path / "capital.py", "--model", "mock/x", "--model-role", "grader")
    assert proc.returncode == 2
    assert "--model-role 'grader' is not role=provider/name" in error_line(proc)
    spec = simple_spec(tmp_path / "yaml")
    proc = run_cli("run", spec, "--model-role", "grader=mock/judge", "--log-dir", tmp_path)
    assert proc.returncode == 2
    assert "--model-role is for Python tasks" in error_line(proc)


@solver
def ask_roles() -> Any:
    """Records which model each way of calling get_model() gives."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.metadata["critic"] = get_model(role="critic").name
        state.metadata["unbound"] = get_model(role="helper", default="mock/fallback").name
        state.metadata["active"] = get_model().name
        return state

    return solve


def test_get_model_by_role_by_default_and_the_active_model(tmp_path: Path) -> None:
    task = Task(
        dataset=[Sample(input="hi", target="")],
        solver=ask_roles(),
        model_roles={"critic": "mock/critic"},
    )
    (result,) = assay.eval(task, model="mock/under-test", log_dir=tmp_path)
    assert result.status == "success", result.error
    from tests.helpers import states_by_sample

    assert result.path is not None
    (state,) = states_by_sample(result.path).values()
    assert {k: state["metadata"][k] for k in ("critic", "unbound", "active")} == {
        "critic": "mock/critic",
        "unbound": "mock/fallback",
        "active": "mock/under-test",
    }


def test_get_model_without_a_name_outside_a_task_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as caught:
        get_model()
    assert "get_model() names no model" in str(caught.value)
