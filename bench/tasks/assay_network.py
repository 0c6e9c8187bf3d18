"""The network workload as an assay Python task: the overhead task without a model of
its own, run with ``--model openai/<name> --model-base-url http://127.0.0.1:PORT/v1``
against ``bench/server.py`` (an OpenAI-compatible server answering after 50 ms)."""

from __future__ import annotations

from assay import Sample, Task, generate, match, task


@task
def network(samples: int = 1000) -> Task:
    """N questions sent to the model named on the command line, scored by ``match()``."""
    dataset = [
        Sample(input=f"question {i}", target=f"question {i}", id=f"s{i:07d}")
        for i in range(samples)
    ]
    return Task(dataset=dataset, solver=[generate()], scorer=match())
