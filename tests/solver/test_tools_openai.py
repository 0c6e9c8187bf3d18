"""The tool loop through the real openai provider and SDK, against the OpenAI-compatible
server on 127.0.0.1: the tool's schema and ``tool_choice`` go out on the wire, the
model's call comes back as JSON text, the tool's answer goes out as a ``tool`` message,
and the run verifies and re-scores to the same scores without a request."""

from __future__ import annotations

import json
from pathlib import Path

from assay.evidence import verify_run
from assay.pipeline import eval as run_eval
from assay.pipeline import rescore_run
from tests.helpers import bundles_by_sample, read_jsonl, state_of
from tests.servers.openai_compat import OpenAICompatServer

TASK = '''
from assay import Sample, Task, generate, includes, task, tool, use_tools


@tool
def shout(text: str) -> str:
    """Say the text louder.

    Args:
        text: what to say.
    """
    return text.upper()


@task
def loud(tool_choice: str = "auto") -> Task:
    return Task(
        dataset=[Sample(input="hello there", target="HELLO THERE", id="hi")],
        solver=[use_tools(shout, tool_choice=tool_choice), generate()],
        scorer=includes(ignore_case=False),
    )
'''


def run_loud(tmp_path: Path, server: OpenAICompatServer, **task_args: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    task_file = tmp_path / "loud.py"
    task_file.write_text(TASK)
    (result,) = run_eval(
        f"{task_file}@loud",
        model="openai/tiny",
        model_base_url=server.url,
        task_args=task_args,
        log_dir=tmp_path / "runs",
    )
    assert result.status == "success", result.error
    assert result.path is not None
    return result.path


def test_a_tool_loop_through_the_openai_sdk(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    run = run_loud(tmp_path, openai_server)
    first, second = (seen.body for seen in openai_server.requests)
    assert first["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "shout",
                "description": "Say the text louder.",
                "parameters": {
                    "type": "object",
                    "properties": {"text": {"description": "what to say.", "type": "string"}},
                    "required": ["text"],
                    "additionalProperties": False,
                },
            },
        }
    ]
    assert first["tool_choice"] == "auto"
    asked, answered = second["messages"][1:]
    assert asked["tool_calls"][0]["function"]["name"] == "shout"
    assert json.loads(asked["tool_calls"][0]["function"]["arguments"]) == {"text": "hello there"}
    assert answered == {"role": "tool", "content": "HELLO THERE", "tool_call_id": "call_1"}

    state = state_of(run, bundles_by_sample(run)["hi"])
    assert state["output"]["message"]["content"] == "the tool said: HELLO THERE"
    (score,) = read_jsonl(run / "scores.jsonl")
    assert score["status"] == "passed"
    assert verify_run(run).ok
    requests = len(openai_server.requests)
    assert rescore_run(run).differing == []
    assert len(openai_server.requests) == requests  # re-scoring asked no model


def test_tool_choice_goes_out_as_openai_spells_it(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    run_loud(tmp_path / "named", openai_server, tool_choice="shout")
    forced, after = (seen.body["tool_choice"] for seen in openai_server.requests)
    assert forced == {"type": "function", "function": {"name": "shout"}}
    assert after == "auto"

    run_loud(tmp_path / "any", openai_server, tool_choice="any")
    forced, after = (seen.body["tool_choice"] for seen in openai_server.requests[2:])
    assert forced == "required" and after == "auto"

    run = run_loud(tmp_path / "none", openai_server, tool_choice="none")
    (last,) = openai_server.requests[4:]
    assert last.body["tool_choice"] == "none"
    state = state_of(run, bundles_by_sample(run)["hi"])
    assert state["output"]["message"]["content"] == "echo: hello there"  # no tool called
