"""Tasks: ``Task``, the ``@task`` registry, ``task_with`` and ``Epochs``."""

from assay.task._epochs import Epochs
from assay.task._load import find_tasks, load_module, load_tasks, task_factories
from assay.task._task import Task, task, task_with

__all__ = [
    "Epochs",
    "Task",
    "find_tasks",
    "load_module",
    "load_tasks",
    "task",
    "task_factories",
    "task_with",
]
