"""An agent in a sandbox: find the parts of an access code hidden in files, add them up.

    assay run examples/agent/task.py@hidden_code                      # scripted, offline
    assay run examples/agent/task.py@hidden_code --model local/smollm2
    assay run examples/agent/task.py@hidden_code --model openai/NAME --model-base-url URL

Each sample gets its own bubblewrap sandbox (``sandbox="bwrap"``) with a few files
placed in ``notes/``: two of them hold a line ``part: N`` among other lines. The agent,
``react()`` with ``bash()`` and ``python()``, must find both parts, add them and
``submit()`` the sum. Every command it runs is in the run's evidence (``tool_call``,
``sandbox_exec``); ``assay show RUN --trial ID`` prints the conversation turn by turn.

The default model, ``sleuth/v1``, is the mock provider scripted to solve it as an agent
would: ``grep`` the notes with ``bash``, add the parts with ``python``, submit. The
packaged ``local/smollm2`` (135M parameters) does not call tools: it answers in prose,
never submits, and the run ends at the message limit with every sample failed — a
real model that calls tools decides for itself.
"""

from __future__ import annotations

import random
import re
from typing import Any

from assay import Sample, Task, includes, task
from assay.agent import react
from assay.model import (
    ChatMessage,
    GenerateConfig,
    MockAPI,
    ModelOutput,
    ToolCall,
    assistant_message,
    modelapi,
)
from assay.tool import bash, python

PROMPT = (
    "The files under notes/ hide an access code in two parts, each on a line 'part: N'. "
    "Find both parts, add them up and submit the sum (a number only)."
)
FILLER = [
    "meeting moved to thursday",
    "remember the milk",
    "the printer on floor 2 is broken",
    "lunch: noodles",
    "ticket 4411 closed",
]


def _sample(index: int) -> Sample:
    """Sample *index*: four notes, two of them holding a part (seeded, so reproducible)."""
    rng = random.Random(index)
    parts = [rng.randint(10, 99), rng.randint(10, 99)]
    files = {f"notes/note{n}.txt": "\n".join(rng.sample(FILLER, 3)) + "\n" for n in range(4)}
    for number, part in zip(rng.sample(range(4), 2), parts, strict=True):
        files[f"notes/note{number}.txt"] += f"part: {part}\n"
    question = "What is the access code hidden in notes/?"
    return Sample(input=question, target=str(sum(parts)), id=f"code-{index}", files=files)


def sleuth(messages: list[ChatMessage]) -> ModelOutput:
    """The scripted agent: grep the notes, add the parts in Python, submit the sum."""
    results = [m.content for m in messages if m.role == "tool"]
    if not results:
        call = ToolCall("call_1", "bash", {"cmd": "grep -rh '^part:' notes/"})
    elif len(results) == 1:
        numbers = re.findall(r"part: (\d+)", results[0])
        code = f"print({' + '.join(numbers) or '0'})"
        call = ToolCall("call_2", "python", {"code": code})
    else:
        call = ToolCall("call_3", "submit", {"answer": results[-1].strip()})
    return ModelOutput("sleuth", assistant_message("", [call]), "tool_calls")


@modelapi("sleuth")
def sleuth_provider(name: str, config: GenerateConfig, **args: Any) -> MockAPI:
    """``sleuth/<anything>``: the mock provider answering with ``sleuth``."""
    return MockAPI(name, config, outputs=sleuth)


@task
def hidden_code(count: int = 3) -> Task:
    return Task(
        dataset=[_sample(i) for i in range(count)],
        solver=react(prompt=PROMPT, tools=[bash(timeout=30), python(timeout=30)]),
        scorer=includes(),
        sandbox="bwrap",
        model="sleuth/v1",
        config=GenerateConfig(max_tokens=128),  # short turns: a small model's context is 2,048
        message_limit=12,
    )
