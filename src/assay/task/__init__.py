"""Tasks: ``Task``, the ``@task`` registry, ``task_with`` and ``Epochs``."""

from assay.task._epochs import Epochs
from assay.task._task import Task, task, task_with

__all__ = ["Epochs", "Task", "task", "task_with"]
