"""Inspect's last GenerateConfig options: ``extra_headers`` (on every provider that sends
HTTP), ``cache_prompt`` (Anthropic's ``cache_control``), ``verbosity`` (OpenAI),
``effort`` (Anthropic's ``output_config``), and ``batch``, refused in one line. Each is
written as an Inspect user writes it, and checked on what a real server on 127.0.0.1
received."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from assay import Task, eval
from assay.dataset import Sample
from assay.errors import EXIT_CONFIG, EXIT_PASSED, ConfigError
from assay.model import GenerateConfig, ModelError, get_model, system_message, user_message
from assay.scorer import exact
from tests.helpers import bundles_by_sample, run_cli, state_of
from tests.model import test_google as google
from tests.model.test_anthropic import Messages
from tests.model.test_anthropic import server as server
from tests.model.test_generate_options import ask_anthropic
from tests.model.test_google import gemini as gemini
from tests.model.test_openai import LOOKUP, ask, model_on
from tests.servers.gemini import GeminiServer
from tests.servers.openai_compat import OpenAICompatServer

HEADERS = {"X-Team": "evals", "X-Trace": "abc-123"}


@pytest.mark.parametrize("transport", ["direct", "httpx"])
def test_extra_headers_and_verbosity_reach_an_openai_compatible_server(
    openai_server: OpenAICompatServer, transport: str
) -> None:
    model = get_model("openai/tiny", base_url=openai_server.url, transport=transport)
    config = GenerateConfig(extra_headers=HEADERS, verbosity="low", cache_prompt=True)
    ask(model, "hi", config=config)
    (seen,) = openai_server.requests
    assert (seen.headers["x-team"], seen.headers["x-trace"]) == ("evals", "abc-123")
    assert seen.body["verbosity"] == "low"
    assert "cache_prompt" not in seen.body  # OpenAI caches prefixes on its own


def test_headers_are_only_on_the_calls_that_ask_for_them(
    openai_server: OpenAICompatServer,
) -> None:
    model = model_on(openai_server)
    ask(model, "one", config=GenerateConfig(extra_headers=HEADERS))
    ask(model, "two")
    first, second = openai_server.requests
    assert first.headers["x-team"] == "evals" and "x-team" not in second.headers


def test_effort_is_refused_by_chat_completions(openai_server: OpenAICompatServer) -> None:
    with pytest.raises(ModelError, match="does not take effort"):
        ask(model_on(openai_server), "hi", config=GenerateConfig(effort="high"))
    assert openai_server.requests == []


def test_anthropic_takes_headers_effort_and_caches_the_prompt(
    server: tuple[str, Messages],
) -> None:
    url, script = server
    config = GenerateConfig(extra_headers=HEADERS, effort="max", cache_prompt=True)
    model = get_model("anthropic/claude-test", base_url=url)

    async def call() -> None:
        messages = [system_message("Be brief."), user_message("hi")]
        try:
            await model.api.generate(messages, [LOOKUP], config)
        finally:
            await model.api.aclose()  # type: ignore[attr-defined]

    anyio.run(call)
    (request,) = script.requests
    ephemeral = {"type": "ephemeral"}
    assert request["output_config"] == {"effort": "max"}
    assert request["system"] == [{"type": "text", "text": "Be brief.", "cache_control": ephemeral}]
    assert request["tools"][-1]["cache_control"] == ephemeral
    assert request["messages"][-1]["content"][-1]["cache_control"] == ephemeral
    assert script.headers[0]["x-team"] == "evals"


@pytest.mark.parametrize(("tools", "cached"), [([LOOKUP], True), ([], False)])
def test_cache_prompt_auto_caches_when_tools_are_offered(
    server: tuple[str, Messages], tools: list[dict[str, object]], cached: bool
) -> None:
    url, script = server
    ask_anthropic(url, GenerateConfig(cache_prompt="auto"), tools)
    (request,) = script.requests
    assert ("cache_control" in request["messages"][-1]["content"][-1]) is cached


def test_anthropic_refuses_verbosity_in_one_line(server: tuple[str, Messages]) -> None:
    url, script = server
    with pytest.raises(ConfigError, match="does not take verbosity"):
        get_model("anthropic/claude-test", base_url=url, verbosity="high")
    assert script.requests == []


def test_gemini_takes_extra_headers_and_refuses_verbosity_and_effort(
    gemini: GeminiServer,
) -> None:
    google.ask(
        google.model_on(gemini), [user_message("hi")], config=GenerateConfig(extra_headers=HEADERS)
    )
    (seen,) = gemini.requests
    assert seen.headers["x-team"] == "evals"
    for setting in ({"verbosity": "low"}, {"effort": "low"}):
        with pytest.raises(ConfigError, match=f"does not take {next(iter(setting))}"):
            google.model_on(gemini, **setting)


@pytest.mark.parametrize("batch", [True, 100, {"size": 50}])
def test_batch_is_refused_in_one_line(batch: object) -> None:
    with pytest.raises(ConfigError, match="does not use providers' batch APIs") as caught:
        GenerateConfig(batch=batch)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)
    assert GenerateConfig(batch=False) == GenerateConfig()  # Inspect's "off" is no setting


def test_eval_with_batch_is_a_config_error(tmp_path: Path) -> None:
    task = Task(dataset=[Sample(input="hi", target="hi")], scorer=exact())
    with pytest.raises(ConfigError, match="batch"):
        eval(task, model="mock/m", log_dir=tmp_path, batch=True)


@pytest.mark.parametrize("name", ["Authorization", "x-api-key", "Cookie"])
def test_a_credential_in_extra_headers_is_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="carries a credential"):
        GenerateConfig(extra_headers={name: "secret"})


TASK = """
from assay import Task, task, Sample
from assay.scorer import exact

@task
def hot():
    return Task(dataset=[Sample(input='hi', target='x')], scorer=exact())
"""


def test_batch_on_the_command_line_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "task.py").write_text(TASK)
    proc = run_cli("run", "task.py@hot", "--model", "mock/m", "-M", "batch=true", cwd=tmp_path)
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert "batch" in line


def test_the_evidence_has_alternatives_only_when_there_are_several_answers(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    task = Task(dataset=[Sample(input="hi", target="echo: hi")], scorer=exact())
    model = model_on(openai_server)
    (one,) = eval(task, model=model, log_dir=tmp_path / "one")
    (three,) = eval(task, model=model, log_dir=tmp_path / "three", num_choices=3)
    assert one.path is not None and three.path is not None
    (bundle,) = bundles_by_sample(one.path).values()
    assert "alternatives" not in state_of(one.path, bundle)["output"]  # Inspect has no null
    (bundle,) = bundles_by_sample(three.path).values()
    alternatives = state_of(three.path, bundle)["output"]["alternatives"]
    assert [a["message"]["content"] for a in alternatives] == ["echo: hi #2", "echo: hi #3"]


@pytest.mark.doc(
    "docs/cli.md",
    "`--verbosity low|medium|high` (sent to OpenAI-compatible servers as `verbosity`), "
    "`--effort low|medium|high|max` (sent to Anthropic as `output_config.effort`) and "
    "`--cache-prompt auto|true|false` (Anthropic's `cache_control` on the system prompt, "
    "the tools and the last message; `auto` when tools are offered) set their "
    "`GenerateConfig` fields the same way.",
)
def test_verbosity_and_cache_prompt_flags_reach_the_server_and_the_spec(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    (tmp_path / "task.py").write_text(TASK)
    proc = run_cli(
        *("run", "task.py@hot", "--model", "openai/m", "--model-base-url", openai_server.url),
        *("--verbosity", "low", "--cache-prompt", "true", "-o", tmp_path / "run"),
        cwd=tmp_path,
        env={"OPENAI_API_KEY": "k"},
    )
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    (request,) = openai_server.requests
    assert request.body["verbosity"] == "low"
    config = json.loads((tmp_path / "run" / "spec.json").read_text())["task"]["config"]
    assert (config["verbosity"], config["cache_prompt"]) == ("low", True)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--batch",), "does not use providers' batch APIs"),
        (("--effort", "high"), "does not take effort"),
    ],
)
@pytest.mark.doc("docs/cli.md", "`--batch` is exit 2: assay sends each call on its own")
def test_batch_and_a_refused_effort_are_exit_2(
    openai_server: OpenAICompatServer, tmp_path: Path, flags: tuple[str, ...], said: str
) -> None:
    (tmp_path / "task.py").write_text(TASK)
    proc = run_cli(
        *("run", "task.py@hot", "--model", "openai/m", "--model-base-url", openai_server.url),
        *flags,
        cwd=tmp_path,
        env={"OPENAI_API_KEY": "k"},
    )
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert said in line
    assert openai_server.requests == []
