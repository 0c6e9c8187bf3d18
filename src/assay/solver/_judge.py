"""The task's scorers, reachable from inside a solver while a trial runs.

An agent that lets the model try again after a wrong answer (``react(attempts=...)``,
``basic_agent(max_attempts=...)``) needs the judge the task itself uses, as Inspect's
agents do. The target that runs a Python task's solver chain binds the task's scorers
here for the duration of each trial; outside a trial nothing is bound and an agent that
needs a judge says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.model._bound import BoundScope, bound_now


def task_scorers() -> tuple[Any, ...]:
    """The scorers of the task whose trial runs in this context (empty outside one)."""
    return bound_now().scorers


def task_scorers_scope(scorers: Sequence[Any]) -> BoundScope[tuple[Any, ...]]:
    """Make *scorers* the current task's scorers inside the block."""
    return BoundScope("scorers", tuple(scorers))
