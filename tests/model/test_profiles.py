"""Named OpenAI-compatible services (``ollama/``, ``groq/``, ``vllm/``... and
``openai-api/<service>/``): each reaches the server its ``<NAME>_BASE_URL`` names with the
key of its ``<NAME>_API_KEY``, here a server of our own on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import EXIT_PASSED, ConfigError
from assay.model import get_model
from tests.helpers import run_cli
from tests.model.test_openai import ask
from tests.servers.openai_compat import OpenAICompatServer

SERVICES = ["vllm", "sglang", "ollama", "groq", "together", "openrouter", "fireworks"]
SERVICES += ["deepseek", "sambanova", "moonshot", "perplexity"]


@pytest.fixture(autouse=True)
def _no_service_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "XAI_API_KEY", "XAI_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    for service in [*SERVICES, "acme"]:
        monkeypatch.delenv(f"{service.upper()}_API_KEY", raising=False)
        monkeypatch.delenv(f"{service.upper()}_BASE_URL", raising=False)


@pytest.mark.parametrize("service", SERVICES)
def test_a_service_is_asked_at_its_base_url_with_its_own_key(
    service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OpenAICompatServer(api_key=f"key-of-{service}") as server:
        monkeypatch.setenv(f"{service.upper()}_BASE_URL", server.url)
        monkeypatch.setenv(f"{service.upper()}_API_KEY", f"key-of-{service}")
        output = ask(get_model(f"{service}/some-model"), "hi")
    assert output.completion == "echo: hi"
    (seen,) = server.requests
    assert seen.body["model"] == "some-model"
    assert seen.authorization == f"Bearer key-of-{service}"


def test_grok_reads_xai_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    with OpenAICompatServer(api_key="xai-key") as server:
        monkeypatch.setenv("XAI_BASE_URL", server.url)
        monkeypatch.setenv("XAI_API_KEY", "xai-key")
        assert ask(get_model("grok/grok-4"), "hi").completion == "echo: hi"


def test_a_keyless_service_never_gets_the_openai_key(
    monkeypatch: pytest.MonkeyPatch, openai_server: OpenAICompatServer
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-never-for-ollama")
    monkeypatch.setenv("OLLAMA_BASE_URL", openai_server.url)
    ask(get_model("ollama/llama3"), "hi")
    (seen,) = openai_server.requests
    assert seen.authorization is not None
    assert "sk-openai" not in seen.authorization


def test_the_model_base_url_wins_over_the_variable(
    monkeypatch: pytest.MonkeyPatch, openai_server: OpenAICompatServer
) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "g")
    monkeypatch.setenv("GROQ_BASE_URL", "http://127.0.0.1:9/v1")  # nothing answers there
    ask(get_model("groq/llama", base_url=openai_server.url), "hi")
    assert len(openai_server.requests) == 1


def test_a_missing_key_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="the TOGETHER_API_KEY environment variable is not set"):
        get_model("together/llama")


def test_vllm_without_a_server_names_its_variable() -> None:
    with pytest.raises(ConfigError, match="the VLLM_BASE_URL environment variable is not set"):
        get_model("vllm/qwen")


def test_the_services_default_server_is_the_real_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "k")
    assert get_model("openrouter/x/y").api.base_url == "https://openrouter.ai/api/v1"  # type: ignore[attr-defined]
    assert get_model("ollama/m").api.base_url == "http://localhost:11434/v1"  # type: ignore[attr-defined]


def test_openai_api_reaches_any_service_by_its_name(
    monkeypatch: pytest.MonkeyPatch, openai_server: OpenAICompatServer
) -> None:
    monkeypatch.setenv("ACME_BASE_URL", openai_server.url)
    monkeypatch.setenv("ACME_API_KEY", "acme-key")
    assert ask(get_model("openai-api/acme/m-1"), "hi").completion == "echo: hi"
    (seen,) = openai_server.requests
    assert (seen.body["model"], seen.authorization) == ("m-1", "Bearer acme-key")
    with pytest.raises(ConfigError, match="is not 'provider/name'"):
        get_model("openai-api/acme")


def test_a_service_on_the_command_line(openai_server: OpenAICompatServer, tmp_path: Path) -> None:
    (tmp_path / "task.py").write_text(
        "from assay import Task, task, Sample\n"
        "from assay.score import includes\n"
        "@task\n"
        "def hi():\n"
        "    return Task(dataset=[Sample(input='hi', target='hi')], scorer=includes())\n"
    )
    proc = run_cli(
        *("run", "task.py@hi", "--model", "ollama/llama3", "-o", tmp_path / "run"),
        cwd=tmp_path,
        env={"OLLAMA_BASE_URL": openai_server.url},
    )
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    assert openai_server.requests[0].body["model"] == "llama3"
