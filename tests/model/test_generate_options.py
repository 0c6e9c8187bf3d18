"""Inspect's sampling options (``top_k``, penalties, ``logit_bias``, ``num_choices``,
``best_of``, ``parallel_tool_calls``, ``extra_body``, ``stop_seqs``): what each provider's
server receives, what a provider without a place for one says, the command-line flags,
and the spec digest they are pinned in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from assay import Task, eval
from assay.dataset import Sample
from assay.errors import EXIT_CONFIG, EXIT_PASSED, ConfigError
from assay.model import GenerateConfig, ModelError, get_model, user_message
from assay.score import exact
from tests.helpers import run_cli
from tests.model.test_anthropic import Messages, message
from tests.model.test_anthropic import server as server
from tests.model.test_openai import LOOKUP, ask, model_on
from tests.servers.openai_compat import OpenAICompatServer

SAMPLING = GenerateConfig(
    top_k=40,
    frequency_penalty=0.5,
    presence_penalty=-0.25,
    logit_bias={42: 10, 7: -100},  # type: ignore[dict-item]  (Inspect: int ids)
    best_of=3,
    stop_seqs=["END"],
    extra_body={"chat_template_kwargs": {"enable_thinking": False}},
)


def test_sampling_options_reach_an_openai_compatible_server_in_its_names(
    openai_server: OpenAICompatServer,
) -> None:
    ask(model_on(openai_server), "hi", config=SAMPLING)
    body = openai_server.requests[0].body
    assert {k: body[k] for k in ("top_k", "frequency_penalty", "presence_penalty", "best_of")} == {
        "top_k": 40,
        "frequency_penalty": 0.5,
        "presence_penalty": -0.25,
        "best_of": 3,
    }
    assert body["logit_bias"] == {"42": 10, "7": -100}
    assert body["stop"] == ["END"]
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert "parallel_tool_calls" not in body  # no tools offered: no field


def test_parallel_tool_calls_go_out_only_with_tools(openai_server: OpenAICompatServer) -> None:
    config = GenerateConfig(parallel_tool_calls=False)
    ask(model_on(openai_server), "look", tools=[LOOKUP], config=config)
    assert openai_server.requests[0].body["parallel_tool_calls"] is False


def test_num_choices_is_n_and_every_answer_is_kept(openai_server: OpenAICompatServer) -> None:
    output = ask(model_on(openai_server), "hi", config=GenerateConfig(num_choices=3))
    assert openai_server.requests[0].body["n"] == 3
    assert output.completion == "echo: hi"
    assert [c.message.text for c in output.choices] == ["echo: hi", "echo: hi #2", "echo: hi #3"]
    assert [c.stop_reason for c in output.choices] == ["stop"] * 3


def test_one_answer_is_one_choice(openai_server: OpenAICompatServer) -> None:
    output = ask(model_on(openai_server), "hi")
    assert "n" not in openai_server.requests[0].body
    assert [c.message.text for c in output.choices] == ["echo: hi"]
    assert output.alternatives is None


def test_stop_seqs_is_stop_whichever_name_sets_it() -> None:
    assert GenerateConfig(stop_seqs=["x"]) == GenerateConfig(stop=["x"])
    assert GenerateConfig(stop=["a"]).merge(GenerateConfig(stop_seqs=["b"])).stop == ["b"]


def ask_anthropic(url: str, config: GenerateConfig, tools: list[dict[str, Any]]) -> Any:
    model = get_model("anthropic/claude-test", base_url=url)

    async def call() -> Any:
        try:
            return await model.api.generate([user_message("hi")], tools, config)
        finally:
            await model.api.aclose()  # type: ignore[attr-defined]

    return anyio.run(call)


def test_anthropic_takes_top_k_parallel_tool_calls_and_extra_body(
    server: tuple[str, Messages],
) -> None:
    url, script = server
    script.reply(200, message([{"type": "text", "text": "ok"}]))
    config = GenerateConfig(top_k=5, parallel_tool_calls=False, extra_body={"metadata": {"a": 1}})
    ask_anthropic(url, config, [LOOKUP])
    (request,) = script.requests
    assert request["top_k"] == 5
    assert request["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert request["metadata"] == {"a": 1}


@pytest.mark.parametrize(
    "setting",
    [{"frequency_penalty": 0.1}, {"presence_penalty": 0.1}, {"logit_bias": {1: 2}}, {"best_of": 2}],
)
def test_anthropic_refuses_what_its_wire_cannot_carry_in_one_line(
    server: tuple[str, Messages],
    setting: dict[str, Any],
) -> None:
    url, script = server
    (name,) = setting
    with pytest.raises(ConfigError, match=f"does not take {name}"):
        get_model("anthropic/claude-test", base_url=url, **setting)
    with pytest.raises(ModelError, match=f"does not take {name}"):
        ask_anthropic(url, GenerateConfig(**setting), [])
    assert script.requests == []  # refused before anything was sent


def test_anthropic_refuses_several_choices_and_takes_one(
    server: tuple[str, Messages],
) -> None:
    url, script = server
    with pytest.raises(ModelError, match="does not take num_choices"):
        ask_anthropic(url, GenerateConfig(num_choices=2), [])
    ask_anthropic(url, GenerateConfig(num_choices=1), [])
    assert "n" not in script.requests[0]


TASK = """
from assay import Task, task, Sample
from assay.score import exact

@task
def hot():
    return Task(dataset=[Sample(input='hi', target='x')], scorer=exact())
"""


@pytest.mark.doc(
    "docs/cli.md",
    "The other sampling options `inspect eval` has, `--top-p`, `--top-k`, "
    "`--frequency-penalty`, `--presence-penalty`, `--logit-bias 42=10,43=-10`, "
    "`--num-choices`, `--best-of`, `--stop-seqs a,b`, `--logprobs`, `--top-logprobs N`, "
    "`--parallel-tool-calls`/`--no-parallel-tool-calls` and `--extra-body JSON`, set their "
    "`GenerateConfig` fields the same way",
)
def test_the_inspect_flags_reach_the_server_and_the_spec(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    (tmp_path / "task.py").write_text(TASK)
    flags = [
        *("--top-k", "5", "--top-p", "0.9", "--frequency-penalty", "0.5"),
        *("--presence-penalty", "-0.5", "--num-choices", "2", "--best-of", "2"),
        *("--logit-bias", "42=10,43=-10", "--stop-seqs", "END,STOP", "--logprobs"),
        *("--top-logprobs", "2", "--extra-body", '{"chat_template_kwargs": {"x": 1}}'),
    ]
    proc = run_cli(
        "run",
        *("task.py@hot", "--model", "openai/m", "--model-base-url", openai_server.url),
        *flags,
        *("-o", tmp_path / "run"),
        cwd=tmp_path,
        env={"OPENAI_API_KEY": "k"},
    )
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    (request,) = openai_server.requests
    body = request.body
    assert (body["top_k"], body["top_p"], body["n"], body["best_of"]) == (5, 0.9, 2, 2)
    assert (body["frequency_penalty"], body["presence_penalty"]) == (0.5, -0.5)
    assert body["logit_bias"] == {"42": 10.0, "43": -10.0}
    assert body["stop"] == ["END", "STOP"]
    assert (body["logprobs"], body["top_logprobs"]) == (True, 2)
    assert body["chat_template_kwargs"] == {"x": 1}
    config = json.loads((tmp_path / "run" / "spec.json").read_text())["task"]["config"]
    assert config["top_k"] == 5 and config["logit_bias"] == {"42": 10.0, "43": -10.0}
    assert run_cli("verify", tmp_path / "run").returncode == EXIT_PASSED


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--logit-bias", "42:10", "'42:10' is not TOKEN_ID=BIAS"),
        ("--extra-body", "[1]", "not a JSON object"),
        ("--extra-body", "{", "not JSON"),
    ],
)
@pytest.mark.doc(
    "docs/cli.md",
    "A `--logit-bias` that is not `TOKEN_ID=BIAS` pairs, or an `--extra-body` that is not a "
    "JSON object, is exit 2.",
)
def test_a_malformed_flag_is_exit_2(tmp_path: Path, flag: str, value: str, said: str) -> None:
    (tmp_path / "task.py").write_text(TASK)
    proc = run_cli("run", "task.py@hot", "--model", "mock/m", flag, value, cwd=tmp_path)
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    assert said in proc.stderr


@pytest.mark.doc(
    "docs/cli.md",
    "A setting the model's provider has no field for (`--frequency-penalty` for "
    "`anthropic/…`, say) fails the unit before any call, with one line naming it (exit 2)",
)
def test_a_flag_anthropic_cannot_take_fails_the_unit_before_it_runs(
    server: tuple[str, Messages],
    tmp_path: Path,
) -> None:
    url, script = server
    (tmp_path / "task.py").write_text(TASK)
    proc = run_cli(
        *("run", "task.py@hot", "--model", "anthropic/claude-test", "-M", f"base_url={url}"),
        *("--frequency-penalty", "0.5", "--log-dir", tmp_path / "logs"),
        cwd=tmp_path,
    )
    # a setting refused is a configuration error: exit 2, as a malformed flag is
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()  # one line, the unit's error
    assert "the provider does not take frequency_penalty" in line
    assert script.requests == []
    assert not (tmp_path / "logs").exists()


def spec_digest(run: Path) -> str:
    return str(json.loads((run / "manifest.json").read_text())["spec_digest"])


def test_the_options_are_pinned_in_the_spec_digest(tmp_path: Path) -> None:
    task = Task(dataset=[Sample(input="hi", target="x")], scorer=exact())
    digests = []
    for index, setting in enumerate([{}, {"top_k": 5}, {"top_k": 6}, {"extra_body": {"a": 1}}]):
        (result,) = eval(task, model="mock/m", output=tmp_path / f"r{index}", **setting)
        assert result.status == "success", result.error
        digests.append(spec_digest(tmp_path / f"r{index}"))
    assert len(set(digests)) == 4
