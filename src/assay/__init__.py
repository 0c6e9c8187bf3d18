"""assay: evaluate LLMs, agents and any program that answers inputs.

Every score points at the exact output bytes it judged, every digest can be re-derived
offline, and the release gate says ``inconclusive`` rather than guess.

The names below are the Python authoring API; each lives in the package of its pipeline
stage (``assay.dataset``, ``assay.solver``, ``assay.score`` ...).
"""

__version__ = "0.1.0"

from assay.dataset import MemoryDataset, Sample
from assay.evidence import record_event
from assay.model import GenerateConfig, Model, ModelOutput, get_model
from assay.pipeline import EvalResult, TaskSource, enqueue_task, eval, eval_async
from assay.score import (
    CORRECT,
    INCORRECT,
    NOANSWER,
    PARTIAL,
    Score,
    accuracy,
    bootstrap_stderr,
    choice,
    exact,
    f1,
    includes,
    match,
    mean,
    metric,
    model_graded_fact,
    model_graded_qa,
    pattern,
    python_tests,
    scorer,
    std,
    stderr,
)
from assay.solver import (
    Generate,
    Solver,
    Target,
    TaskState,
    chain,
    chain_of_thought,
    generate,
    multiple_choice,
    prompt_template,
    self_critique,
    solver,
    system_message,
    user_message,
)
from assay.task import Epochs, Task, task, task_with

__all__ = [
    "CORRECT",
    "INCORRECT",
    "NOANSWER",
    "PARTIAL",
    "Epochs",
    "EvalResult",
    "Generate",
    "GenerateConfig",
    "MemoryDataset",
    "Model",
    "ModelOutput",
    "Sample",
    "Score",
    "Solver",
    "Target",
    "Task",
    "TaskSource",
    "TaskState",
    "__version__",
    "accuracy",
    "bootstrap_stderr",
    "chain",
    "chain_of_thought",
    "choice",
    "enqueue_task",
    "eval",
    "eval_async",
    "exact",
    "f1",
    "generate",
    "get_model",
    "includes",
    "match",
    "mean",
    "metric",
    "model_graded_fact",
    "model_graded_qa",
    "multiple_choice",
    "pattern",
    "prompt_template",
    "python_tests",
    "record_event",
    "scorer",
    "self_critique",
    "solver",
    "std",
    "stderr",
    "system_message",
    "task",
    "task_with",
    "user_message",
]
