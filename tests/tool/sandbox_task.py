"""A Python task whose model uses the built-in tools in a real sandbox, run by
test_in_a_task.py through ``eval`` and the CLI.

The model is the mock provider, scripted by each sample's input (tests/scripted_tools.py:
a JSON list of turns of ``[tool, arguments]`` calls, then ``done: <last tool message>``).
The ``sandboxed`` solver makes the sample's sandbox itself and binds it around
``generate``.
"""

from __future__ import annotations

from typing import Any

from assay import Sample, Task, includes, solver, task, use_tools
from assay.model import (
    GenerateConfig,
    MockAPI,
    modelapi,
)
from assay.sandbox import make_sandbox, sandbox_scope
from assay.solver import Generate, Solver, TaskState
from assay.tool import bash, python, text_editor, think
from tests.scripted_tools import scripted_sample, scripted_turns

scripted = scripted_turns("mock/sandboxed")


@modelapi("scripted_sandbox")
def scripted_provider(name: str, config: GenerateConfig, **args: Any) -> MockAPI:
    return MockAPI(name, config, outputs=scripted)


@solver
def sandboxed(provider: str) -> Solver:
    """Run ``generate`` with a fresh sandbox of *provider* bound as ``sandbox()``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        async with make_sandbox(provider) as env:
            with sandbox_scope({"default": env}):
                return await generate(state)

    return solve


sample = scripted_sample


def samples(uid: int) -> list[Sample]:
    """The samples; *uid* is who the sandbox runs commands as."""
    return [
        sample(
            "write_then_run",
            [
                [["text_editor", {"command": "create", "path": "calc.py", "file_text": "x = 6\n"}]],
                [
                    ["think", {"thought": "append the print, then run it"}],
                    [
                        "text_editor",
                        {
                            "command": "insert",
                            "path": "calc.py",
                            "insert_line": 1,
                            "new_str": "print(x * 7)",
                        },
                    ],
                ],
                [["bash", {"cmd": "python3 calc.py"}]],
            ],
            "done: 42",
        ),
        sample("python", [[["python", {"code": "print(2 ** 10)"}]]], "done: 1024"),
        sample("who", [[["bash", {"cmd": "id -u; ls -A"}]]], f"done: {uid}\n"),
        sample("fails", [[["bash", {"cmd": "echo nope >&2; exit 3"}]]], "exited with code 3"),
        sample("too_slow", [[["bash", {"cmd": "sleep 100000"}]]], "timed out after 5 s"),
        sample(
            "no_match",
            [[["text_editor", {"command": "str_replace", "path": "x", "old_str": "a"}]]],
            "The path x does not exist",
        ),
    ]


@task
def sandbox_task(
    provider: str = "bwrap",
    uid: int = 65534,
    forever: str | None = None,
    time_limit: float | None = None,
) -> Task:
    """The samples above; with *forever* (a marker), one sample whose command (with no
    timeout of its own) runs until the trial's *time_limit* ends it."""
    # bash: 5 s, room for a Python to start in the sandbox on a loaded machine
    tools = use_tools(bash(timeout=5), python(timeout=30), text_editor(), think())
    dataset = samples(uid)
    if forever is not None:
        tools = use_tools(bash())
        dataset = [sample("forever", [[["bash", {"cmd": f"sleep 100000 # {forever}"}]]], "done")]
    return Task(
        dataset=dataset,
        time_limit=time_limit,
        solver=[tools, sandboxed(provider)],
        scorer=includes(),
        model="scripted_sandbox/agent",
        fail_on_error=False,
    )
