"""The network workload as an assay Python task: the overhead task without a model of
its own, run with ``--model openai/<name> --model-base-url http://127.0.0.1:PORT/v1``
against ``bench/server.py`` (an OpenAI-compatible server answering after 50 ms).

``network_nosocket`` is the same task with a model that answers after the same 50 ms
without a socket (the server's answer bytes, parsed by the openai provider's parser):
the harness with as many trials waiting as the network run, so that the difference
between the two is what the network path itself costs."""

from __future__ import annotations

import asyncio
from typing import Any

from assay import Sample, Task, generate, match, task
from assay.model import ChatMessage, GenerateConfig, ModelOutput, modelapi
from assay.model._openai_wire import parse_completion

LATENCY = 0.05
ANSWER = (
    b'{"choices":[{"message":{"role":"assistant","content":"%s"},"finish_reason":"stop"}],'
    b'"usage":{"prompt_tokens":2,"completion_tokens":2}}'
)


def questions(samples: int) -> list[Sample]:
    return [
        Sample(input=f"question {i}", target=f"question {i}", id=f"s{i:07d}")
        for i in range(samples)
    ]


@task
def network(samples: int = 1000) -> Task:
    """N questions sent to the model named on the command line, scored by ``match()``."""
    return Task(dataset=questions(samples), solver=[generate()], scorer=match())


class NoSocket:
    """Answers with the question after ``LATENCY`` seconds, as ``bench/server.py`` does,
    through a loop timer instead of a socket."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def generate(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
    ) -> ModelOutput:
        loop = asyncio.get_running_loop()
        answered = loop.create_future()
        loop.call_later(LATENCY, answered.set_result, None)
        await answered
        text = str(messages[-1].content).encode()
        return parse_completion(ANSWER % text, f"bench-nosocket/{self.name}")


@modelapi("bench-nosocket")
def nosocket_provider(name: str, config: GenerateConfig, **args: Any) -> NoSocket:
    """``bench-nosocket/<anything>``: the 50 ms answer without a socket."""
    return NoSocket(name)


@task
def network_nosocket(samples: int = 1000) -> Task:
    """The network task with the answer coming from a timer, not a server."""
    return Task(
        dataset=questions(samples),
        solver=[generate()],
        scorer=match(),
        model="bench-nosocket/v1",
    )
