"""assay: evaluate LLMs, agents and any program that answers inputs.

Every score points at the exact output bytes it judged, every digest can be re-derived
offline, and the release gate says ``inconclusive`` rather than guess.

The names below are the Python authoring API; each lives in the package of its pipeline
stage (``assay.dataset``, ``assay.solver``, ``assay.score`` ...) and is imported when
first used.
"""

__version__ = "0.1.0"

import sys as _sys
import types as _types
import typing as _typing

from assay._import_path import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:  # the same names, eagerly, for type checkers and editors
    from assay.agent import (
        AgentAttempts,
        basic_agent,
        handoff,
        react,
    )
    from assay.dataset import (
        MemoryDataset,
        Sample,
    )
    from assay.evidence import (
        record_event,
    )
    from assay.model import (
        GenerateConfig,
        Model,
        ModelOutput,
        get_model,
    )
    from assay.pipeline import (
        EvalResult,
        TaskSource,
        enqueue_task,
        eval,
        eval_async,
        eval_retry,
        eval_set,
    )
    from assay.report import (
        read_run,
    )
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
        Tool,
        ToolError,
        chain,
        chain_of_thought,
        generate,
        multiple_choice,
        prompt_template,
        self_critique,
        solver,
        system_message,
        tool,
        use_tools,
        user_message,
    )
    from assay.task import (
        Epochs,
        Task,
        task,
        task_with,
    )
    from assay.tool import (
        bash,
        python,
        text_editor,
        think,
    )

# Each public name and the package it lives in. They are imported on first use (PEP 562),
# so ``import assay`` and the CLI start fast; ``assay.eval`` then loads the pipeline.
_EXPORTS = {
    "AgentAttempts": "assay.agent",
    "basic_agent": "assay.agent",
    "handoff": "assay.agent",
    "react": "assay.agent",
    "MemoryDataset": "assay.dataset",
    "Sample": "assay.dataset",
    "record_event": "assay.evidence",
    "GenerateConfig": "assay.model",
    "Model": "assay.model",
    "ModelOutput": "assay.model",
    "get_model": "assay.model",
    "EvalResult": "assay.pipeline",
    "TaskSource": "assay.pipeline",
    "enqueue_task": "assay.pipeline",
    "eval": "assay.pipeline",
    "eval_async": "assay.pipeline",
    "eval_retry": "assay.pipeline",
    "eval_set": "assay.pipeline",
    "read_run": "assay.report",
    "CORRECT": "assay.score",
    "INCORRECT": "assay.score",
    "NOANSWER": "assay.score",
    "PARTIAL": "assay.score",
    "Score": "assay.score",
    "accuracy": "assay.score",
    "bootstrap_stderr": "assay.score",
    "choice": "assay.score",
    "exact": "assay.score",
    "f1": "assay.score",
    "includes": "assay.score",
    "match": "assay.score",
    "mean": "assay.score",
    "metric": "assay.score",
    "model_graded_fact": "assay.score",
    "model_graded_qa": "assay.score",
    "pattern": "assay.score",
    "python_tests": "assay.score",
    "scorer": "assay.score",
    "std": "assay.score",
    "stderr": "assay.score",
    "Generate": "assay.solver",
    "Solver": "assay.solver",
    "Target": "assay.solver",
    "TaskState": "assay.solver",
    "Tool": "assay.solver",
    "ToolError": "assay.solver",
    "chain": "assay.solver",
    "chain_of_thought": "assay.solver",
    "generate": "assay.solver",
    "multiple_choice": "assay.solver",
    "prompt_template": "assay.solver",
    "self_critique": "assay.solver",
    "solver": "assay.solver",
    "system_message": "assay.solver",
    "tool": "assay.solver",
    "use_tools": "assay.solver",
    "user_message": "assay.solver",
    "Epochs": "assay.task",
    "Task": "assay.task",
    "task": "assay.task",
    "task_with": "assay.task",
    "bash": "assay.tool",
    "python": "assay.tool",
    "text_editor": "assay.tool",
    "think": "assay.tool",
}


# each public name imported from its package the first time it is asked for
__getattr__ = _lazy_exports(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


class _Package(_types.ModuleType):
    """``assay.task``, ``assay.solver``, ``assay.tool`` and ``assay.scorer`` are the
    decorators users write; importing the subpackages of the same names binds those
    modules on this one, which must not hide the decorators (``import assay.task`` still
    finds the package in ``sys.modules``)."""

    def __setattr__(self, name: str, value: _typing.Any) -> None:
        if name in ("task", "solver", "tool", "scorer") and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


__all__ = [
    "CORRECT",
    "INCORRECT",
    "NOANSWER",
    "PARTIAL",
    "AgentAttempts",
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
    "Tool",
    "ToolError",
    "__version__",
    "accuracy",
    "bash",
    "basic_agent",
    "bootstrap_stderr",
    "chain",
    "chain_of_thought",
    "choice",
    "enqueue_task",
    "eval",
    "eval_async",
    "eval_retry",
    "eval_set",
    "exact",
    "f1",
    "generate",
    "get_model",
    "handoff",
    "includes",
    "match",
    "mean",
    "metric",
    "model_graded_fact",
    "model_graded_qa",
    "multiple_choice",
    "pattern",
    "prompt_template",
    "python",
    "python_tests",
    "react",
    "read_run",
    "record_event",
    "scorer",
    "self_critique",
    "solver",
    "std",
    "stderr",
    "system_message",
    "task",
    "task_with",
    "text_editor",
    "think",
    "tool",
    "use_tools",
    "user_message",
]
