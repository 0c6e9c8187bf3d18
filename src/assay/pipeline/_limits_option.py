"""``eval(task, message_limit=..., token_limit=...)``: sample limits for every task of
the eval, as Inspect's eval-level limits. They win over each task's own; the caller's
task is left as it was, and the run records them so ``resume`` applies them again."""

from __future__ import annotations

import copy
from typing import Any

from assay.model import Limits
from assay.task import Task, task_with

LIMIT_FIELDS = frozenset(Limits.__struct_fields__)


def with_limits(task: Task, limits: dict[str, Any]) -> Task:
    """*task* with *limits* instead of its own of those names (a copy when any)."""
    return task_with(copy.copy(task), **limits) if limits else task
