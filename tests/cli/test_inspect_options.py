"""``assay run`` with the options an Inspect user types (``inspect eval`` → ``assay run``):
``--limit A-B``, ``--temperature``/``--max-tokens``/``--seed``/``--reasoning-effort``,
``--max-samples``; a misspelt ``-T`` is warned about; options that only a Python task can
use are refused on a YAML spec; a task with no model never runs on a silent mock."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from assay import Task, eval
from assay.dataset import Sample
from assay.errors import EXIT_CONFIG, EXIT_PASSED, ConfigError
from assay.evidence._log import events_in
from assay.score import exact
from tests.cli.test_run_options import IN_FLIGHT
from tests.helpers import (
    REPO,
    SHIPPING,
    artifact_bytes,
    bundles_by_sample,
    error_line,
    events_of,
    run_cli,
    run_dirs,
    start_cli,
    unique_callable_spec,
    wait_for,
    whole_records,
    write_module,
)
from tests.servers.openai_compat import OpenAICompatServer

ARITHMETIC = REPO / "examples" / "arithmetic" / "tasks.py"


def arithmetic(log_dir: Path, *options: str) -> tuple[int, str, str]:
    """``assay run`` of the arithmetic example (its own calculator model), one epoch."""
    proc = run_cli(
        "run", f"{ARITHMETIC}@arithmetic", "-T", "epochs=1", "--log-dir", log_dir, *options
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.doc(
    "docs/cli.md",
    "`--limit N` runs the first N samples, `--limit A-B` samples A to B (1-based, both "
    "included, as Inspect reads it: `--limit 10-20` is eleven samples).",
)
def test_limit_a_to_b_runs_those_samples_counted_from_one(tmp_path: Path) -> None:
    code, out, err = arithmetic(tmp_path, "-T", "count=30", "--limit", "10-20")
    assert code == EXIT_PASSED, out + err
    (run,) = run_dirs(tmp_path)
    assert sorted(bundles_by_sample(run), key=lambda s: int(s[1:])) == [
        f"q{i}" for i in range(10, 21)
    ]
    code, out, err = arithmetic(tmp_path / "first", "--limit", "3")
    assert code == EXIT_PASSED, out + err
    assert sorted(bundles_by_sample(run_dirs(tmp_path / "first")[0])) == ["q1", "q2", "q3"]


@pytest.mark.parametrize("limit", ["0", "0-3", "5-2", "3-", "ten"])
def test_a_limit_that_is_neither_n_nor_a_range_is_exit_2(tmp_path: Path, limit: str) -> None:
    code, out, err = arithmetic(tmp_path, "--limit", limit)
    assert code == EXIT_CONFIG, out + err
    assert f"Invalid value for '--limit': '{limit}'" in err
    assert not tmp_path.exists() or not run_dirs(tmp_path)


@pytest.mark.doc(
    "docs/cli.md",
    "`--temperature`, `--max-tokens`, `--seed` and `--reasoning-effort` set those "
    "`GenerateConfig` fields for every model of the run, over the task's own `config`",
)
def test_generation_options_reach_the_server_over_the_tasks_config(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    (tmp_path / "task.py").write_text(
        "from assay import Task, task, Sample\n"
        "from assay.model import GenerateConfig\n"
        "from assay.score import exact\n"
        "@task\n"
        "def hot():\n"
        "    return Task(dataset=[Sample(input='hi', target='x')], scorer=exact(),\n"
        "                config=GenerateConfig(temperature=1.5, top_p=0.5))\n"
    )
    proc = run_cli(
        "run",
        "task.py@hot",
        "--model",
        "openai/m",
        "--model-base-url",
        openai_server.url,
        "--temperature",
        "0.25",
        "--max-tokens",
        "7",
        "--seed",
        "11",
        "--reasoning-effort",
        "low",
        "-o",
        tmp_path / "run",
        cwd=tmp_path,
        env={"OPENAI_API_KEY": "k"},
    )
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    (request,) = openai_server.requests
    sent = {k: request.body.get(k) for k in ("temperature", "top_p", "max_tokens", "seed")}
    assert sent == {"temperature": 0.25, "top_p": 0.5, "max_tokens": 7, "seed": 11}
    assert request.body["reasoning_effort"] == "low"
    spec = json.loads((tmp_path / "run" / "spec.json").read_text())
    assert spec["task"]["config"] == {
        "max_tokens": 7,
        "reasoning_effort": "low",
        "seed": 11,
        "temperature": 0.25,
    }
    assert run_cli("verify", tmp_path / "run").returncode == EXIT_PASSED


def test_eval_takes_generation_settings_as_keywords_as_inspect_does(tmp_path: Path) -> None:
    task = Task(dataset=[Sample(input="hi", target="x")], scorer=exact())
    (result,) = eval(task, model="mock/m", log_dir=tmp_path, temperature=0.0, max_tokens=3)
    assert result.status == "success", result.error
    (call,) = [e for e in events_of(result.path, "sampling") if "model" in e["data"]]
    prompt = json.loads(artifact_bytes(result.path, call["data"]["prompt"]))
    assert prompt["config"] == {"temperature": 0.0, "max_tokens": 3}
    with pytest.raises(ConfigError, match="temperature"):
        eval(task, model="mock/m", log_dir=tmp_path, temperature="hot")


@pytest.mark.doc("docs/cli.md", "`--max-samples N` is `-j N`, under Inspect's name.")
def test_max_samples_is_how_many_trials_are_in_flight(tmp_path: Path) -> None:
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(20)]
    spec = unique_callable_spec(tmp_path / "suite", IN_FLIGHT, samples=samples)
    run = tmp_path / "run"
    ran = run_cli("run", spec, "-o", run, "--max-samples", "4", env={"EXPECTED_IN_FLIGHT": "4"})
    assert ran.returncode == EXIT_PASSED, ran.stdout + ran.stderr
    assert max(e["data"]["in_flight"] for e in events_of(run, "extra")) == 4


@pytest.mark.doc(
    "docs/cli.md",
    "A `-T` name the task does not take is left out with a warning on stderr naming the "
    "task's parameters (`assay: warning: -T colour: task 'arithmetic' takes no such "
    "argument (its parameters: count, epochs); ignored`); the run goes on.",
)
def test_an_unknown_task_argument_is_warned_about_and_the_run_goes_on(tmp_path: Path) -> None:
    code, out, err = arithmetic(tmp_path, "-T", "count=2", "-T", "colour=red", "-T", "cnt=5")
    assert code == EXIT_PASSED, out + err
    assert (
        "assay: warning: -T colour, cnt: task 'arithmetic' takes no such argument "
        "(its parameters: count, epochs); ignored"
    ) in err.splitlines()
    assert len(bundles_by_sample(run_dirs(tmp_path)[0])) == 2  # count=2 was taken


@pytest.mark.doc(
    "docs/cli.md",
    "Given with a YAML spec, each of these is refused with one line naming it (exit 2): "
    "a YAML spec sets its own targets, samples and repetitions.",
)
@pytest.mark.parametrize(
    "option",
    [
        ("--model", "openai/gpt-4o"),
        ("-m", "openai/gpt-4o"),
        ("-T", "count=3"),
        ("-M", "timeout=3"),
        ("--limit", "2"),
        ("--sample-id", "1"),
        ("--epochs", "2"),
        ("--log-dir", "elsewhere"),
        ("--temperature", "0"),
        ("--model-base-url", "http://127.0.0.1:9/v1"),
    ],
)
def test_a_python_only_option_on_a_yaml_spec_is_exit_2(
    tmp_path: Path, option: tuple[str, str]
) -> None:
    proc = run_cli("run", SHIPPING / "eval.yaml", "-o", tmp_path / "run", *option)
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    line = error_line(proc)
    long_name = {"-m": "--model"}.get(option[0], option[0])
    assert line.startswith(f"assay: {long_name} is for Python tasks"), line
    assert not (tmp_path / "run").exists()


NO_MODEL = """
from assay import Task, task, Sample
from assay.score import exact


@task
def hello():
    return Task(dataset=[Sample(input="hi", target="hi")], scorer=exact())
"""


@pytest.mark.doc(
    "docs/cli.md",
    "A task that names no model (`Task(model=...)`) run without `--model` is exit 2, "
    "never a silent mock model.",
)
def test_a_task_without_a_model_and_no_model_option_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "tasks.py").write_text(NO_MODEL)
    proc = run_cli("run", "tasks.py@hello", cwd=tmp_path)
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    assert error_line(proc) == (
        "assay: task 'hello' names no model and none was given — pass --model "
        "provider/name (e.g. --model openai/gpt-4o-mini), or set Task(model=...)"
    )
    assert not (tmp_path / "runs").exists()
    given = run_cli("run", "tasks.py@hello", "--model", "mock/echo", cwd=tmp_path)
    assert given.returncode == EXIT_PASSED, given.stdout + given.stderr


def test_eval_without_any_model_raises_the_same_error(tmp_path: Path) -> None:
    task = Task(dataset=[Sample(input="hi", target="hi")], scorer=exact())
    with pytest.raises(ConfigError, match="names no model"):
        eval(task, log_dir=tmp_path)
    assert not tmp_path.exists() or not list(tmp_path.iterdir())


WAITS = """
import os

import anyio

from assay import Sample, Task, includes, task


async def answer_then_wait(state, generate):
    state = await generate(state)
    while not os.path.exists(os.environ["GO_ON"]):
        await anyio.sleep(0.02)
    return state


@task
def waits():
    samples = [Sample(input=f"say {i}", target="four", id=f"s{i}") for i in range(4)]
    return Task(dataset=samples, solver=answer_then_wait, scorer=includes())
"""


@pytest.mark.doc(
    "docs/cli.md",
    "they are recorded in the run's spec, and `resume` uses them again",
)
def test_resume_runs_the_rest_with_the_same_range_and_generation_options(tmp_path: Path) -> None:
    write_module(tmp_path, "tasks", WAITS)
    env = {"GO_ON": str(tmp_path / "go-on")}
    options = ("--limit", "2-3", "--temperature", "0.5", "--seed", "4")
    args = ("tasks.py@waits", "-m", "mock/x", "-M", "default_output=four", *options)
    proc = start_cli("run", *args, "-o", tmp_path / "run", cwd=tmp_path, env=env)
    run = tmp_path / "run"

    def called() -> bool:
        events = run / "events.jsonl"
        logged = [e for line in whole_records(events) for e in events_in(line)]
        return any(e["type"] == "sampling" for e in logged)  # its batch written as it waits

    assert wait_for(called, timeout=60), proc.stderr
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    (tmp_path / "go-on").write_text("")
    resumed = run_cli("resume", run, cwd=tmp_path, env=env)
    assert resumed.returncode == EXIT_PASSED, resumed.stdout + resumed.stderr
    assert run_cli("verify", run).returncode == EXIT_PASSED
    assert sorted(bundles_by_sample(run)) == ["s1", "s2"]
    calls = [e for e in events_of(run, "sampling") if "model" in e["data"]]
    configs = [json.loads(artifact_bytes(run, c["data"]["prompt"]))["config"] for c in calls]
    assert len(configs) >= 3  # some before the kill, both samples again after it
    assert all(c == {"temperature": 0.5, "seed": 4} for c in configs), configs
